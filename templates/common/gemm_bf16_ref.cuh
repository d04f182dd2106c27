// gemm_bf16_ref: the verification reference of the bf16 GEMM templates (C = A * B,
// A M x K and B K x N bf16 row-major, C fp32 row-major). One C element per
// thread-iteration, products and sum in double; any launch geometry.
// gemm_bf16_ref_body is the same for a reference kernel that takes more parameters.
#pragma once
#include <cuda_bf16.h>

__device__ __forceinline__ void gemm_bf16_ref_body(float* C, const __nv_bfloat16* A, const __nv_bfloat16* B, int M,
                                                   int N, int K) {
  const long long threads = (long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;
  const long long block = blockIdx.x + gridDim.x * (blockIdx.y + (long long)gridDim.y * blockIdx.z);
  const long long tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)
                        + block * blockDim.x * blockDim.y * blockDim.z;
  for (long long i = tid; i < (long long)M * N; i += threads) {
    const long long m = i / N, n = i % N;
    double sum = 0.0;
    for (int k = 0; k < K; ++k)
      sum += (double)__bfloat162float(A[m * K + k]) * (double)__bfloat162float(B[(long long)k * N + n]);
    C[i] = (float)sum;
  }
}

extern "C" __global__ void gemm_bf16_ref(float* C, const __nv_bfloat16* A, const __nv_bfloat16* B, int M, int N,
                                         int K) {
  gemm_bf16_ref_body(C, A, B, M, N, K);
}
