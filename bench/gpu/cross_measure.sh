#!/bin/sh
# Cross-measurement on the GPU of this host: measures here the fastest
# configurations other devices recorded for a kernel (`ktune tune SPEC
# --configs-from DEVICE --top N`), then compares (`ktune compare`): each
# device's optimum, the portability matrix, the most portable configuration.
#
#   bench/gpu/cross_measure.sh SPEC DB [--from DEVICE]... [-- ktune tune options]
#
# DB is a ktune database holding the other devices' results (`ktune import` of
# their Kernel Tuner caches, or their own tuning runs). Without --from, every
# device that DB holds the kernel for, other than this GPU, is measured from.
# Writes compare_<kernel>.json into $OUT (default: DB's folder) and prints the
# comparison. KTUNE (default build/ktune) and TOP (default 10) may be set.
#
#   bench/gpu/cross_measure.sh --templates DIR [TEMPLATE...]
#
# The H100 / H200 cross-measurement of ktune's templates: per template a
# database DIR/<template>.db holding the two exhaustive recordings of
# examples/data under the names "NVIDIA H100 80GB HBM3 (recorded)" and
# "NVIDIA H200 (recorded)" (imported on first use), and this GPU's live
# measurements of both recordings' TOP fastest. Run it on an H100 and then,
# with DIR carried over, on an H200; after the second run each template's
# comparison of the two live series is printed (and written to
# DIR/compare_<template>.json), and DIR/summary.md holds one table row per
# template (python3 writes it when present).
#
# The A100 / H100 / H200 comparison of the convolution kernel of
# ../shared/data/a100-convolution (an A100's exhaustive recording, not in the
# repository) is docs/benchmarks.md's recipe; this script is its third step.
set -u
KTUNE=${KTUNE:-build/ktune}
TOP=${TOP:-10}
export KTUNE_CACHE_DIR=${KTUNE_CACHE_DIR:-/tmp/ktune-cache}
root=$(cd "$(dirname "$0")/../.." && pwd)

die() { echo "cross_measure: $*" >&2; exit 2; }

# The name of GPU 0 here, as `ktune devices --json` gives it.
this_gpu() { "$KTUNE" devices --json | sed -n 's/^ *"name": *"\([^"]*\)".*/\1/p' | head -1; }

# One spec: measure the others' fastest here, then compare.
cross_one() {
  spec=$1; db=$2; shift 2
  froms=""
  while [ $# -gt 0 ]; do
    case $1 in
      --from) [ $# -ge 2 ] || die "--from needs a device"; froms="$froms$2
"; shift 2 ;;
      --) shift; break ;;
      *) die "unknown argument '$1' (options of ktune tune go after --)" ;;
    esac
  done
  here=$(this_gpu)
  [ -n "$here" ] || die "no GPU here (ktune devices)"
  if [ -z "$froms" ]; then
    froms=$("$KTUNE" best "$spec" --db "$db" --json | sed -n 's/^ *"device": *"\([^"]*\)".*/\1/p' |
            grep -v -x -F "$here" | sort -u)
  fi
  [ -n "$froms" ] || die "$db holds no other device's results of $spec's kernel"
  echo "cross_measure: on $here, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "$froms" | while IFS= read -r from; do
    [ -n "$from" ] || continue
    echo "== the $TOP fastest of $from, measured on $here"
    "$KTUNE" tune "$spec" --configs-from "$from" --top "$TOP" --db "$db" "$@" || echo "cross_measure: tune exit $?"
  done
  kernel=$("$KTUNE" compare "$spec" --db "$db" --json | sed -n 's/^  "kernel": *"\([^"]*\)".*/\1/p' | head -1)
  out=${OUT:-$(dirname "$db")}
  "$KTUNE" compare "$spec" --db "$db" --json > "$out/compare_${kernel:-kernel}.json"
  "$KTUNE" compare "$spec" --db "$db"
}

templates() {
  dir=$1; shift
  mkdir -p "$dir"
  list=$*
  [ -n "$list" ] || list=$(ls "$root"/examples/data/*_h100.json | sed 's|.*/||; s|_h100.json$||')
  here=$(this_gpu)
  [ -n "$here" ] || die "no GPU here (ktune devices)"
  for t in $list; do
    case $t in gemm_bf16_10k) spec=$root/bench/gpu/specs/gemm_bf16_10k.yaml ;; *) spec=$root/templates/$t/$t.yaml ;; esac
    db=$dir/$t.db
    if [ ! -f "$db" ]; then
      "$KTUNE" import "$root/examples/data/${t}_h100.json" --device "NVIDIA H100 80GB HBM3 (recorded)" --db "$db" &&
      "$KTUNE" import "$root/examples/data/${t}_h200.json" --device "NVIDIA H200 (recorded)" --db "$db" ||
        die "cannot import the recordings of $t"
    fi
    for from in "NVIDIA H100 80GB HBM3 (recorded)" "NVIDIA H200 (recorded)"; do
      echo "== $t: the $TOP fastest of $from, measured on $here"
      "$KTUNE" tune "$spec" --configs-from "$from" --top "$TOP" --db "$db" || echo "cross_measure: $t tune exit $?"
    done
    # Both live series, by their exact names (a part of a name would find a recording).
    live=$("$KTUNE" best "$spec" --db "$db" --json | sed -n 's/^ *"device": *"\([^"]*\)".*/\1/p' |
           grep -c -x -e "NVIDIA H100 80GB HBM3" -e "NVIDIA H200")
    if [ "$live" -ge 2 ]; then
      "$KTUNE" compare "$spec" --devices "NVIDIA H100 80GB HBM3,NVIDIA H200" --db "$db" --json > "$dir/compare_$t.json"
      "$KTUNE" compare "$spec" --devices "NVIDIA H100 80GB HBM3,NVIDIA H200" --db "$db"
    else
      echo "$t: measured on $here; the other GPU's live series is still missing (run this on it with $dir)"
    fi
  done
  command -v python3 >/dev/null 2>&1 || return 0
  python3 - "$dir" <<'EOF'
import glob, json, os, sys
d = sys.argv[1]
rows = ["| template | H100 optimum ms | H200 optimum ms | H100's optimum on the H200 | H200's optimum on the H100 "
        "| most portable | worst | PP |", "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |"]
for f in sorted(glob.glob(os.path.join(d, "compare_*.json"))):
    j = json.load(open(f))
    dev, m, p = j["devices"], j["matrix"], j["portable"]
    cell = lambda v: "%.3f" % v if v is not None else "not measured"
    port = ",".join(str(v) for v in p["config"].values()) if p else "none"
    rows.append("| %s | %.4f | %.4f | %s | %s | %s | %s | %s |" % (
        os.path.basename(f)[8:-5], dev[0]["best"]["time_ms"], dev[1]["best"]["time_ms"], cell(m[0][1]),
        cell(m[1][0]), port, "%.3f" % p["worst"] if p else "-", "%.3f" % p["pp"] if p else "-"))
open(os.path.join(d, "summary.md"), "w").write("\n".join(rows) + "\n")
print("\n".join(rows))
EOF
}

[ $# -ge 1 ] || die "usage: $0 SPEC DB [--from DEVICE]... [-- tune options] | $0 --templates DIR [TEMPLATE...]"
"$KTUNE" --version >/dev/null 2>&1 || die "no ktune at $KTUNE (set KTUNE)"
if [ "$1" = --templates ]; then
  [ $# -ge 2 ] || die "--templates needs a folder"
  shift
  templates "$@"
else
  [ $# -ge 2 ] || die "usage: $0 SPEC DB [--from DEVICE]... [-- tune options]"
  cross_one "$@"
fi
