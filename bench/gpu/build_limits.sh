#!/usr/bin/env bash
# Builds bench/gpu/limits.cu into build/bench/limits with one nvcc command:
#
#   nvcc -O3 -std=c++17 -lineinfo \
#     -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=sm_80 \
#     -gencode arch=compute_90,code=compute_90 \
#     -Xcompiler -Wall,-Wextra,-static-libstdc++,-static-libgcc \
#     -cudart static -Xlinker -rpath,$CUDA_HOME/lib64 \
#     bench/gpu/limits.cu -o build/bench/limits -lcublas -ldl
#
# cudart, libstdc++ and libgcc are linked statically; the CUDA 13 toolkit here
# ships no libcublas_static.a, so cuBLAS (libcublas.so.13, libcublasLt.so.13)
# is linked dynamically and found on the GPU host through the rpath to its
# toolkit (or the loader's own paths). libcuda is never linked: cudart loads
# libcuda.so.1 at run time. Run it on the GPU host as `build/bench/limits
# [--reps N] [--device I]`; the last line of output is `LIMITS_JSON {...}`.
#
# Usage: bench/gpu/build_limits.sh   (from anywhere; NVCC and CUDA_HOME may be set)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
NVCC="${NVCC:-$CUDA_HOME/bin/nvcc}"
mkdir -p "$root/build/bench"
set -x
"$NVCC" -O3 -std=c++17 -lineinfo \
  -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=sm_80 \
  -gencode arch=compute_90,code=compute_90 \
  -Xcompiler -Wall,-Wextra,-static-libstdc++,-static-libgcc \
  -cudart static -Xlinker -rpath,"$CUDA_HOME/lib64" \
  "$root/bench/gpu/limits.cu" -o "$root/build/bench/limits" -lcublas -ldl
