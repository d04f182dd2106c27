// Test kernel for matmul_t1.json, written for ktune's tests: C = A * B
// (A rows_a x inner, B inner x cols_b, column-major), a block of THREADS_M x
// THREADS_N threads computing a TILE_M x TILE_N tile of C through shared-memory
// tiles of depth TILE_K (static, at most 32 KiB by the file's Conditions; the
// file's SharedMemory, 16 KiB of dynamic shared memory, keeps the launch at
// 48 KiB in all). Tunable parameters arrive as -D.
#ifndef TILE_M
#define TILE_M 64
#define TILE_N 64
#define TILE_K 16
#define THREADS_M 16
#define THREADS_N 16
#endif
#ifndef UNROLL_K
#define UNROLL_K 1
#endif
#ifndef DOUBLE_BUFFER
#define DOUBLE_BUFFER 0
#endif
#ifndef PAD_SMEM
#define PAD_SMEM 0
#endif

#define WORK_M (TILE_M / THREADS_M)
#define WORK_N (TILE_N / THREADS_N)
#define STAGES (1 + DOUBLE_BUFFER)

extern "C" __global__ void matmul_tiled(int rows_a, int cols_b, int inner, const float* mat_a, const float* mat_b,
                                        float* mat_c) {
  __shared__ float tile_a[STAGES][TILE_K][TILE_M + PAD_SMEM];
  __shared__ float tile_b[STAGES][TILE_K][TILE_N + PAD_SMEM];
  const int tid = threadIdx.y * THREADS_M + threadIdx.x;
  const int m0 = blockIdx.x * TILE_M, n0 = blockIdx.y * TILE_N;
  float acc[WORK_M][WORK_N] = {};
  for (int k0 = 0, s = 0; k0 < inner; k0 += TILE_K, s = (s + 1) % STAGES) {
    for (int e = tid; e < TILE_K * TILE_M; e += THREADS_M * THREADS_N)
      tile_a[s][e / TILE_M][e % TILE_M] = mat_a[(k0 + e / TILE_M) * rows_a + m0 + e % TILE_M];
    for (int e = tid; e < TILE_K * TILE_N; e += THREADS_M * THREADS_N)
      tile_b[s][e % TILE_K][e / TILE_K] = mat_b[(n0 + e / TILE_K) * inner + k0 + e % TILE_K];
    __syncthreads();
#pragma unroll UNROLL_K
    for (int k = 0; k < TILE_K; ++k)
      for (int i = 0; i < WORK_M; ++i)
        for (int j = 0; j < WORK_N; ++j)
          acc[i][j] += tile_a[s][k][threadIdx.x + i * THREADS_M] * tile_b[s][k][threadIdx.y + j * THREADS_N];
    if (!DOUBLE_BUFFER) __syncthreads();
  }
  for (int i = 0; i < WORK_M; ++i)
    for (int j = 0; j < WORK_N; ++j) {
      const int m = m0 + threadIdx.x + i * THREADS_M, n = n0 + threadIdx.y + j * THREADS_N;
      if (m < rows_a && n < cols_b) mat_c[n * rows_a + m] = acc[i][j];
    }
}
