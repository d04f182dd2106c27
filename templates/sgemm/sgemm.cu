// sgemm: C = A * B in fp32 on the CUDA cores; A is M x K, B is K x N, C is M x N, all
// row-major. A register-tiled design: each block computes a block_m x block_n tile of C,
// staging block_k-wide slices of A and B in shared memory; each thread accumulates a
// thread_m x thread_n sub-tile in registers from outer products of an A column
// fragment and a B row fragment. A's slice is stored transposed (As[k][m]) so both
// fragments are contiguous rows of shared memory, read as float4 when vector_width=4.
// A thread's rows (and columns) are vector_width-wide chunks spread THREADS_M
// (THREADS_N) chunks apart, which keeps a warp's fragment reads free of bank conflicts.
// The next slice is fetched from global memory into registers while the current one
// is multiplied.
//
// Tunable macros:
//   block_size_x            threads per block, = (block_m/thread_m) * (block_n/thread_n)
//   block_m, block_n        C tile per block;   block_k  K-slice staged per step
//   thread_m, thread_n      C sub-tile per thread (accumulators in registers)
//   vector_width            1 or 4: global loads, shared fragment reads and C stores
//   padding                 floats added to each shared row (0 or 4: keeps float4 alignment)
//   double_buffer           1: two shared buffers, one barrier per K step; 0: one, two
// REQUIRES: M % block_m == 0, N % block_n == 0, K % block_k == 0; rows 16-byte aligned.
// Grid: (N / block_n, M / block_m). sgemm_ref works with any launch geometry.

#ifndef block_m
#define block_m 128
#endif
#ifndef block_n
#define block_n 128
#endif
#ifndef block_k
#define block_k 8
#endif
#ifndef thread_m
#define thread_m 8
#endif
#ifndef thread_n
#define thread_n 8
#endif
#ifndef block_size_x
#define block_size_x ((block_m / thread_m) * (block_n / thread_n))
#endif
#ifndef vector_width
#define vector_width 4
#endif
#ifndef padding
#define padding 4
#endif
#ifndef double_buffer
#define double_buffer 1
#endif

#define VW vector_width
#define THREADS_N (block_n / thread_n)
#define THREADS_M (block_m / thread_m)
#define A_LOADS (block_m * block_k / (block_size_x * VW))  // vectors per thread per slice
#define B_LOADS (block_k * block_n / (block_size_x * VW))
#define NBUF (double_buffer ? 2 : 1)
#define LDA_S (block_m + padding)
#define LDB_S (block_n + padding)

template <int W> struct VecOf;
template <> struct VecOf<1> { typedef float T; };
template <> struct VecOf<4> { typedef float4 T; };
typedef VecOf<VW>::T vec_t;

struct Staged { vec_t a[A_LOADS]; vec_t b[B_LOADS]; };

__device__ __forceinline__ void load_slice(Staged& s, const float* __restrict__ A, const float* __restrict__ B,
                                           int K, int N, int m0, int n0, int k0) {
  const int tid = threadIdx.x;
#pragma unroll
  for (int j = 0; j < A_LOADS; ++j) {
    const int idx = j * block_size_x + tid, row = idx / (block_k / VW), col = (idx % (block_k / VW)) * VW;
    s.a[j] = *reinterpret_cast<const vec_t*>(A + (long long)(m0 + row) * K + k0 + col);
  }
#pragma unroll
  for (int j = 0; j < B_LOADS; ++j) {
    const int idx = j * block_size_x + tid, row = idx / (block_n / VW), col = (idx % (block_n / VW)) * VW;
    s.b[j] = *reinterpret_cast<const vec_t*>(B + (long long)(k0 + row) * N + n0 + col);
  }
}

