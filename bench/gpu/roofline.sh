#!/bin/sh
# Tunes each template briefly, profiles its winner (hardware counters through
# CUPTI: `ktune profile --top 1`) and prints the roofline table of
# docs/benchmarks.md: the winner's time, the DRAM bandwidth its counters give
# at ktune's time next to the bandwidth the spec's metric implies, achieved
# against theoretical occupancy, FLOP per byte, the bounding roof and how close
# the winner comes to it, and what profiling cost.
#
#   bench/gpu/roofline.sh KTUNE OUT_DIR TIME_LIMIT TEMPLATE...
#
# Every measurement goes to OUT_DIR/ktune.db (the roofs, measured once, too).
# TIME_LIMIT 0 skips tuning: the winners already in OUT_DIR/ktune.db are
# profiled again.
set -u
KTUNE=$1; OUT=$2; LIMIT=$3; shift 3
export KTUNE_CACHE_DIR=${KTUNE_CACHE_DIR:-/tmp/ktune-cache}
mkdir -p "$OUT"
date -u +"date: %Y-%m-%dT%H:%M:%SZ"
for t in "$@"; do
  if [ "$LIMIT" != 0 ]; then
    timeout 300 "$KTUNE" tune "templates/$t/$t.yaml" --time-limit "$LIMIT" --db "$OUT/ktune.db" --json \
      > "$OUT/$t.json" 2> "$OUT/$t.err"
  fi
  timeout 120 "$KTUNE" profile "templates/$t/$t.yaml" --top 1 --db "$OUT/ktune.db" --json > "$OUT/$t.profile.json" 2>> "$OUT/$t.err"
  echo "$t rc=$?" >&2
done
python3 - "$OUT" "$@" <<'PY'
import json, sys
out = sys.argv[1]
roofs = None
rows = []
for t in sys.argv[2:]:
    try:
        p = json.load(open(f"{out}/{t}.profile.json"))
    except Exception as e:
        print(f"{t:11} no profile ({e})"); continue
    n = sum(1 for _ in p["profiled"])  # replaced below by the series size when the tune summary is there
    try:
        n = json.load(open(f"{out}/{t}.json"))["evaluations"]
    except Exception:
        n = "-"

    roofs = p["limits"]
    r = p["profiled"][0]
    c, rf, m = r["counters"], r.get("roofline", {}), r["metrics"]
    spec_gbs = m.get("GB/s")
    spec_tflops = m.get("TFLOP/s")
    ctr_gbs = rf.get("dram_gbs")
    ratio = f"{ctr_gbs / spec_gbs:.3f}" if ctr_gbs and spec_gbs else "-"
    fpb = rf.get("flop_per_byte")
    gf = rf.get("gflops")
    fratio = f"{gf / (spec_tflops * 1000):.3f}" if gf and spec_tflops else "-"
    print_row = (t, n, r["time_ms"], ctr_gbs, spec_gbs, ratio, c["dram_util"], c["achieved_occupancy"],
                 r["occupancy"], fpb, gf, fratio, rf.get("bound"), rf.get("of_roof"), r["profile_s"])
    rows.append(print_row)
if roofs:
    print(f"roofs: copy {roofs['copy_gbs']:.0f} GB/s, FP32 {roofs['fp32_gflops']:.0f} GFLOP/s")
f = lambda v, d=1: "-" if v is None else f"{v:.{d}f}"
print("| template | evals | best ms | DRAM GB/s (counters) | GB/s (spec metric) | ratio | DRAM util | occupancy achieved / theoretical | FLOP/B | GFLOP/s (counters) | of spec's TFLOP/s | bound | of roof | profile s |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- | ---: | ---: |")
for (t, n, ms, cg, sg, ratio, du, ao, to, fpb, gf, fratio, bound, ofr, ps) in rows:
    print(f"| {t} | {n} | {ms:.4f} | {f(cg,0)} | {f(sg,0)} | {ratio} | {f(du*100 if du is not None else None)}% | {f(ao,2)} / {f(to,2)} | {f(fpb,2)} | {f(gf,0)} | {fratio} | {bound or '-'} | {f(ofr*100 if ofr is not None else None)}% | {ps:.2f} |")
PY
