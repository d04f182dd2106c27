// A first-pass sum over `n` floats: each of the grid's blocks writes the sum
// of the elements it strides over to out[blockIdx.x]; a second pass (or the
// host) adds those. The parameters are those of Kernel Tuner's reduction
// example, so that its script translates one to one (docs/from-kernel-tuner.md):
// block_size_x threads, `vector` floats per load, num_blocks blocks (the grid),
// loop_unroll_factor_0 the unroll of the grid-stride loop (0: the compiler's
// choice), use_shuffle a warp-shuffle final stage instead of shared memory.
#ifndef vector
#define vector 1
#endif
#ifndef loop_unroll_factor_0
#define loop_unroll_factor_0 0
#endif

template <int V> struct Vec;
template <> struct Vec<1> { using type = float; };
template <> struct Vec<2> { using type = float2; };
template <> struct Vec<4> { using type = float4; };

__device__ inline float lanes(float v) { return v; }
__device__ inline float lanes(float2 v) { return v.x + v.y; }
__device__ inline float lanes(float4 v) { return (v.x + v.y) + (v.z + v.w); }

extern "C" __global__ void sum_floats(float* out, const float* in, int n) {
  using V = typename Vec<vector>::type;
  const int chunks = n / vector;
  const V* v = reinterpret_cast<const V*>(in);
  float acc = 0.0f;
  const int stride = block_size_x * num_blocks;
#if loop_unroll_factor_0 > 0
#pragma unroll loop_unroll_factor_0
#endif
  for (int i = blockIdx.x * block_size_x + threadIdx.x; i < chunks; i += stride) acc += lanes(v[i]);
  // The tail that does not fill a vector: the first block's threads.
  if (blockIdx.x == 0)
    for (int i = chunks * vector + threadIdx.x; i < n; i += block_size_x) acc += in[i];

#if use_shuffle == 1
  for (int d = 16; d > 0; d /= 2) acc += __shfl_down_sync(0xffffffffu, acc, d);
  __shared__ float warps[block_size_x / 32];
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    acc = threadIdx.x < block_size_x / 32 ? warps[threadIdx.x] : 0.0f;
    for (int d = 16; d > 0; d /= 2) acc += __shfl_down_sync(0xffffffffu, acc, d);
  }
#else
  __shared__ float part[block_size_x];
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int s = block_size_x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  acc = part[0];
#endif
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}
