// A block sum through cub::BlockReduce, including <cub/cub.cuh> whole as
// Kernel Tuner's published examples do: NVRTC cannot compile that header (it
// pulls in host code), so the spec builds it with nvcc.
#include <cub/cub.cuh>

__global__ void block_sum(float* out, const float* in, int n) {
  typedef cub::BlockReduce<float, block_size_x> Reduce;
  __shared__ typename Reduce::TempStorage scratch;
  float v = 0.f;
  for (int k = 0; k < chunks; ++k) {
    const int i = (blockIdx.x * chunks + k) * block_size_x + threadIdx.x;
    if (i < n) v += in[i];
  }
  const float total = Reduce(scratch).Sum(v);
  if (threadIdx.x == 0) out[blockIdx.x] = total;
}

extern "C" __global__ void block_sum_ref(float* out, const float* in, int n) {
  // One thread per output: the same partial sums, in the same order of blocks.
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b * 1024 >= n) return;
  float s = 0.f;
  for (int i = b * 1024; i < b * 1024 + 1024 && i < n; ++i) s += in[i];
  out[b] = s;
}
