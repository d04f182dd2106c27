// The streaming loop of vector_add and triad: out[i] = op(x[i], y[i]) over n floats,
// read as vec_t vectors. Expects the macros block_size_x, items_per_thread,
// vector_width, unroll and grid_stride (see either template's header).
//
// Item j of thread t sits at base + j*block + t, so each item is a coalesced sweep of
// the whole block. unroll=1 loads every item before the first store, which puts
// items_per_thread independent loads in flight; grid_stride=1 loops a fixed grid
// over the array. Block 0 does the n % vector_width tail with scalar accesses.
#pragma once
#include "vec.cuh"  // vec_t

template <class Op> __device__ __forceinline__ float lanes(Op op, float x, float y) { return op(x, y); }
template <class Op> __device__ __forceinline__ float2 lanes(Op op, float2 x, float2 y) {
  return make_float2(op(x.x, y.x), op(x.y, y.y));
}
template <class Op> __device__ __forceinline__ float4 lanes(Op op, float4 x, float4 y) {
  return make_float4(op(x.x, y.x), op(x.y, y.y), op(x.z, y.z), op(x.w, y.w));
}

// Vectors one block covers in one pass.
#define STREAM_TILE ((long long)block_size_x * items_per_thread)

template <class Op>
__device__ __forceinline__ void stream_tile(vec_t* __restrict__ out, const vec_t* __restrict__ x,
                                            const vec_t* __restrict__ y, long long base, long long nv, Op op) {
  const long long first = base + threadIdx.x;
#if unroll
  vec_t rx[items_per_thread], ry[items_per_thread];
#pragma unroll
  for (int j = 0; j < items_per_thread; ++j) {
    const long long i = first + (long long)j * block_size_x;
    if (i < nv) { rx[j] = x[i]; ry[j] = y[i]; }
  }
#pragma unroll
  for (int j = 0; j < items_per_thread; ++j) {
    const long long i = first + (long long)j * block_size_x;
    if (i < nv) out[i] = lanes(op, rx[j], ry[j]);
  }
#else
#pragma unroll 1
  for (int j = 0; j < items_per_thread; ++j) {
    const long long i = first + (long long)j * block_size_x;
    if (i < nv) out[i] = lanes(op, x[i], y[i]);
  }
#endif
}

template <class Op>
__device__ __forceinline__ void stream(float* __restrict__ out, const float* __restrict__ x,
                                       const float* __restrict__ y, int n, Op op) {
  const long long nv = n / vector_width;
  vec_t* ov = reinterpret_cast<vec_t*>(out);
  const vec_t* xv = reinterpret_cast<const vec_t*>(x);
  const vec_t* yv = reinterpret_cast<const vec_t*>(y);
#if grid_stride
  for (long long base = blockIdx.x * STREAM_TILE; base < nv; base += gridDim.x * STREAM_TILE)
    stream_tile(ov, xv, yv, base, nv, op);
#else
  stream_tile(ov, xv, yv, blockIdx.x * STREAM_TILE, nv, op);
#endif
  if (blockIdx.x == 0)
    for (long long i = nv * vector_width + threadIdx.x; i < n; i += block_size_x) out[i] = op(x[i], y[i]);
}
