#!/bin/sh
# Framework overhead per configuration on a GPU host: tunes SPEC
# exhaustively twice, first with an empty cubin cache (cold: every
# configuration compiled by NVRTC), then again with --force (warm: every cubin
# from the cache), and prints per run the wall time per configuration, the
# averages of the stored phase times, and the overhead: wall per configuration
# minus the benchmark phase (the kernel's warm-up and timed samples).
#
#   bench/gpu/overhead.sh BIN OUT SPEC [ktune tune options, e.g. --set n=1024]
set -u
BIN=$1; OUT=$2; SPEC=$3; shift 3
mkdir -p "$OUT"
name=$(basename "$SPEC" .yaml)
export KTUNE_CACHE_DIR="$OUT/cache-$name"
rm -rf "$KTUNE_CACHE_DIR" "$OUT/$name.db"*
for mode in cold warm; do
  force=""; [ "$mode" = warm ] && force="--force"
  start=$(date +%s.%N)
  "$BIN/ktune" tune "$SPEC" --strategy brute_force --max-fevals 0 --db "$OUT/$name.db" $force "$@" \
      --json > "$OUT/$name-$mode.json" 2> "$OUT/$name-$mode.err"
  rc=$?
  end=$(date +%s.%N)
  "$BIN/ktune" results "$SPEC" --db "$OUT/$name.db" --sort id --json > "$OUT/$name-rows.json" 2>/dev/null
  python3 - "$OUT/$name-$mode.json" "$OUT/$name-rows.json" "$name" "$mode" "$rc" "$start" "$end" <<'PY'
import json, sys
run_file, rows_file, name, mode, rc, start, end = sys.argv[1:]
run = json.load(open(run_file))
rows = json.load(open(rows_file))
rows = rows[-run["evaluations"]:] if run["evaluations"] else []
n = max(1, len(rows))
wall_ms = (float(end) - float(start)) * 1000
avg = lambda k: sum(r.get(k, 0) or 0 for r in rows) / n
bench = avg("benchmark_ms")
print(f"{name:10} {mode:4} rc={rc} configs={len(rows):5} wall={wall_ms/1000:7.1f}s per_config={wall_ms/n:7.2f}ms "
      f"compile={avg('compile_ms'):7.2f} load={avg('load_ms'):5.2f} verify={avg('verify_ms'):6.2f} "
      f"benchmark={bench:7.2f} framework={avg('framework_ms'):6.2f} overhead={wall_ms/n - bench:7.2f}ms")
PY
done
