#!/bin/sh
# Tunes the attention templates (templates/attention: attention.yaml and
# attention_causal.yaml) on this host's GPU for each problem, with ktune's
# default strategy and the specs' budget, and sets the best of each beside
# PyTorch's SDPA backends (cuDNN, FlashAttention-2, memory-efficient) measured
# in the same session (bench/gpu/attention_torch.py).
#
#   bench/gpu/attention.sh KTUNE OUT [B,H,S,D ...]     (default: the four problems of issue 52)
#   TEMPLATE=attention_tma bench/gpu/attention.sh ...  (the TMA-fed template instead:
#                                                      templates/TEMPLATE/TEMPLATE{,_causal}.yaml)
#
# Every measurement goes to OUT/ktune.db (one database for all problems: each is
# its own problem size), each run's summary to OUT/<spec>-<B>_<H>_<S>_<D>.json.
# Needs python3 with torch for the reference points (skipped without it).
set -u
BIN=$1; OUT=$2; shift 2
T=${TEMPLATE:-attention}
[ $# -gt 0 ] || set -- 4,32,4096,128 2,32,8192,128 1,16,16384,128 8,16,2048,64
mkdir -p "$OUT"
date -u +"date: %Y-%m-%dT%H:%M:%SZ"
"$BIN" devices | head -3 || exit 1
python3 bench/gpu/attention_torch.py "$OUT/torch.json" "$@" > "$OUT/torch.txt" 2>&1 || echo "no PyTorch reference points (see $OUT/torch.txt)"
for p in "$@"; do
  IFS=, read -r b h s d <<EOF
$p
EOF
  for spec in "$T" "${T}_causal"; do
    tag="$spec-${b}_${h}_${s}_${d}"
    start=$(date +%s)
    "$BIN" tune "templates/$T/$spec.yaml" --set B="$b" --set H="$h" --set S="$s" --set D="$d" \
      --db "$OUT/ktune.db" --json > "$OUT/$tag.json" 2> "$OUT/$tag.err"
    echo "$tag rc=$? wall_s=$(($(date +%s) - start))" >> "$OUT/runs.txt"
  done
done
cat "$OUT/runs.txt"
python3 - "$T" "$OUT" "$@" <<'PY'
import json, sys
t = sys.argv.pop(1)
out, problems = sys.argv[1], [tuple(int(x) for x in p.split(",")) for p in sys.argv[2:]]
try:
    torch = json.load(open(f"{out}/torch.json"))
    ref = {(r["B"], r["H"], r["S"], r["D"], r["causal"]): r for r in torch["attention"]}
except Exception:
    torch, ref = None, {}
def tf(r, k):
    return r.get(k, {}).get("tflops") if r else None
print(f"{'B,H,S,D':16} {'causal':6} {'evals':>5} {'ok':>4} {'ktune':>7} {'cuDNN':>7} {'FA2':>7} {'/cuDNN':>7} {'/FA2':>6}  best config")
for b, h, s, d in problems:
    for causal, spec in ((False, t), (True, t + "_causal")):
        try:
            j = json.load(open(f"{out}/{spec}-{b}_{h}_{s}_{d}.json"))
        except Exception as e:
            print(f"{b},{h},{s},{d}  {int(causal)}  no result ({e})"); continue
        best = j["best"][0] if j.get("best") else None
        k = best["metrics"]["TFLOP/s"] if best else float("nan")
        r = ref.get((b, h, s, d, causal))
        c, f = tf(r, "cudnn"), tf(r, "flash2")
        ratio = lambda x: f"{k / x:6.3f}" if x else "     -"
        print(f"{b},{h},{s},{d:<8} {int(causal):6} {j['evaluations']:5} {j['status_counts'].get('ok', 0):4} {k:7.1f} "
              f"{c or float('nan'):7.1f} {f or float('nan'):7.1f} {ratio(c):>7} {ratio(f):>6}  {json.dumps(best['config']) if best else ''}")
        bad = {kk: v for kk, v in j["status_counts"].items() if kk != "ok"}
        if bad: print(f"{'':16} failures: {bad}")
if torch:
    print("cuBLAS bf16 GEMM TFLOP/s: " + ", ".join(f"{n}^3 {g['tflops']:.1f}" for n, g in torch["gemm_bf16"].items()))
PY
