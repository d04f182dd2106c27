#!/bin/sh
# Real tuning runs (not replays) of search strategies on the GPU of this host:
# each strategy and seed tunes SPEC with a budget of FEVALS measured
# configurations, from an empty cubin cache and an empty database, so the wall
# time includes every compile (the compile features model_rank and auto ask
# for included). Prints per run the evaluations, wall time, best objective and,
# given OPTIMUM (e.g. the recorded exhaustive optimum), the fraction of it.
# A strategy written NAME+prior runs with --prior "$PRIOR" (the same kernel
# recorded on another GPU); every other runs with --no-prior. NAME@B runs
# with --batch B (configurations per proposal; default 8 on a GPU).
#
#   bench/gpu/strategies.sh KTUNE OUT SPEC FEVALS OPTIMUM "SEEDS" STRATEGY...
#   e.g. bench/gpu/strategies.sh build/ktune out bench/gpu/specs/gemm_bf16_10k.yaml 100 352.4365 "1 2 3" auto random_sample
#   PRIOR=examples/data/gemm_bf16_h200.json bench/gpu/strategies.sh ... model_rank+prior model_rank
set -u
BIN=$1; OUT=$2; SPEC=$3; FEVALS=$4; OPT=$5; SEEDS=$6; shift 6
mkdir -p "$OUT"
date -u +"date: %Y-%m-%dT%H:%M:%SZ"
"$BIN" devices || exit 1
for s in "$@"; do
  for seed in $SEEDS; do
    tag="$s-$seed"
    rm -rf "$OUT/cache-$tag" "$OUT/$tag.db"*
    start=$(date +%s.%N)
    # The prior flags go in the positional parameters (the loop list was expanded already).
    case "$s" in
      *+prior) name=${s%+prior}; set -- --prior "$PRIOR" ;;
      *) name=$s; set -- --no-prior ;;
    esac
    case "$name" in
      *@*) set -- "$@" --batch "${name#*@}"; name=${name%@*} ;;
    esac
    KTUNE_CACHE_DIR="$OUT/cache-$tag" timeout "${KTUNE_RUN_TIMEOUT:-600}" "$BIN" tune "$SPEC" --strategy "$name" --seed "$seed" \
      --max-fevals "$FEVALS" --db "$OUT/$tag.db" "$@" --json > "$OUT/$tag.json" 2> "$OUT/$tag.err"
    rc=$?
    end=$(date +%s.%N)
    echo "$s $seed $rc $start $end" >> "$OUT/runs.txt"
    rm -rf "$OUT/cache-$tag"
  done
done
python3 - "$OUT" "$OPT" <<'PY'
import json, sys
out, opt = sys.argv[1], float(sys.argv[2])
print(f"{'strategy':16} {'seed':>4} {'rc':>3} {'evals':>5} {'wall s':>7} {'best':>10} {'of optimum':>10}")
for line in open(f"{out}/runs.txt"):
    s, seed, rc, start, end = line.split()
    try:
        j = json.load(open(f"{out}/{s}-{seed}.json"))
        b = j["best"][0]
        v = b["objective"]
        frac = v / opt if j["objective"] != "time" else opt / v
        print(f"{s:16} {seed:>4} {rc:>3} {j['evaluations']:5} {float(end)-float(start):7.1f} {v:10.3f} {frac:10.4f}")
    except Exception as e:
        print(f"{s:16} {seed:>4} {rc:>3} no result ({e})")
PY
