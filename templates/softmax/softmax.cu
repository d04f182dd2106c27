// softmax: out[r][:] = exp(in[r][:] - max_r) / sum(exp(in[r][:] - max_r)) for each of
// `rows` rows of ROW_LEN floats. ROW_LEN is a compile-time constant (-DROW_LEN=... in the
// spec's compiler_options) so a row's share per thread can live in registers; `cols` is
// passed too and must equal it (the kernel traps otherwise).
// A block handles rows_per_block rows, block_size_x / rows_per_block threads (whole
// warps) per row. Row reductions: warp shuffles, plus a shared-memory exchange between
// the row's warps when a row has more than one warp.
//
// Tunable macros:
//   block_size_x     threads per block
//   rows_per_block   rows per block (threads per row = block_size_x / rows_per_block)
//   vector_width     1, 2 or 4 floats per access
//   cache_row        1: the row stays in registers: one read, one write (needs
//                    ROW_LEN / threads_per_row <= 64); 0: an online max/sum pass, then a
//                    second read to write the output (the re-read mostly hits L2)
//   fast_exp         1: __expf (a few ulp, no denormal handling); 0: expf
//   streaming_stores 1: outputs stored with the evict-first hint (__stcs), keeping L2
//                    for the inputs that the uncached variant reads twice
// Grid: rows / rows_per_block. softmax_ref works with any launch geometry, no macros.

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
#ifndef fast_exp
#define fast_exp 1
#endif
#ifndef streaming_stores
#define streaming_stores 0
#endif

#include "../common/row_reduce.cuh"  // TPR, WPR, VPT, vec_t, STORE, row_reduce

#if fast_exp
#define EXP(x) __expf(x)
#else
#define EXP(x) expf(x)
#endif

extern "C" __global__ void __launch_bounds__(block_size_x)
softmax(float* __restrict__ out, const float* __restrict__ in, int rows, int cols) {
  if (cols != ROW_LEN) __trap();
  const int row = blockIdx.x * rows_per_block + threadIdx.x / TPR, t = threadIdx.x % TPR;
  // Every thread takes part in the barriers of row_reduce; rows past the end read row 0.
  const long long base = (long long)(row < rows ? row : 0) * ROW_LEN;
  const vec_t* x = reinterpret_cast<const vec_t*>(in + base);
  vec_t* y = reinterpret_cast<vec_t*>(out + base);
#if cache_row
  vec_t v[VPT];
  float m = __int_as_float(0xff800000);  // -inf
#pragma unroll
  for (int j = 0; j < VPT; ++j) {
    v[j] = x[j * TPR + t];
    const float* e = reinterpret_cast<const float*>(&v[j]);
#pragma unroll
    for (int k = 0; k < vector_width; ++k) m = fmaxf(m, e[k]);
  }
  m = row_reduce<1>(m);
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < VPT; ++j) {
    float* e = reinterpret_cast<float*>(&v[j]);
#pragma unroll
    for (int k = 0; k < vector_width; ++k) { e[k] = EXP(e[k] - m); s += e[k]; }
  }
  const float inv = 1.0f / row_reduce<0>(s);
  if (row >= rows) return;
#pragma unroll
  for (int j = 0; j < VPT; ++j) {
    float* e = reinterpret_cast<float*>(&v[j]);
#pragma unroll
    for (int k = 0; k < vector_width; ++k) e[k] *= inv;
    STORE(&y[j * TPR + t], v[j]);
  }
#else
  float m = __int_as_float(0xff800000), s = 0.0f;  // -inf; online: s is the sum of exp(x - m) so far
#pragma unroll 4
  for (int j = 0; j < VPT; ++j) {
    vec_t v = x[j * TPR + t];
    const float* e = reinterpret_cast<const float*>(&v);
#pragma unroll
    for (int k = 0; k < vector_width; ++k) {
      const float mn = fmaxf(m, e[k]);
      s = s * EXP(m - mn) + EXP(e[k] - mn);
      m = mn;
    }
  }
  const float rm = row_reduce<1>(m);
  const float inv = 1.0f / row_reduce<0>(s * EXP(m - rm));
  if (row >= rows) return;
#pragma unroll 4
  for (int j = 0; j < VPT; ++j) {
    vec_t v = x[j * TPR + t];
    float* e = reinterpret_cast<float*>(&v);
#pragma unroll
    for (int k = 0; k < vector_width; ++k) e[k] = EXP(e[k] - rm) * inv;
    STORE(&y[j * TPR + t], v);
  }
#endif
}

// One row per thread-iteration, max and sum in double; any launch geometry.
extern "C" __global__ void softmax_ref(float* out, const float* in, int rows, int cols) {
  const long long threads = (long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;
  const long long block = blockIdx.x + gridDim.x * (blockIdx.y + (long long)gridDim.y * blockIdx.z);
  const long long tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)
                        + block * blockDim.x * blockDim.y * blockDim.z;
  for (long long r = tid; r < rows; r += threads) {
    const float* x = in + r * cols;
    double m = x[0], s = 0.0;
    for (int c = 1; c < cols; ++c) m = x[c] > m ? x[c] : m;
    for (int c = 0; c < cols; ++c) s += exp((double)x[c] - m);
    for (int c = 0; c < cols; ++c) out[r * cols + c] = (float)(exp((double)x[c] - m) / s);
  }
}
