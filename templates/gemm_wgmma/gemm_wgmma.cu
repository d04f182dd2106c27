// gemm_wgmma: C = A * B on Hopper's warpgroup tensor-core instructions (wgmma),
// sm_90a only. A (M x K) and B (K x N) bf16 row-major, C (M x N) fp32 row-major, the
// same problem and arguments as gemm_bf16 (whose mma.sync is capped well below cuBLAS
// on an H100: wgmma reads both operands straight from shared memory, so no register
// file traffic for fragments and 4x the work per instruction).
//
// Each block computes block_m x block_n of C with `warpgroups` warpgroups of 128
// threads; warpgroup g owns wg_tiles_m slabs of 64 rows (block_m = 64 * wg_tiles_m *
// warpgroups) across the whole block_n, one m64nNk16 wgmma per slab and 16-deep K step.
// Operands are staged by every thread with cp.async into a `stages`-deep ring, laid out
// in the canonical 128-byte-swizzled forms wgmma reads without bank conflicts:
//   A (K-major): per 64-wide K chunk, rows of 128 bytes; 16-byte piece c of row r at
//                piece c ^ (r % 8); 8-row groups 1024 bytes apart.
//   B (N-major, read with the transpose flag): per 64-wide N chunk, K rows of 128 bytes,
//                swizzled the same way; chunks block_k * 128 bytes apart.
// The swizzle is a function of the address bits, so every stage starts on 1024 bytes.
//
// Pipeline, no mbarriers: per K slice kt, wait for its copies, fence them into the async
// proxy, barrier, issue the slice's wgmmas (one group), refill the stage freed two
// slices ago, then wait until at most one group is in flight. The group still in flight
// keeps the tensor cores busy across the barrier; a stage is refilled only after every
// warpgroup has retired the group that read it (it passed the wait, then the barrier).
// So stages - 2 slices are in flight from global memory.
//
// Tunable macros:
//   warpgroups       128-thread warpgroups per block (block_size_x = 128 * warpgroups)
//   wg_tiles_m       64-row slabs per warpgroup (accumulators: wg_tiles_m * block_n / 2
//                    floats per thread)
//   block_n          64, 128 or 256: the wgmma N; block_k 64 or 128 (K per stage)
//   stages           ring depth, at least 4 (with 3, one slice in flight, ptxas
//                    serializes the wgmmas: C7515)
//   group_m          block rasterisation: consecutive blocks sweep group_m block rows
//                    before moving right, so their A and B tiles share L2
// Shared memory is DYNAMIC: stages * (block_m + block_n) * block_k * 2 + 1024 bytes
// (the 1024 aligns the ring), the spec's shared_memory expression.
// REQUIRES: M % block_m == 0, N % block_n == 0, K % block_k == 0. Grid: (N / block_n,
// M / block_m). Compiled for sm_90a (the spec's kernel.archs).
#include <cuda_bf16.h>

#include "../common/cp_async.cuh"
#include "../common/gemm_bf16_ref.cuh"
#include "../common/wgmma.cuh"

#ifndef warpgroups
#define warpgroups 2
#endif
#ifndef wg_tiles_m
#define wg_tiles_m 1
#endif
#ifndef block_n
#define block_n 256
#endif
#ifndef block_k
#define block_k 64
#endif
#ifndef stages
#define stages 4
#endif
#ifndef group_m
#define group_m 8
#endif
#ifndef block_size_x
#define block_size_x (128 * warpgroups)
#endif

typedef __nv_bfloat16 bf16;
#define BLOCK_M (64 * wg_tiles_m * warpgroups)
#define ACC (block_n / 2)  // accumulators per thread per 64-row slab
#define A_STAGE_BYTES (BLOCK_M * block_k * 2)
#define B_STAGE_BYTES (block_k * block_n * 2)
#define STAGE_BYTES (A_STAGE_BYTES + B_STAGE_BYTES)
#define A_CHUNKS (BLOCK_M * block_k / 8)  // 16-byte pieces per slice
#define B_CHUNKS (block_k * block_n / 8)

// Keeps the compiler from moving accumulator reads or writes across a wgmma wait.
__device__ __forceinline__ void fence_operands(float (&d)[wg_tiles_m][ACC]) {
#pragma unroll
  for (int t = 0; t < wg_tiles_m; ++t) fence_operands(d[t]);
}

