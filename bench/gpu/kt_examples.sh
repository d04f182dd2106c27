#!/bin/bash
# Kernel Tuner's published CUDA examples as ktune specs (bench/gpu/specs/kt_*.yaml),
# on the GPU of this host: the convolution (filter in constant memory) and
# pnpoly verified against their naive kernels, matmul, reduction, spmv,
# stencil and expdist (nvcc) measured; then BAT's convolution T1 file and the
# benchmark hub's convolution_milo T1 file as published. The kernels and T1
# files are fetched, never committed:
#   .ext/kt-examples/*.cu                                   (KernelTuner/kernel_tuner examples/cuda)
#   .ext/bat-conv/{convolution-CAFF.json,convolution.cu}   (NTNU-HPC-Lab/BAT)
#   .ext/hub-conv/{convolution_milo.json,convolution_milo.cu} (AutoTuningAssociation/benchmark_hub)
#
#   bench/gpu/kt_examples.sh build/ktune OUTDIR [FEVALS]
set -eu
KTUNE=$1; OUT=$2; FEVALS=${3:-40}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u +"date: %Y-%m-%dT%H:%M:%SZ"
row() {  # label, spec, strategy, evaluations
  local label=$1 spec=$2 strategy=$3 n=$4 db="$OUT/$1.db" start end
  rm -f "$db"*
  start=$(date +%s.%N)
  "$KTUNE" tune "$spec" --strategy "$strategy" --max-fevals "$n" --seed 1 --json --db "$db" > "$OUT/$label.json" 2> "$OUT/$label.err" || true
  end=$(date +%s.%N)
  python3 - "$OUT/$label.json" "$label" "$start" "$end" <<'PY'
import json, sys
path, label, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
try:
    d = json.load(open(path))
except Exception as e:
    print(f"| {label} | - | failed: {e} | {end - start:.1f} | - |")
    sys.exit()
best = d["best"][0] if d.get("best") else None
obj = f'{best["objective"]:.1f} {d["objective"]}' if best else "-"
print(f'| {label} | {d["evaluations"]} | {d["status_counts"]} | {end - start:.1f} | {obj} |')
PY
}
{
  echo "| run | evaluated | statuses | wall s | best |"
  echo "| --- | ---: | --- | ---: | --- |"
  row kt-conv-verified bench/gpu/specs/kt_convolution.yaml model_rank "$FEVALS"
  row kt-pnpoly-verified bench/gpu/specs/kt_pnpoly.yaml model_rank "$FEVALS"
  row kt-matmul bench/gpu/specs/kt_matmul.yaml brute_force 0
  row kt-reduction bench/gpu/specs/kt_reduction.yaml model_rank 20
  row kt-spmv bench/gpu/specs/kt_spmv.yaml model_rank 20
  row kt-stencil bench/gpu/specs/kt_stencil.yaml brute_force 0
  row kt-expdist-nvcc bench/gpu/specs/kt_expdist.yaml model_rank 16
  row bat-conv-t1 .ext/bat-conv/convolution-CAFF.json random_sample "$FEVALS"
  row hub-conv-t1 .ext/hub-conv/convolution_milo.json model_rank 16
} | tee "$OUT/summary.md"
