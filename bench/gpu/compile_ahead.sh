#!/bin/sh
# A compile-bound space tuned exhaustively (brute_force, racing on) by two
# ktune binaries from an empty database and compile cache each: BEFORE and
# AFTER a change to how compiles are fed (e.g. the compile queue's priority
# order and compiling the next batch behind the one being measured,
# tuner/compile/plan.h). Prints each run's wall time, configurations per
# second and the speed-up.
#
#   bench/gpu/compile_ahead.sh BEFORE AFTER OUT T1.json [PARAM=v1,v2,...]...
#
# PARAM=... slices the space (bench/gpu/t1_slice.py). E.g. benchmark_hub's
# convolution_milo (docs/benchmarks.md):
#   bench/gpu/compile_ahead.sh .ext/ktune_before build/ktune /tmp/ca .ext/hub-conv/convolution_milo.json \
#       block_size_x=16,32,48,64 block_size_y=8
set -u
BEFORE=$1; AFTER=$2; OUT=$3; T1=$4; shift 4
"$(dirname "$0")/t1_slice.py" "$T1" "$OUT" "$@" || exit 2
nvidia-smi --query-gpu=name --format=csv,noheader
date -u +"date: %Y-%m-%dT%H:%M:%SZ"
for which in before after; do
  bin=$BEFORE; [ "$which" = after ] && bin=$AFTER
  rm -rf "$OUT/$which.db"* "$OUT/cache-$which"
  start=$(date +%s.%N)
  KTUNE_CACHE_DIR="$OUT/cache-$which" "$bin" tune "$OUT/slice.json" --strategy brute_force --max-fevals 0 \
    --no-prior --json --db "$OUT/$which.db" > "$OUT/$which.json" 2> "$OUT/$which.err"
  rc=$?
  end=$(date +%s.%N)
  n=$("$bin" results "$OUT/slice.json" --db "$OUT/$which.db" --json --limit 0 2>/dev/null |
      python3 -c "import json,sys; print(len({json.dumps(r['config'], sort_keys=True) for r in json.load(sys.stdin)}))")
  python3 -c "import sys; w=float(sys.argv[2])-float(sys.argv[1]); print(f'$which: rc=$rc configurations=$n wall={w:.1f}s configs_per_s={$n/w:.3f}')" "$start" "$end"
done
