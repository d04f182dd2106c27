// triad: a = b + scalar * c over n floats (STREAM's triad), streaming, 12 bytes per element.
//
// Tunable macros (ktune passes every tune_param as -Dname=value):
//   block_size_x     threads per block
//   items_per_thread vectors each thread handles per pass (independent loads in flight)
//   vector_width     1, 2 or 4 floats per access (float, float2, float4)
//   unroll           1: load all items into registers first (#pragma unroll), then store;
//                    0: one load-add-store per iteration (#pragma unroll 1)
//   grid_stride      1: a fixed grid loops over the array; 0: one pass, a block per tile
// REQUIRES: a, b, c 16-byte aligned (cudaMalloc gives 256). Any n works: the
// n % vector_width tail is done by block 0 with scalar accesses.
// triad_ref computes the same with any launch geometry and no macros.

#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef items_per_thread
#define items_per_thread 4
#endif
#ifndef vector_width
#define vector_width 4
#endif
#ifndef unroll
#define unroll 1
#endif
#ifndef grid_stride
#define grid_stride 0
#endif

#include "../common/vec.cuh"  // vec_t

__device__ __forceinline__ float vfma(float x, float s, float y) { return fmaf(s, y, x); }
__device__ __forceinline__ float2 vfma(float2 x, float s, float2 y) {
  return make_float2(fmaf(s, y.x, x.x), fmaf(s, y.y, x.y));
}
__device__ __forceinline__ float4 vfma(float4 x, float s, float4 y) {
  return make_float4(fmaf(s, y.x, x.x), fmaf(s, y.y, x.y), fmaf(s, y.z, x.z), fmaf(s, y.w, x.w));
}

// Vectors one block covers in one pass; item j of thread t sits at base + j*block + t,
// so each item is a coalesced sweep of the whole block.
#define TILE ((long long)block_size_x * items_per_thread)

__device__ __forceinline__ void triad_tile(vec_t* __restrict__ a, const vec_t* __restrict__ b,
                                           const vec_t* __restrict__ c, float s, long long base, long long nv) {
  const long long first = base + threadIdx.x;
#if unroll
  vec_t rb[items_per_thread], rc[items_per_thread];
#pragma unroll
  for (int j = 0; j < items_per_thread; ++j) {
    const long long i = first + (long long)j * block_size_x;
    if (i < nv) { rb[j] = b[i]; rc[j] = c[i]; }
  }
#pragma unroll
  for (int j = 0; j < items_per_thread; ++j) {
    const long long i = first + (long long)j * block_size_x;
    if (i < nv) a[i] = vfma(rb[j], s, rc[j]);
  }
#else
#pragma unroll 1
  for (int j = 0; j < items_per_thread; ++j) {
    const long long i = first + (long long)j * block_size_x;
    if (i < nv) a[i] = vfma(b[i], s, c[i]);
  }
#endif
}

extern "C" __global__ void __launch_bounds__(block_size_x)
triad(float* __restrict__ a, const float* __restrict__ b, const float* __restrict__ c, float scalar, int n) {
  const long long nv = n / vector_width;
  vec_t* av = reinterpret_cast<vec_t*>(a);
  const vec_t* bv = reinterpret_cast<const vec_t*>(b);
  const vec_t* cv = reinterpret_cast<const vec_t*>(c);
#if grid_stride
  for (long long base = blockIdx.x * TILE; base < nv; base += gridDim.x * TILE)
    triad_tile(av, bv, cv, scalar, base, nv);
#else
  triad_tile(av, bv, cv, scalar, blockIdx.x * TILE, nv);
#endif
  if (blockIdx.x == 0)
    for (long long i = nv * vector_width + threadIdx.x; i < n; i += block_size_x) a[i] = fmaf(scalar, c[i], b[i]);
}

extern "C" __global__ void triad_ref(float* a, const float* b, const float* c, float scalar, int n) {
  const long long threads = (long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;
  const long long block = blockIdx.x + gridDim.x * (blockIdx.y + (long long)gridDim.y * blockIdx.z);
  const long long tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)
                        + block * blockDim.x * blockDim.y * blockDim.z;
  for (long long i = tid; i < n; i += threads) a[i] = b[i] + scalar * c[i];
}
