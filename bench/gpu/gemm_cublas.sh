#!/usr/bin/env bash
# The Hopper GEMM templates against cuBLAS on the same GPU in the same session:
# cuBLAS bf16 (bf16 and fp32 output, bench/gpu/gemm_torch.py) before and after
# templates/gemm_wgmma (cp.async) and templates/gemm_wgmma_tma (TMA, a producer
# warpgroup) tuned exhaustively at each size (their whole spaces, from an empty
# database), so the clock's drift shows. Prints a table last.
#
#   bench/gpu/gemm_cublas.sh KTUNE OUT [N ...]     (default N: 4096 8192)
#
# Needs PyTorch with CUDA (the reference point); OUT gets tune-<template>-<N>.json,
# the database and the cuBLAS figures.
set -euo pipefail
ktune=$(realpath "$1")
out=$(realpath -m "$2")
shift 2
if [ $# -eq 0 ]; then sizes=(4096 8192); else sizes=("$@"); fi
here=$(cd "$(dirname "$0")" && pwd)
templates=(gemm_wgmma gemm_wgmma_tma)
mkdir -p "$out"
python3 "$here/gemm_torch.py" "$out/cublas-before.json" "${sizes[@]}"
for t in "${templates[@]}"; do
  for n in "${sizes[@]}"; do
    "$ktune" tune "$here/../../templates/$t/$t.yaml" --set M="$n" N="$n" K="$n" --strategy brute_force \
      --max-fevals 0 --no-prior --json --db "$out/gemm.db" > "$out/tune-$t-$n.json" 2> "$out/tune-$t-$n.err"
  done
done
python3 "$here/gemm_torch.py" "$out/cublas-after.json" "${sizes[@]}"
python3 - "$out" "${templates[*]}" "${sizes[@]}" <<'PY'
import json, sys
out, templates, sizes = sys.argv[1], sys.argv[2].split(), [int(n) for n in sys.argv[3:]]
cublas = {}
for when in ("before", "after"):
    for r in json.load(open(f"{out}/cublas-{when}.json"))["gemm"]:
        cublas.setdefault((r["N"], r["out"]), []).append(r["hot_tflops"])
print("cuBLAS timed back to back, as ktune's hot mode times the templates")
print("| template | N | best (fp32 out), TFLOP/s | configuration | cuBLAS bf16 out (before / after) | ratio | cuBLAS fp32 out | ratio |")
print("|---|---|---|---|---|---|---|---|")
for name, n in ((t, n) for t in templates for n in sizes):
    t = json.load(open(f"{out}/tune-{name}-{n}.json"))
    best = t["best"][0]
    ms = best.get("confirmed_time_ms", best["time_ms"])
    tf = 2 * n**3 / ms / 1e9
    cfg = ",".join(str(v) for v in best["config"].values())
    b16, f32 = cublas[(n, "bf16")], cublas[(n, "fp32")]
    print(f"| {name} | {n} | {tf:.1f} ({ms:.4f} ms) | {cfg} | {b16[0]:.1f} / {b16[1]:.1f} | {tf/max(b16):.3f}-{tf/min(b16):.3f} "
          f"| {f32[0]:.1f} / {f32[1]:.1f} | {tf/max(f32):.3f}-{tf/min(f32):.3f} |")
PY
