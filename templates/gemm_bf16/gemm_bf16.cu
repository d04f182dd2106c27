// gemm_bf16: C = A * B on the tensor cores; A (M x K) and B (K x N) bf16 row-major,
// C (M x N) fp32 row-major. mma.sync m16n8k16 (bf16 in, fp32 accumulate) through
// inline PTX, operands fetched from shared memory with ldmatrix (.trans for B, which
// is stored K-major), and a `stages`-deep cp.async pipeline: while the tensor cores
// work on one K slice, the next stages-1 slices are in flight from global memory, with
// one barrier per slice.
// Each block computes block_m x block_n of C with warps_m x warps_n warps; each warp
// owns a (block_m/warps_m) x (block_n/warps_n) warp tile = MI x NI mma tiles.
//
// Tunable macros:
//   block_size_x            threads = 32 * warps_m * warps_n
//   block_m, block_n        C tile per block;  block_k  K slice per pipeline stage
//   warps_m, warps_n        warp grid within the block
//   stages                  pipeline depth (2..4)
//   group_m                 block rasterisation: consecutive blocks sweep group_m block
//                           rows before moving right, so their A and B tiles share L2
//   smem_pad                bf16 elements added per shared row: 8 (16 bytes) makes the
//                           8 row addresses of each ldmatrix hit distinct banks; 0 conflicts
// Shared memory is DYNAMIC (extern): stages * (block_m * (block_k + smem_pad) +
// block_k * (block_n + smem_pad)) * 2 bytes, the spec's shared_memory expression.
// REQUIRES: M % block_m == 0, N % block_n == 0, K % block_k == 0, N and K multiples of
// 8 (16-byte rows). Grid: (N / block_n, M / block_m). sm_80 or newer.
// gemm_bf16_ref (common/gemm_bf16_ref.cuh) works with any launch geometry.
#include <cuda_bf16.h>

#include "../common/cp_async.cuh"
#include "../common/gemm_bf16_ref.cuh"

#ifndef block_m
#define block_m 128
#endif
#ifndef block_n
#define block_n 128
#endif
#ifndef block_k
#define block_k 32
#endif
#ifndef warps_m
#define warps_m 2
#endif
#ifndef warps_n
#define warps_n 2
#endif
#ifndef block_size_x
#define block_size_x (32 * warps_m * warps_n)
#endif
#ifndef stages
#define stages 3
#endif
#ifndef smem_pad
#define smem_pad 8
#endif
#ifndef group_m
#define group_m 8
#endif

typedef __nv_bfloat16 bf16;
#define WTM (block_m / warps_m)
#define WTN (block_n / warps_n)
#define MI (WTM / 16)
#define NI (WTN / 8)
#define LDA (block_k + smem_pad)  // bf16 per shared row of A (K-contiguous)
#define LDB (block_n + smem_pad)  // bf16 per shared row of B (N-contiguous)
#define A_STAGE (block_m * LDA)
#define B_STAGE (block_k * LDB)
#define A_CHUNKS (block_m * block_k / 8)  // 16-byte pieces per slice
#define B_CHUNKS (block_k * block_n / 8)

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const bf16* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const bf16* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(p)));
}
__device__ __forceinline__ void mma_bf16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Issues the cp.async copies of one K slice (A: block_m x block_k, B: block_k x block_n).
__device__ __forceinline__ void load_slice(bf16* as, bf16* bs, const bf16* __restrict__ A, const bf16* __restrict__ B,
                                           int N, int K, int m0, int n0, int k0) {
#pragma unroll
  for (int j = 0; j < A_CHUNKS / block_size_x; ++j) {
    const int c = j * block_size_x + threadIdx.x, row = c / (block_k / 8), col = (c % (block_k / 8)) * 8;
    cp_async16(as + row * LDA + col, A + (long long)(m0 + row) * K + k0 + col);
  }
#pragma unroll
  for (int j = 0; j < B_CHUNKS / block_size_x; ++j) {
    const int c = j * block_size_x + threadIdx.x, row = c / (block_n / 8), col = (c % (block_n / 8)) * 8;
    cp_async16(bs + row * LDB + col, B + (long long)(k0 + row) * N + n0 + col);
  }
}

