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

#include "../common/stream.cuh"  // stream(): the tiled, vectorised loop

extern "C" __global__ void __launch_bounds__(block_size_x)
triad(float* __restrict__ a, const float* __restrict__ b, const float* __restrict__ c, float scalar, int n) {
  stream(a, b, c, n, [scalar](float x, float y) { return fmaf(scalar, y, x); });
}

extern "C" __global__ void triad_ref(float* a, const float* b, const float* c, float scalar, int n) {
  const long long threads = (long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;
  const long long block = blockIdx.x + gridDim.x * (blockIdx.y + (long long)gridDim.y * blockIdx.z);
  const long long tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)
                        + block * blockDim.x * blockDim.y * blockDim.z;
  for (long long i = tid; i < n; i += threads) a[i] = b[i] + scalar * c[i];
}
