#!/bin/sh
# Predicted scaling over GPUs at a wall-clock budget, from recorded data.
# Every space of a manifest (LABEL SPEC DATA [DEVICE], paths relative to the
# manifest's folder, or to ROOT when set) is replayed by
#   ktune tune SPEC --simulate DATA --time-limit LIMIT --workers N --compile-slots P
# for N in WORKERS and each strategy, seed 1, no prior, spares on (the
# default). The replay's clock (search/strategy/replay_clock.h) plays the
# recorded compile and GPU times out on N GPUs and P compile processes.
# Two hosts are modelled: HOSTS=one, one host of SLOTS processes whatever N
# (P = SLOTS); HOSTS=per-gpu, a host of SLOTS processes per GPU (P = SLOTS x N:
# MPI ranks on several hosts, their compile processes pooled).
# Per run: evaluations, their rate (evaluations / predicted wall), the GPUs'
# busy share, and the fraction of the recording's optimum found. Per N > 1:
# the efficiency E(N) = rate(N) / (N x rate(1)).
#
#   bench/replay/scaling.sh [KTUNE] [MANIFEST]     (run from the repository root)
#   ROOT=hub HOSTS=per-gpu LIMIT=30s bench/replay/scaling.sh build/ktune bench/replay/heldout.manifest
set -eu
BIN=${1:-build/ktune}
MANIFEST=${2:-examples/data/design.manifest}
WORKERS=${WORKERS:-"1 2 4 8"}
LIMIT=${LIMIT:-30s}
SLOTS=${SLOTS:-16}
HOSTS=${HOSTS:-one}
STRATEGIES=${STRATEGIES:-"default brute_force random_sample"}
ROOT=${ROOT:-$(dirname "$MANIFEST")}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
case "$HOSTS" in one | per-gpu) ;; *) echo "HOSTS: one or per-gpu" >&2; exit 2 ;; esac

date -u +"date: %Y-%m-%dT%H:%M:%SZ"
echo "host: $(uname -n), $(nproc) cores; ktune $("$BIN" --version 2>/dev/null || echo '?')"
echo "manifest $MANIFEST, LIMIT=$LIMIT WORKERS=\"$WORKERS\" HOSTS=$HOSTS SLOTS=$SLOTS"

grep -v '^[[:space:]]*#' "$MANIFEST" | grep -v '^[[:space:]]*$' | while read -r label spec data device; do
  for strategy in $STRATEGIES; do
    for n in $WORKERS; do
      p=$SLOTS
      [ "$HOSTS" = per-gpu ] && p=$((SLOTS * n))
      set -- --seed 1 --no-prior --max-fevals 0 --time-limit "$LIMIT" --workers "$n" --compile-slots "$p" --json \
        --db "$OUT/run.db"
      [ "$strategy" = default ] || set -- "$@" --strategy "$strategy"
      [ -n "${device:-}" ] && set -- "$@" --device "$device"
      "$BIN" tune "$ROOT/$spec" --simulate "$ROOT/$data" "$@" 2>/dev/null |
        python3 -c 'import json,sys
j = json.load(sys.stdin)
p = j["parallel"]
print(json.dumps({"space": sys.argv[1], "strategy": sys.argv[2], "workers": j["workers"],
                  "evaluations": j["evaluations"], "wall": p["wall_s"], "busy": p["busy_s"],
                  "found": j.get("fraction_of_recorded_optimum") or 0.0}))' \
          "$label" "$strategy" >> "$OUT/rows.jsonl"
      rm -f "$OUT/run.db"
    done
  done
done

python3 - "$OUT/rows.jsonl" "$WORKERS" "$STRATEGIES" <<'EOF'
import json, sys
from collections import defaultdict
rows = [json.loads(l) for l in open(sys.argv[1])]
ns = [int(n) for n in sys.argv[2].split()]
strategies = sys.argv[3].split()
def fraction(r):
    return r["found"]
runs = defaultdict(dict)
for r in rows:
    runs[(r["space"], r["strategy"])][r["workers"]] = r
more = [n for n in ns if n != ns[0]]
head = ("| space | strategy | evals (1) | busy (1) | found (1) |" +
        "".join(f" evals ({n}) | E({n}) | busy ({n}) | found ({n}) |" for n in more))
print(head)
print("|" + " --- |" * (head.count("|") - 1))
eff = defaultdict(list)
found = defaultdict(list)
for (space, strategy), by_n in runs.items():
    one = by_n[ns[0]]
    rate1 = one["evaluations"] / one["wall"] if one["wall"] > 0 else 0
    cells = []
    for n in more:
        r = by_n[n]
        rate = r["evaluations"] / r["wall"] if r["wall"] > 0 else 0
        e = rate / (n / ns[0] * rate1) if rate1 > 0 else 0
        eff[(strategy, n)].append(e)
        found[(strategy, n)].append(fraction(r))
        cells.append(f" {r['evaluations']} | {e:.2f} | {r['busy'] / (n * r['wall']):.2f} | {fraction(r):.3f} |")
    found[(strategy, ns[0])].append(fraction(one))
    print(f"| {space} | {strategy} | {one['evaluations']} | {one['busy'] / (ns[0] * one['wall']):.2f} | "
          f"{fraction(one):.3f} |" + "".join(cells))
print()
print("| strategy | found (1) mean |" + "".join(f" E({n}) mean | E({n}) min | found ({n}) mean |" for n in more))
print("| --- | --- |" + " --- | --- | --- |" * len(more))
for s in strategies:
    f1 = found[(s, ns[0])]
    cells = []
    for n in more:
        v = eff[(s, n)]
        f = found[(s, n)]
        cells.append(f" {sum(v) / len(v):.2f} | {min(v):.2f} | {sum(f) / len(f):.3f} |")
    print(f"| {s} | {sum(f1) / len(f1):.3f} |" + "".join(cells))
EOF
