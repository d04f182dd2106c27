// A kernel with 32 KiB of static shared memory and a tunable dynamic part, as
// BAT's GEMM T1 asks (its SharedMemory comes on top of the kernel's arrays).
extern "C" __global__ void smem(float* out, const float* in, int n) {
  __shared__ float tile[8192];
  extern __shared__ float dyn[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? in[i] : 0.f;
  dyn[threadIdx.x] = 2.f * tile[threadIdx.x];
  __syncthreads();
  if (i < n) out[i] = dyn[threadIdx.x] + tile[threadIdx.x];
}
