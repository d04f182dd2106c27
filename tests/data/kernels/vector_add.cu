// c = a + b, each thread handling ELEMS_PER_THREAD elements (a -D parameter).
#include "vector_add_helpers.cuh"

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int first = (blockIdx.x * blockDim.x + threadIdx.x) * ELEMS_PER_THREAD;
#pragma unroll
  for (int k = 0; k < ELEMS_PER_THREAD; ++k) {
    int i = first + k;
    if (i < n) c[i] = combine(a[i], b[i]);
  }
}
