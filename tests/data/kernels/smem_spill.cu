// Static shared memory (TILE floats), a local array the compiler must place on
// the stack (indexed at run time), and, under -maxrregcount, register spills
// from ACC live accumulators.
#ifndef TILE
#define TILE 1024
#endif
#ifndef ACC
#define ACC 48
#endif

__global__ void smem_stack(const float* in, float* out, int n, int k) {
  __shared__ float tile[TILE];
  float local[256];
  for (int i = 0; i < 256; ++i) local[i] = in[(i * k + threadIdx.x) % n];
  tile[threadIdx.x % TILE] = local[(threadIdx.x * 7 + k) % 256];
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = tile[(threadIdx.x + 1) % TILE] + local[k % 256];
}

__global__ void register_pressure(const float* in, float* out, int n) {
  float acc[ACC];
#pragma unroll
  for (int j = 0; j < ACC; ++j) acc[j] = in[(threadIdx.x + j * 31) % n];
  for (int it = 0; it < n; ++it) {
    float x = in[(it + threadIdx.x) % n];
#pragma unroll
    for (int j = 0; j < ACC; ++j) acc[j] = acc[j] * x + acc[(j + 1) % ACC];
  }
  float sum = 0;
#pragma unroll
  for (int j = 0; j < ACC; ++j) sum += acc[j] * (j + 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

__global__ void __launch_bounds__(256, 2) bounded(float* out) { out[threadIdx.x] *= 2.0f; }
