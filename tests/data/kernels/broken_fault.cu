// Kernels that fault. Each must end as runtime_error for its configuration
// while the tuning run carries on with a fresh GPU worker. Same parameters as
// a vector add, so one argument list serves them all.

// Writes 4 TiB past the output: no mapping there, so an illegal address (sticky).
extern "C" __global__ void write_out_of_bounds(float* c, const float* a, const float* b, int n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < (size_t)n) c[i + ((size_t)1 << 40)] = a[i] + b[i];
}

// Executes a trap instruction in every block.
extern "C" __global__ void trap_instruction(float* c, const float* a, const float* b, int n) {
  if (threadIdx.x == 0) __trap();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
