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

// wgmma m64nNk16, bf16 x bf16 -> f32, both operands from shared memory through
// descriptors, D += A * B (scale-d 1); immediates: scale-a 1, scale-b 1, A not
// transposed (K-major), B transposed (N-major). The three are one instruction: inline
// PTX must name each of the N/2 accumulator registers, so each N is written out.
__device__ __forceinline__ void wgmma_m64n64k16(float (&d)[32], unsigned long long a, unsigned long long b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, %32, %33, p, 1, 1, 0, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(a), "l"(b), "r"(1));
}

__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], unsigned long long a, unsigned long long b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(a), "l"(b), "r"(1));
}

__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], unsigned long long a, unsigned long long b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1, 0, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(a), "l"(b), "r"(1));
}


template <int N> struct Wgmma;
template <> struct Wgmma<64> {
  static __device__ __forceinline__ void run(float (&d)[32], unsigned long long a, unsigned long long b) { wgmma_m64n64k16(d, a, b); }
};
template <> struct Wgmma<128> {
  static __device__ __forceinline__ void run(float (&d)[64], unsigned long long a, unsigned long long b) { wgmma_m64n128k16(d, a, b); }
};
template <> struct Wgmma<256> {
  static __device__ __forceinline__ void run(float (&d)[128], unsigned long long a, unsigned long long b) { wgmma_m64n256k16(d, a, b); }
};

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// cp.async writes through the generic proxy, wgmma reads through the async proxy.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// Keeps the compiler from moving accumulator reads or writes across a wgmma wait.
__device__ __forceinline__ void fence_operands(float (&d)[wg_tiles_m][ACC]) {
#pragma unroll
  for (int t = 0; t < wg_tiles_m; ++t)
#pragma unroll
    for (int i = 0; i < ACC; ++i) asm volatile("" : "+f"(d[t][i])::"memory");
}

// Shared-memory matrix descriptor: start address, leading and stride byte offsets
// (all >> 4), 128-byte swizzle (mode 1 in bits 62-63).
__device__ __forceinline__ unsigned long long smem_desc(unsigned addr, unsigned lbo, unsigned sbo) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)((lbo & 0x3FFFF) >> 4) << 16) |
         ((unsigned long long)((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
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
        Wgmma<block_n>::run(acc[t], smem_desc(a, 16, 1024), db);
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
