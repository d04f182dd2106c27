#!/bin/sh
# Tunes ktune's templates on the GPU of this host and prints, per template, the
# best configuration's time and metric next to the hardware limit measured in
# the same run (bench/gpu/limits: device-to-device copy, cuBLAS).
#
#   bench/gpu/templates.sh BIN_DIR OUT_DIR STRATEGY MAX_FEVALS TEMPLATE...
#
# BIN_DIR holds `ktune` and `limits` (build/ and build/bench/ of a normal build).
# Every measurement goes to OUT_DIR/ktune.db; each template's summary to
# OUT_DIR/<template>.json. MAX_FEVALS 0 = exhaustive. An existing OUT_DIR/ktune.db
# is resumed: configurations it already holds are not measured again.
set -u
BIN=$1; OUT=$2; STRATEGY=$3; FEVALS=$4; shift 4
export KTUNE_CACHE_DIR=${KTUNE_CACHE_DIR:-/tmp/ktune-cache}
mkdir -p "$OUT"
date -u +"date: %Y-%m-%dT%H:%M:%SZ"
"$BIN/ktune" devices || exit 1
if [ -x "$BIN/limits" ] && [ ! -f "$OUT/limits.txt" ]; then
  "$BIN/limits" --reps 10 > "$OUT/limits.txt" 2> "$OUT/limits.err"
fi
for t in "$@"; do
  spec=templates/$t/$t.yaml
  budget="--max-fevals $FEVALS"  # 0 overrides the spec's own budget: exhaustive
  start=$(date +%s)
  timeout "${KTUNE_TEMPLATE_TIMEOUT:-600}" "$BIN/ktune" tune "$spec" --strategy "$STRATEGY" $budget --db "$OUT/ktune.db" --json > "$OUT/$t.json" 2> "$OUT/$t.err"
  rc=$?
  end=$(date +%s)
  echo "$t rc=$rc wall_s=$((end - start))" >> "$OUT/summary.txt"
  tail -2 "$OUT/$t.err"
done
cat "$OUT/summary.txt"
grep -E "^(memcpy|copy|read|sgemm|gemm)" "$OUT/limits.txt" 2>/dev/null
python3 - "$OUT" "$@" <<'PY'
import json, sys
out = sys.argv[1]
print(f"{'template':12} {'evals':>5} {'ok':>5} {'best ms':>10} {'metric':>22}  config")
for t in sys.argv[2:]:
    try:
        j = json.load(open(f"{out}/{t}.json"))
    except Exception as e:
        print(f"{t:12} no result ({e})"); continue
    b = j["best"][0] if j["best"] else None
    m = " ".join(f"{k}={v:.1f}" for k, v in (b or {}).get("metrics", {}).items())
    print(f"{t:12} {j['evaluations']:5} {j['status_counts'].get('ok',0):5} {b['time_ms'] if b else float('nan'):10.4f} {m:>22}  {json.dumps(b['config']) if b else ''}")
    bad = {k: v for k, v in j["status_counts"].items() if k != "ok"}
    if bad: print(f"{'':12} failures: {bad}")
PY
