extern "C" __global__ void scale(float* x, int n) {
  int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}
