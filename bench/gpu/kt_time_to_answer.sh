#!/bin/bash
# Time to an answer, ktune's default against Kernel Tuner's strategies, live on
# this host's GPU, one run after the other, each with the same wall-clock limit
# and from empty caches: the seconds from each run's start to its first result
# within 90% and 95% of OPTIMUM (ms, e.g. an exhaustive recording's best).
#   - ktune: bench/gpu/time_budget.sh (the whole process timed, start-up
#     included), its default strategy, each seed of SEEDS;
#   - Kernel Tuner: each strategy of KT_STRATEGIES with its time_limit, seeds
#     KT_SEEDS, through bench/gpu/kt_spec_side_by_side.py (a ktune YAML spec) or
#     bench/gpu/kt_t1_side_by_side.py (a T1 file); seconds from tune_kernel's
#     start (Python's start-up and the inputs' fill not counted).
# Kernel Tuner comes from the wheels in .whl/ (installed into /tmp/site).
#
#   bench/gpu/kt_time_to_answer.sh KTUNE OUT FILE OPTIMUM_MS LIMIT_S "SEEDS"
#   e.g. bench/gpu/kt_time_to_answer.sh build/ktune out/sgemm templates/sgemm/sgemm.yaml 2.9671 30 "1 2 3"
set -u
KTUNE=$1; OUT=$2; FILE=$3; OPT=$4; LIMIT=$5; SEEDS=$6
KT_STRATEGIES=${KT_STRATEGIES:-"dual_annealing hybrid_vndx genetic_algorithm random_sample"}
KT_SEEDS=${KT_SEEDS:-1}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -2
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
"$HERE/time_budget.sh" "$KTUNE" "$OUT/ktune" "$FILE" "$OPT" "${LIMIT}s" "$SEEDS" default > "$OUT/ktune.txt" 2>&1
for s in $KT_STRATEGIES; do
  for seed in $KT_SEEDS; do
    tag="kt-$s-$seed"
    case "$FILE" in
      *.yaml) CUPY_CACHE_DIR="$OUT/cache-$tag" python3 "$HERE/kt_spec_side_by_side.py" "$FILE" --out "$OUT/$tag" \
                --strategy "$s" --time-limit "$LIMIT" --optimum "$OPT" --seed "$seed" ;;
      *) CUPY_CACHE_DIR="$OUT/cache-$tag" python3 "$HERE/kt_t1_side_by_side.py" "$FILE" --out "$OUT/$tag" \
           --strategy "$s" --time-limit "$LIMIT" --max-fevals 0 --optimum "$OPT" --seed "$seed" ;;
    esac > "$OUT/$tag.json" 2> "$OUT/$tag.err"
    rm -rf "$OUT/cache-$tag"
  done
done
date -u +"date: %Y-%m-%dT%H:%M:%SZ"
cat "$OUT/ktune.txt"
python3 - "$OUT" $KT_STRATEGIES <<'PY'
import glob, json, os, sys
out = sys.argv[1]
print(f"{'Kernel Tuner run':28} {'evals':>6} {'wall s':>6} {'best ms':>9} {'to 90%':>6} {'to 95%':>6}")
for s in sys.argv[2:]:
    for path in sorted(glob.glob(os.path.join(out, f"kt-{s}-*.json"))):
        tag = os.path.basename(path)[:-5]
        try:
            j = json.loads(open(path).read().strip().splitlines()[-1])
            to = lambda k: f"{j[k]:6.1f}" if j.get(k) is not None else "     -"
            best = j.get("best_time_ms")
            print(f"{tag:28} {j['evaluated']:6} {j['wall_s']:6.1f} {best if best is not None else float('nan'):9.4f} "
                  f"{to('to_90_s')} {to('to_95_s')}")
        except Exception as e:
            print(f"{tag:28} no result ({e}; see {tag}.err)")
PY
