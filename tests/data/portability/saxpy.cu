// y = a * x + y, each block covering block_size_x * tile_size_x elements:
// thread t handles elements t, t + block_size_x, ... (coalesced per step).
extern "C" __global__ void saxpy(float* y, const float* x, float a, int n) {
  const int first = blockIdx.x * block_size_x * tile_size_x + threadIdx.x;
#pragma unroll
  for (int t = 0; t < tile_size_x; ++t) {
    const int i = first + t * block_size_x;
    if (i < n) y[i] = a * x[i] + y[i];
  }
}
