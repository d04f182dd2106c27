// One float per thread, stored `stride` floats apart (coalescing.yaml).
extern "C" __global__ void store(float* out, int n) {
  const int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i < n) out[i * stride] = static_cast<float>(i);
}
