// gemm_wgmma_tma: C = A * B on Hopper's wgmma fed by TMA, warp-specialised; sm_90a only.
// A (M x K) and B (K x N) bf16 row-major, C (M x N) fp32 row-major: gemm_wgmma's
// problem. The kernel reads A and B through the tensor maps a_map and b_map (64 x 64
// element boxes, 128-byte swizzle); the pointers are the reference's.
//
// A block has one producer warpgroup and `warpgroups` computing warpgroups. One thread
// of the producer issues every copy: per K slice of 64, BLOCK_M / 64 boxes of A and
// block_n / 64 boxes of B into a stage of a `stages`-deep ring, all counted on the
// stage's `full` mbarrier (expect_tx). The box lands in the layout wgmma reads with its
// 128-byte swizzle: A per 64 rows, rows of 128 bytes; B per 64 columns, K rows of 128
// bytes. The computing warpgroups wait on `full`, issue the slice's wgmmas as one
// group, wait until one group is in flight, and then release the stage of the slice
// before on its `empty` mbarrier. No thread of a computing warpgroup computes an
// address or waits at a block barrier, and every stage can be in flight. setmaxnreg
// moves registers from the producer to the computing warpgroups.
//
// Warpgroup g computes wg_tiles_m slabs of 64 rows across the whole block_n (one
// m64nNk16 wgmma per slab and 16-deep K step); blocks are rasterised in bands of
// group_m block rows, as gemm_wgmma's.
//
// Tunable macros: warpgroups (computing, 1 or 2), wg_tiles_m (1 or 2), block_n (64,
// 128, 192, 256), stages, group_m; block_size_x = 128 * (warpgroups + 1).
// Shared memory is DYNAMIC: stages * (BLOCK_M + block_n) * 128 bytes of ring, 1024 to
// align it, and 16 bytes per stage of mbarriers (the spec's shared_memory).
// REQUIRES: M % BLOCK_M == 0, N % block_n == 0, K % 64 == 0; grid (N / block_n, M / BLOCK_M).
#include <cuda_bf16.h>

#include "../common/cp_async.cuh"
#include "../common/gemm_bf16_ref.cuh"
#include "../common/mbarrier.cuh"
#include "../common/tma.cuh"
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
#ifndef stages
#define stages 4
#endif
#ifndef group_m
#define group_m 8
#endif
#ifndef block_size_x
#define block_size_x (128 * (warpgroups + 1))
#endif

typedef __nv_bfloat16 bf16;
#define BLOCK_M (64 * wg_tiles_m * warpgroups)
#define ACC (block_n / 2)  // accumulators per thread per 64-row slab
#define A_STAGE_BYTES (BLOCK_M * 128)
#define STAGE_BYTES (A_STAGE_BYTES + block_n * 128)
// The producer's registers, and the computing warpgroups' share of the rest of the
// 64K register file (multiples of 8, at most 240).
#define PRODUCER_REGS 40
#define CONSUMER_REGS_ (((65536 - 128 * PRODUCER_REGS) / (128 * warpgroups)) / 8 * 8)
#define CONSUMER_REGS (CONSUMER_REGS_ > 240 ? 240 : CONSUMER_REGS_)

__device__ __forceinline__ void fence_operands(float (&d)[wg_tiles_m][ACC]) {
#pragma unroll
  for (int t = 0; t < wg_tiles_m; ++t) fence_operands(d[t]);
}

extern "C" __global__ void __launch_bounds__(block_size_x, 1)
gemm_wgmma_tma(float* __restrict__ C, const bf16* __restrict__ A, const bf16* __restrict__ B,
               const __grid_constant__ TensorMap a_map, const __grid_constant__ TensorMap b_map, int M, int N, int K) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const unsigned ring = (smem_addr(smem_raw) + 1023u) & ~1023u;
  // Grouped order: block b of the launch gets tile (tm, tn) with tm in a band of group_m rows.
  const int tiles_m = gridDim.y, tiles_n = gridDim.x, b = blockIdx.y * tiles_n + blockIdx.x;
  const int first_m = (b / (group_m * tiles_n)) * group_m, in_group = b % (group_m * tiles_n);
  const int band = min(tiles_m - first_m, group_m);
  const int m0 = (first_m + in_group % band) * BLOCK_M, n0 = (in_group / band) * block_n;
  const int kt_count = K / 64;

  // Per stage: `full` completes when a slice's boxes have landed, `empty` when every
  // computing thread has retired the group that read it. They sit after the ring.
  const unsigned full = ring + stages * STAGE_BYTES, empty = full + 8 * stages;
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(full + 8 * s, 1);
      mbar_init(empty + 8 * s, 128 * warpgroups);
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (threadIdx.x < 128) {
    if constexpr (warpgroups > 1) set_max_registers<-PRODUCER_REGS>();
    if (threadIdx.x == 0)
      for (int kt = 0; kt < kt_count; ++kt) {
        const int s = kt % stages;
        if (kt >= stages) mbar_wait(empty + 8 * s, (kt / stages - 1) & 1);
        const unsigned stage = ring + s * STAGE_BYTES;
        mbar_expect_tx(full + 8 * s, STAGE_BYTES);
#pragma unroll
        for (int i = 0; i < BLOCK_M / 64; ++i) tma_load_2d(stage + i * 8192, &a_map, full + 8 * s, kt * 64, m0 + i * 64);
#pragma unroll
        for (int j = 0; j < block_n / 64; ++j)
          tma_load_2d(stage + A_STAGE_BYTES + j * 8192, &b_map, full + 8 * s, n0 + j * 64, kt * 64);
      }
    return;
  }
  if constexpr (warpgroups > 1) set_max_registers<CONSUMER_REGS>();
  const int wg = threadIdx.x / 128 - 1;

  float acc[wg_tiles_m][ACC];
#pragma unroll
  for (int t = 0; t < wg_tiles_m; ++t)
#pragma unroll
    for (int i = 0; i < ACC; ++i) acc[t][i] = 0.0f;

  for (int kt = 0; kt < kt_count; ++kt) {
    const int s = kt % stages;
    mbar_wait(full + 8 * s, (kt / stages) & 1);
    const unsigned a_stage = ring + s * STAGE_BYTES, b_stage = a_stage + A_STAGE_BYTES;
    fence_operands(acc);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      // A: 16 K columns = 32 bytes into its 128-byte swizzled rows; B: 16 K rows =
      // 2048 bytes down each 64-column box, the boxes 8192 bytes apart.
      const unsigned long long db = smem_desc(b_stage + kk * 2048, 8192, 1024);
#pragma unroll
      for (int t = 0; t < wg_tiles_m; ++t) {
        const unsigned a = a_stage + (wg * wg_tiles_m + t) * 8192 + kk * 32;
        WgmmaSS<block_n, 1>::run(acc[t], smem_desc(a, 16, 1024), db, 1);
      }
    }
    wgmma_commit();
    wgmma_wait<1>();  // the slice before has retired: its stage may be refilled
    fence_operands(acc);
    if (kt > 0) mbar_arrive(empty + 8 * ((kt - 1) % stages));
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

// The reference with this kernel's parameters (the maps unused).
extern "C" __global__ void gemm_wgmma_tma_ref(float* C, const bf16* A, const bf16* B, const __grid_constant__ TensorMap,
                                              const __grid_constant__ TensorMap, int M, int N, int K) {
  gemm_bf16_ref_body(C, A, B, M, N, K);
}