__device__ __forceinline__ void store_slice(const Staged& s, float (*As)[LDA_S], float (*Bs)[LDB_S]) {
  const int tid = threadIdx.x;
#pragma unroll
  for (int j = 0; j < A_LOADS; ++j) {
    const int idx = j * block_size_x + tid, row = idx / (block_k / VW), col = (idx % (block_k / VW)) * VW;
    const float* e = reinterpret_cast<const float*>(&s.a[j]);
#pragma unroll
    for (int v = 0; v < VW; ++v) As[col + v][row] = e[v];  // transposed: As[k][m]
  }
#pragma unroll
  for (int j = 0; j < B_LOADS; ++j) {
    const int idx = j * block_size_x + tid, row = idx / (block_n / VW), col = (idx % (block_n / VW)) * VW;
    *reinterpret_cast<vec_t*>(&Bs[row][col]) = s.b[j];
  }
}

__device__ __forceinline__ void multiply_slice(float (&acc)[thread_m][thread_n], const float (*As)[LDA_S],
                                               const float (*Bs)[LDB_S], int tm, int tn) {
#pragma unroll
  for (int k = 0; k < block_k; ++k) {
    float a[thread_m], b[thread_n];
#pragma unroll
    for (int c = 0; c < thread_m / VW; ++c)
      *reinterpret_cast<vec_t*>(&a[c * VW]) = *reinterpret_cast<const vec_t*>(&As[k][(c * THREADS_M + tm) * VW]);
#pragma unroll
    for (int c = 0; c < thread_n / VW; ++c)
      *reinterpret_cast<vec_t*>(&b[c * VW]) = *reinterpret_cast<const vec_t*>(&Bs[k][(c * THREADS_N + tn) * VW]);
#pragma unroll
    for (int i = 0; i < thread_m; ++i)
#pragma unroll
      for (int j = 0; j < thread_n; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
  }
}

extern "C" __global__ void __launch_bounds__(block_size_x)
sgemm(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B, int M, int N, int K) {
  __shared__ __align__(16) float As[NBUF][block_k][LDA_S];
  __shared__ __align__(16) float Bs[NBUF][block_k][LDB_S];
  const int m0 = blockIdx.y * block_m, n0 = blockIdx.x * block_n;
  const int tn = threadIdx.x % THREADS_N, tm = threadIdx.x / THREADS_N;

  float acc[thread_m][thread_n];
#pragma unroll
  for (int i = 0; i < thread_m; ++i)
#pragma unroll
    for (int j = 0; j < thread_n; ++j) acc[i][j] = 0.0f;

  Staged s;
  load_slice(s, A, B, K, N, m0, n0, 0);
  store_slice(s, As[0], Bs[0]);
  __syncthreads();
  int buf = 0;
  for (int k0 = 0; k0 < K; k0 += block_k) {
    const bool more = k0 + block_k < K;
    if (more) load_slice(s, A, B, K, N, m0, n0, k0 + block_k);
    multiply_slice(acc, As[buf], Bs[buf], tm, tn);
#if double_buffer
    if (more) store_slice(s, As[buf ^ 1], Bs[buf ^ 1]);
    __syncthreads();
    buf ^= 1;
#else
    __syncthreads();
    if (more) store_slice(s, As[0], Bs[0]);
    __syncthreads();
#endif
  }

#pragma unroll
  for (int i = 0; i < thread_m; ++i) {
    const int m = m0 + ((i / VW) * THREADS_M + tm) * VW + i % VW;
#pragma unroll
    for (int c = 0; c < thread_n / VW; ++c) {
      const int n = n0 + (c * THREADS_N + tn) * VW;
      *reinterpret_cast<vec_t*>(C + (long long)m * N + n) = *reinterpret_cast<const vec_t*>(&acc[i][c * VW]);
    }
  }
}

// One C element per thread-iteration, accumulated in double; any launch geometry.
extern "C" __global__ void sgemm_ref(float* C, const float* A, const float* B, int M, int N, int K) {
  const long long threads = (long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;
  const long long block = blockIdx.x + gridDim.x * (blockIdx.y + (long long)gridDim.y * blockIdx.z);
  const long long tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)
                        + block * blockDim.x * blockDim.y * blockDim.z;
  for (long long i = tid; i < (long long)M * N; i += threads) {
    const long long m = i / N, n = i % N;
    double sum = 0.0;
    for (int k = 0; k < K; ++k) sum += (double)A[m * K + k] * (double)B[(long long)k * N + n];
    C[i] = (float)sum;
  }
}
