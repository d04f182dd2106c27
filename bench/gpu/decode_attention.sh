#!/bin/sh
# Tunes the decode_attention template (templates/decode_attention) on this
# host's GPU for each (batch, context) with ktune's default strategy and the
# spec's budget, and sets the best GB/s (K and V bytes read) beside the
# device-to-device copy bandwidth and PyTorch's SDPA on a gathered cache,
# measured in the same session (bench/gpu/decode_attention_torch.py).
#
#   bench/gpu/decode_attention.sh KTUNE OUT [B,ctx ...]   (default: B 1, 4, 16, 64 x ctx 1k, 4k, 16k, 32k)
#
# Every measurement goes to OUT/ktune.db, each run's summary to OUT/decode-<B>_<ctx>.json.
set -u
BIN=$1; OUT=$2; shift 2
if [ $# -eq 0 ]; then
  for b in 1 4 16 64; do for c in 1024 4096 16384 32768; do set -- "$@" "$b,$c"; done; done
fi
mkdir -p "$OUT"
date -u +"date: %Y-%m-%dT%H:%M:%SZ"
"$BIN" devices | head -3 || exit 1
# the spec's heads and head dimension (its constants)
python3 bench/gpu/decode_attention_torch.py "$OUT/torch.json" 8 4 128 "$@" > "$OUT/torch.txt" 2>&1 || echo "no PyTorch reference points (see $OUT/torch.txt)"
for p in "$@"; do
  b=${p%,*}; c=${p#*,}
  start=$(date +%s)
  "$BIN" tune templates/decode_attention/decode_attention.yaml --set B="$b" --set ctx="$c" \
    --db "$OUT/ktune.db" --json > "$OUT/decode-${b}_$c.json" 2> "$OUT/decode-${b}_$c.err"
  echo "decode-${b}_$c rc=$? wall_s=$(($(date +%s) - start))" >> "$OUT/runs.txt"
done
python3 - "$OUT" "$@" <<'PY'
import json, sys
out, problems = sys.argv[1], [tuple(int(x) for x in p.split(",")) for p in sys.argv[2:]]
try:
    torch = json.load(open(f"{out}/torch.json"))
    ref = {(r["B"], r["ctx"]): r for r in torch["decode"]}
    copy = torch["copy_gbs"]
except Exception:
    torch, ref, copy = None, {}, None
print(f"copy bandwidth: {copy:.0f} GB/s" if copy else "copy bandwidth: not measured")
print(f"{'B':>3} {'ctx':>6} {'evals':>5} {'ok':>4} {'ktune GB/s':>10} {'of copy':>7} {'same-size copy':>14} {'of it':>6} {'SDPA GB/s':>9}  best config")
for b, c in problems:
    try:
        j = json.load(open(f"{out}/decode-{b}_{c}.json"))
    except Exception as e:
        print(f"{b:3} {c:6} no result ({e})"); continue
    best = j["best"][0] if j.get("best") else None
    k = best["metrics"]["GB/s"] if best else float("nan")
    r = ref.get((b, c))
    same = r["copy_same_gbs"] if r and "copy_same_gbs" in r else float("nan")
    print(f"{b:3} {c:6} {j['evaluations']:5} {j['status_counts'].get('ok', 0):4} {k:10.0f} "
          f"{(k / copy if copy else float('nan')):7.3f} {same:14.0f} {k / same:6.3f} "
          f"{(r['sdpa_gbs'] if r else float('nan')):9.0f}  {json.dumps(best['config']) if best else ''}")
    bad = {kk: v for kk, v in j["status_counts"].items() if kk != "ok"}
    if bad: print(f"{'':10} failures: {bad}")
PY
