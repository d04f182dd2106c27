#!/usr/bin/env bash
# Writes what a ktune binary prints for every recorded dataset in
# examples/data (space, compile, a replayed tune, import, best, results and
# every export format) into a folder, with the fields that measure this
# machine's wall time taken out, so that two builds can be compared:
#
#   tests/output_snapshot.sh OLD_KTUNE /tmp/before
#   tests/output_snapshot.sh NEW_KTUNE /tmp/after
#   diff -r /tmp/before /tmp/after        # empty: outputs unchanged
#
# Run from the repository root. Needs python3 (to normalise the JSON).
set -euo pipefail
ktune=$(realpath "$1")
out=$(realpath -m "$2")
root=$(pwd)
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Keys whose values are this run's timing, cache state or paths of the
# temporary folder (a replay's clock adds the strategy's own real time, so
# its predicted wall time and what derives from it vary too); everything
# else must be equal between two builds.
normalise() {
  python3 -c '
import json, re, sys
DROP = {"elapsed_s", "compile_ms", "cache_hit", "seconds", "count_seconds", "timestamp",
        "created", "started", "finished", "time_to_count_s", "count_ms", "wall_s", "framework_ms",
        "strategy_s", "efficiency", "evaluation_wall_s", "predicted_wall_s"}
def walk(v):
    if isinstance(v, dict):
        return {k: walk(x) for k, x in v.items() if k not in DROP}
    if isinstance(v, list):
        return [walk(x) for x in v]
    if isinstance(v, str):
        v = re.sub(r"Compile time = [0-9.]+ ms", "Compile time = X ms", v)
        return v.replace(sys.argv[1], "WORK")
    return v
text = sys.stdin.read()
try:
    print(json.dumps(walk(json.loads(text)), indent=1, sort_keys=True))
except json.JSONDecodeError:
    print(re.sub(r"[0-9.]+ ?(s|ms) ", "T ", text.replace(sys.argv[1], "WORK")))
' "$work"
}

run() {  # run NAME COMMAND...: stdout normalised into NAME, exit status kept
  local name=$1; shift
  local rc=0
  "$@" >"$work/stdout" 2>/dev/null || rc=$?
  { normalise <"$work/stdout"; echo "exit $rc"; } >"$out/$name"
}

for data in "$root"/examples/data/*_h100.json; do
  base=$(basename "$data" _h100.json)
  t=${base%_10k}
  spec="$root/templates/$t/$t.yaml"
  [ -f "$spec" ] || continue
  run "$base.space" "$ktune" space "$spec" --json
  run "$base.compile" "$ktune" compile "$spec" --sample 3 --seed 1 --json
  db="$work/$base.db"
  for gpu in h100 h200; do
    run "$base.tune_$gpu" "$ktune" tune "$spec" --simulate "$root/examples/data/${base}_$gpu.json" \
        --db "$db" --max-fevals 40 --seed 3 --no-prior --force --json
  done
  idb="$work/$base.import.db"
  run "$base.import" "$ktune" import "$root/examples/data/${base}_h100.json" \
      "$root/examples/data/${base}_h200.json" --db "$idb"
  run "$base.best" "$ktune" best --db "$idb" --json
  run "$base.results" "$ktune" results --db "$idb" --sort time --limit 20 --json
  for fmt in json header t4 kernel-tuner; do
    device=()
    case $fmt in t4|kernel-tuner) device=(--device h100) ;; esac
    "$ktune" export --format $fmt --db "$idb" "${device[@]}" -o "$work/export.$fmt" >/dev/null 2>&1 \
      && normalise <"$work/export.$fmt" >"$out/$base.export.$fmt" || echo "export failed" >"$out/$base.export.$fmt"
  done
  "$ktune" export --format json --db "$db" --include-replays -o "$work/replay.json" >/dev/null 2>&1 \
    && normalise <"$work/replay.json" >"$out/$base.export_replays.json" || echo "export failed" >"$out/$base.export_replays.json"
done
echo "wrote $(ls "$out" | wc -l) files to $out"
