#!/bin/sh
# Tunes the same spec twice from scratch (--force, separate databases) and
# prints both winners' times and their difference: how far two runs of the
# same tuning agree (target: within 2%).
#
#   bench/gpu/repeat.sh BIN OUT SPEC
set -eu
BIN=$1; OUT=$2; SPEC=$3
for i in 1 2; do
  "$BIN/ktune" tune "$SPEC" --strategy brute_force --max-fevals 0 --force --db "$OUT/repeat$i.db" --json > "$OUT/repeat$i.json"
done
python3 - "$OUT" <<'PY'
import json, sys
a, b = (json.load(open(f"{sys.argv[1]}/repeat{i}.json"))["best"][0] for i in (1, 2))
ta, tb = a.get("confirmed_time_ms", a["time_ms"]), b.get("confirmed_time_ms", b["time_ms"])
print(f"run 1 winner {json.dumps(a['config'])} {ta:.5f} ms")
print(f"run 2 winner {json.dumps(b['config'])} {tb:.5f} ms")
print(f"difference {100 * abs(ta - tb) / min(ta, tb):.2f}%")
PY
