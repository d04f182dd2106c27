// rmsnorm: out[r][c] = in[r][c] / sqrt(mean_c(in[r][c]^2) + EPS) * weight[c] for each of
// `rows` rows of ROW_LEN floats (EPS = 1e-6). ROW_LEN is a compile-time constant
// (-DROW_LEN=... in the spec's compiler_options) so a row's share per thread can live
// in registers; `cols` is passed too and must equal it (the kernel traps otherwise).
// A block handles rows_per_block rows, block_size_x / rows_per_block threads (whole
// warps) per row. The sum of squares is reduced with warp shuffles, plus a shared-memory
// exchange between the row's warps when a row has more than one warp.
//
// Tunable macros:
//   block_size_x     threads per block
//   rows_per_block   rows per block (threads per row = block_size_x / rows_per_block)
//   vector_width     1, 2 or 4 floats per access
//   cache_row        1: the row stays in registers: one read, one write (needs
//                    ROW_LEN / threads_per_row <= 64); 0: the row is read twice (the
//                    re-read mostly hits L2)
//   streaming_stores 1: outputs stored with the evict-first hint (__stcs)
// Grid: rows / rows_per_block. rmsnorm_ref works with any launch geometry, no macros.

#ifndef ROW_LEN
#define ROW_LEN 8192
#endif
#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef rows_per_block
#define rows_per_block 1
#endif
#ifndef vector_width
#define vector_width 4
#endif
#ifndef cache_row
#define cache_row 1
#endif
#ifndef streaming_stores
#define streaming_stores 0
#endif

#include "../common/row_reduce.cuh"  // TPR, WPR, VPT, vec_t, STORE, row_reduce

#define EPS 1e-6f

__device__ __forceinline__ vec_t scale(vec_t v, vec_t w, float f) {
  float* e = reinterpret_cast<float*>(&v);
  const float* g = reinterpret_cast<const float*>(&w);
#pragma unroll
  for (int k = 0; k < vector_width; ++k) e[k] = e[k] * f * g[k];
  return v;
}

__device__ __forceinline__ float sum_squares(vec_t v) {
  const float* e = reinterpret_cast<const float*>(&v);
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < vector_width; ++k) s = fmaf(e[k], e[k], s);
  return s;
}

extern "C" __global__ void __launch_bounds__(block_size_x)
rmsnorm(float* __restrict__ out, const float* __restrict__ in, const float* __restrict__ weight, int rows, int cols) {
  if (cols != ROW_LEN) __trap();
  const int row = blockIdx.x * rows_per_block + threadIdx.x / TPR, t = threadIdx.x % TPR;
  // Every thread takes part in the barriers of row_reduce; rows past the end read row 0.
  const long long base = (long long)(row < rows ? row : 0) * ROW_LEN;
  const vec_t* x = reinterpret_cast<const vec_t*>(in + base);
  const vec_t* w = reinterpret_cast<const vec_t*>(weight);
  vec_t* y = reinterpret_cast<vec_t*>(out + base);
  float s = 0.0f;
#if cache_row
  vec_t v[VPT];
#pragma unroll
  for (int j = 0; j < VPT; ++j) {
    v[j] = x[j * TPR + t];
    s += sum_squares(v[j]);
  }
#else
#pragma unroll 4
  for (int j = 0; j < VPT; ++j) s += sum_squares(x[j * TPR + t]);
#endif
  const float f = rsqrtf(row_reduce<0>(s) * (1.0f / ROW_LEN) + EPS);
  if (row >= rows) return;
#if cache_row
#pragma unroll
  for (int j = 0; j < VPT; ++j) STORE(&y[j * TPR + t], scale(v[j], __ldg(&w[j * TPR + t]), f));
#else
#pragma unroll 4
  for (int j = 0; j < VPT; ++j) STORE(&y[j * TPR + t], scale(x[j * TPR + t], __ldg(&w[j * TPR + t]), f));
#endif
}

// One row per thread-iteration, the mean square in double; any launch geometry.
extern "C" __global__ void rmsnorm_ref(float* out, const float* in, const float* weight, int rows, int cols) {
  const long long threads = (long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;
  const long long block = blockIdx.x + gridDim.x * (blockIdx.y + (long long)gridDim.y * blockIdx.z);
  const long long tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)
                        + block * blockDim.x * blockDim.y * blockDim.z;
  for (long long r = tid; r < rows; r += threads) {
    const float* x = in + r * cols;
    double s = 0.0;
    for (int c = 0; c < cols; ++c) s += (double)x[c] * x[c];
    const double f = 1.0 / sqrt(s / cols + 1e-6);
    for (int c = 0; c < cols; ++c) out[r * cols + c] = (float)(x[c] * f * weight[c]);
  }
}
