// Shared by the row-wise templates (softmax, rmsnorm): a thread layout of
// rows_per_block rows per block, vector types, optional streaming stores, and
// a reduction over the threads of one row. Expects the macros block_size_x,
// rows_per_block, vector_width, streaming_stores and ROW_LEN to be defined.
#pragma once

#define TPR (block_size_x / rows_per_block)       // threads per row
#define WPR (TPR / 32)                            // warps per row
#define VPT (ROW_LEN / (TPR * vector_width))      // vectors per thread

#include "vec.cuh"  // vec_t
#if streaming_stores
#define STORE(p, v) __stcs((p), (v))
#else
#define STORE(p, v) (*(p) = (v))
#endif

// Reduces v over the calling thread's row (op 0: sum, 1: max); every thread gets the result.
template <int OP> __device__ __forceinline__ float row_reduce(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float u = __shfl_xor_sync(0xffffffffu, v, o);
    v = OP ? fmaxf(v, u) : v + u;
  }
#if WPR > 1
  __shared__ float part[rows_per_block][WPR];
  const int row = threadIdx.x / TPR, warp = (threadIdx.x % TPR) / 32;
  __syncthreads();  // the previous call's readers are done
  if ((threadIdx.x & 31) == 0) part[row][warp] = v;
  __syncthreads();
  v = part[row][0];
#pragma unroll
  for (int w = 1; w < WPR; ++w) v = OP ? fmaxf(v, part[row][w]) : v + part[row][w];
#endif
  return v;
}