// The warp's share of one staged slice: block_k / 16 steps of MI x NI mma each.
__device__ __forceinline__ void multiply_slice(float (&acc)[MI][NI][4], const bf16* as, const bf16* bs, int wm, int wn) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int kk = 0; kk < block_k; kk += 16) {
    unsigned af[MI][4], bfr[NI][2];
#pragma unroll
    for (int i = 0; i < MI; ++i)  // lanes 0-15 address rows 0-15 at k, lanes 16-31 the same rows at k+8
      ldmatrix_x4(af[i], as + (wm * WTM + i * 16 + (lane & 15)) * LDA + kk + (lane >> 4) * 8);
#pragma unroll
    for (int j = 0; j < NI / 2; ++j) {  // one x4.trans covers k 0-15 for two n8 tiles
      unsigned r[4];
      ldmatrix_x4_trans(r, bs + (kk + (lane & 15)) * LDB + wn * WTN + j * 16 + (lane >> 4) * 8);
      bfr[2 * j][0] = r[0]; bfr[2 * j][1] = r[1];
      bfr[2 * j + 1][0] = r[2]; bfr[2 * j + 1][1] = r[3];
    }
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j) mma_bf16(acc[i][j], af[i], bfr[j][0], bfr[j][1]);
  }
}

extern "C" __global__ void __launch_bounds__(block_size_x)
gemm_bf16(float* __restrict__ C, const bf16* __restrict__ A, const bf16* __restrict__ B, int M, int N, int K) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  bf16* As = reinterpret_cast<bf16*>(smem_raw);
  bf16* Bs = As + stages * A_STAGE;
  // Grouped order: block b of the launch gets tile (tm, tn) with tm in a band of group_m rows.
  const int tiles_m = gridDim.y, tiles_n = gridDim.x, b = blockIdx.y * tiles_n + blockIdx.x;
  const int first_m = (b / (group_m * tiles_n)) * group_m, in_group = b % (group_m * tiles_n);
  const int band = min(tiles_m - first_m, group_m);
  const int m0 = (first_m + in_group % band) * block_m, n0 = (in_group / band) * block_n;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int wm = warp / warps_n, wn = warp % warps_n;
  const int kt_count = K / block_k;

  float acc[MI][NI][4];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

#pragma unroll
  for (int s = 0; s < stages - 1; ++s) {
    if (s < kt_count) load_slice(As + s * A_STAGE, Bs + s * B_STAGE, A, B, N, K, m0, n0, s * block_k);
    cp_async_commit();  // empty groups keep the group count in step with the slices
  }
  for (int kt = 0; kt < kt_count; ++kt) {
    cp_async_wait<stages - 2>();  // slice kt has landed (for this thread's copies)...
    __syncthreads();              // ...and for everyone's; slice kt-1's stage is free again
    const int next = kt + stages - 1;
    if (next < kt_count)
      load_slice(As + (next % stages) * A_STAGE, Bs + (next % stages) * B_STAGE, A, B, N, K, m0, n0, next * block_k);
    cp_async_commit();
    multiply_slice(acc, As + (kt % stages) * A_STAGE, Bs + (kt % stages) * B_STAGE, wm, wn);
  }
  cp_async_wait<0>();

  // Accumulator layout: c0,c1 at (row lane/4, cols 2*(lane%4)+{0,1}); c2,c3 at row + 8.
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j) {
      const int row = m0 + wm * WTM + i * 16 + (lane >> 2), col = n0 + wn * WTN + j * 8 + (lane & 3) * 2;
      *reinterpret_cast<float2*>(C + (long long)row * N + col) = make_float2(acc[i][j][0], acc[i][j][1]);
      *reinterpret_cast<float2*>(C + (long long)(row + 8) * N + col) = make_float2(acc[i][j][2], acc[i][j][3]);
    }
}
