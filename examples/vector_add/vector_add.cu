// ktune's first example: c = a + b, tuned over the block size and the number
// of elements each thread handles. Tunable parameters arrive as -D defines;
// the #ifndef defaults let the reference kernel compile without them.
#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef tile_size_x
#define tile_size_x 1
#endif

extern "C" __global__ void vector_add(float* c, const float* a, const float* b, int n) {
  // Each block covers block_size_x * tile_size_x consecutive elements; thread t
  // handles t, t + block_size_x, ... so that warps stay coalesced.
  int base = blockIdx.x * block_size_x * tile_size_x + threadIdx.x;
#pragma unroll
  for (int k = 0; k < tile_size_x; ++k) {
    int i = base + k * block_size_x;
    if (i < n) c[i] = a[i] + b[i];
  }
}

// The reference: one element per thread, no tuning.
extern "C" __global__ void vector_add_ref(float* c, const float* a, const float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
