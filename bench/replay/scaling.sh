#!/bin/sh
# Predicted scaling over GPUs, from recorded data: every exhaustive recording
# in examples/data (and, where present, the A100 recording in .ext/a100-conv)
# is replayed by `ktune tune --simulate DATA --workers N` for N in WORKERS,
# per strategy: brute_force over the whole space, random_sample and the
# default (model_rank) with a budget of FEVALS evaluations, seed 1, no prior.
# Each run lays the recorded compile and benchmark times on a virtual clock
# per simulated GPU (tuner/tune/pool_evaluator.h). Prints one row per dataset
# and strategy: the predicted wall time on one GPU, and per N the predicted
# wall time and the efficiency T(1) / (N x T(N)); then the mean and the
# lowest efficiency per strategy and N. Wall = the evaluations' virtual wall +
# the strategy's real time between batches on this host (strategy_s).
#
#   bench/replay/scaling.sh [KTUNE]          (default build/ktune; run from the repository root)
#   FEVALS=200 WORKERS="1 2 4 8" EXT=.ext bench/replay/scaling.sh
set -eu
BIN=${1:-build/ktune}
FEVALS=${FEVALS:-200}
WORKERS=${WORKERS:-"1 2 4 8"}
EXT=${EXT:-.ext}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

date -u +"date: %Y-%m-%dT%H:%M:%SZ"
echo "host: $(uname -n), $(nproc) cores; ktune $("$BIN" --version 2>/dev/null || echo '?')"
echo "FEVALS=$FEVALS WORKERS=\"$WORKERS\""

# dataset name, spec, recording
datasets() {
  for data in examples/data/*_h100.json examples/data/*_h200.json; do
    base=$(basename "$data" .json)
    t=${base%_h[12]00}
    case "$t" in
      gemm_bf16_10k) spec=bench/gpu/specs/gemm_bf16_10k.yaml ;;
      *) spec=templates/$t/$t.yaml ;;
    esac
    echo "$base $spec $data"
  done
  if [ -f "$EXT/a100-conv/A100.json.gz" ]; then
    echo "convolution_milo_a100 $EXT/a100-conv/convolution_milo.json $EXT/a100-conv/A100.json.gz"
  fi
}

datasets | while read -r name spec data; do
  for strategy in brute_force random_sample model_rank; do
    budget=$FEVALS
    [ "$strategy" = brute_force ] && budget=0
    for n in $WORKERS; do
      db="$OUT/$name-$strategy-$n.db"
      "$BIN" tune "$spec" --simulate "$data" --strategy "$strategy" --max-fevals "$budget" --seed 1 --no-prior \
        --workers "$n" --json --db "$db" 2>/dev/null |
        python3 -c 'import json,sys
j = json.load(sys.stdin)
p = j["parallel"]
print(json.dumps({"dataset": sys.argv[1], "strategy": sys.argv[2], "workers": j["workers"],
                  "evaluations": j["evaluations"], "wall": p["wall_s"], "eval_wall": p["evaluation_wall_s"],
                  "strategy_s": p["strategy_s"], "best": j["best"][0]["objective"] if j["best"] else None}))' \
          "$name" "$strategy" >> "$OUT/rows.jsonl"
      rm -f "$db"
    done
  done
done

python3 - "$OUT/rows.jsonl" "$WORKERS" <<'EOF'
import json, sys
from collections import defaultdict
rows = [json.loads(l) for l in open(sys.argv[1])]
ns = [int(n) for n in sys.argv[2].split()]
runs = defaultdict(dict)
for r in rows:
    runs[(r["dataset"], r["strategy"])][r["workers"]] = r
head = "| dataset | strategy | evals | T(1) s |" + "".join(f" T({n}) s | E({n}) |" for n in ns if n > 1)
print(head)
print("|" + " --- |" * (head.count("|") - 1))
eff = defaultdict(list)
for (dataset, strategy), by_n in runs.items():
    one = by_n[ns[0]]
    t1 = one["wall"]
    cells = []
    for n in ns:
        if n == ns[0]:
            continue
        r = by_n[n]
        assert r["evaluations"] == one["evaluations"] and r["best"] == one["best"], (dataset, strategy, n)
        e = t1 / (n * r["wall"]) if r["wall"] > 0 else 0
        eff[(strategy, n)].append(e)
        cells.append(f" {r['wall']:.1f} | {e:.3f} |")
    print(f"| {dataset} | {strategy} | {one['evaluations']} | {t1:.1f} |" + "".join(cells))
print()
print("| strategy |" + "".join(f" E({n}) mean | E({n}) min |" for n in ns if n > 1))
print("| --- |" + " --- | --- |" * len([n for n in ns if n > 1]))
for strategy in ("brute_force", "random_sample", "model_rank"):
    cells = []
    for n in ns:
        if n == ns[0]:
            continue
        v = eff[(strategy, n)]
        cells.append(f" {sum(v) / len(v):.3f} | {min(v):.3f} |")
    print(f"| {strategy} |" + "".join(cells))
EOF