// Issues the cp.async copies of one K slice into the stage at `stage` (a shared address).
__device__ __forceinline__ void load_slice(unsigned stage, const bf16* __restrict__ A, const bf16* __restrict__ B,
                                           int N, int K, int m0, int n0, int k0) {
#pragma unroll
  for (int j = 0; j < A_CHUNKS / block_size_x; ++j) {  // the spec makes both divisions exact
    const int i = j * block_size_x + threadIdx.x, row = i / (block_k / 8), c = i % (block_k / 8);
    const unsigned dst = stage + (c / 8) * (BLOCK_M * 128) + row * 128 + (((c % 8) ^ (row % 8)) << 4);
    cp_async16(dst, A + (long long)(m0 + row) * K + k0 + c * 8);
  }
  const unsigned b_stage = stage + A_STAGE_BYTES;
#pragma unroll
  for (int j = 0; j < B_CHUNKS / block_size_x; ++j) {
    const int i = j * block_size_x + threadIdx.x, k = i / (block_n / 8), c = i % (block_n / 8);
    const unsigned dst = b_stage + (c / 8) * (block_k * 128) + k * 128 + (((c % 8) ^ (k % 8)) << 4);
    cp_async16(dst, B + (long long)(k0 + k) * N + n0 + c * 8);
  }
}

extern "C" __global__ void __launch_bounds__(block_size_x, 1)
gemm_wgmma(float* __restrict__ C, const bf16* __restrict__ A, const bf16* __restrict__ B, int M, int N, int K) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const unsigned ring = (smem_addr(smem_raw) + 1023u) & ~1023u;
  // Grouped order: block b of the launch gets tile (tm, tn) with tm in a band of group_m rows.
  const int tiles_m = gridDim.y, tiles_n = gridDim.x, b = blockIdx.y * tiles_n + blockIdx.x;
  const int first_m = (b / (group_m * tiles_n)) * group_m, in_group = b % (group_m * tiles_n);
  const int band = min(tiles_m - first_m, group_m);
  const int m0 = (first_m + in_group % band) * BLOCK_M, n0 = (in_group / band) * block_n;
  const int wg = threadIdx.x / 128;
  const int kt_count = K / block_k;

  float acc[wg_tiles_m][ACC];
#pragma unroll
  for (int t = 0; t < wg_tiles_m; ++t)
#pragma unroll
    for (int i = 0; i < ACC; ++i) acc[t][i] = 0.0f;

#pragma unroll
  for (int s = 0; s < stages - 2; ++s) {
    if (s < kt_count) load_slice(ring + s * STAGE_BYTES, A, B, N, K, m0, n0, s * block_k);
    cp_async_commit();  // empty groups keep the group count in step with the slices
  }
  for (int kt = 0; kt < kt_count; ++kt) {
    cp_async_wait<stages - 3>();  // slice kt has landed (for this thread's copies)...
    fence_proxy_async();
    __syncthreads();  // ...and for everyone's; every warpgroup has retired slice kt-2's group
    const unsigned a_stage = ring + (kt % stages) * STAGE_BYTES, b_stage = a_stage + A_STAGE_BYTES;
    fence_operands(acc);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < block_k / 16; ++kk) {
      // A: 16 K columns = 32 bytes into the 128-byte swizzled rows of chunk kk / 4.
      // B: 16 K rows = 2048 bytes down the chunk; N chunks block_k * 128 bytes apart.
      const unsigned long long db = smem_desc(b_stage + kk * 2048, block_k * 128, 1024);
#pragma unroll
      for (int t = 0; t < wg_tiles_m; ++t) {
        const unsigned a = a_stage + (kk / 4) * (BLOCK_M * 128) + (wg * wg_tiles_m + t) * (64 * 128) + (kk % 4) * 32;
        WgmmaSS<block_n, 1>::run(acc[t], smem_desc(a, 16, 1024), db, 1);
      }
    }
    wgmma_commit();
    const int next = kt + stages - 2;
    if (next < kt_count) load_slice(ring + (next % stages) * STAGE_BYTES, A, B, N, K, m0, n0, next * block_k);
    cp_async_commit();
    wgmma_wait<1>();
    fence_operands(acc);
  }
  wgmma_wait<0>();
  fence_operands(acc);

  // Accumulator layout of m64nN: warp w of the warpgroup owns rows 16w..16w+15; for each
  // n8 block j, d[4j], d[4j+1] at (row lane/4, cols 8j + 2*(lane%4) + {0,1}), d[4j+2],
  // d[4j+3] at row + 8.
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int t = 0; t < wg_tiles_m; ++t) {
    const int row = m0 + (wg * wg_tiles_m + t) * 64 + warp * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < block_n / 8; ++j) {
      const int col = n0 + j * 8 + (lane % 4) * 2;
      *reinterpret_cast<float2*>(C + (long long)row * N + col) = make_float2(acc[t][4 * j], acc[t][4 * j + 1]);
      *reinterpret_cast<float2*>(C + (long long)(row + 8) * N + col) = make_float2(acc[t][4 * j + 2], acc[t][4 * j + 3]);
    }
  }
}
