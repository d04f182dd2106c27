// Kernels that fault. Each must end as runtime_error for its configuration
// while the tuning run carries on with a fresh GPU worker.

// Writes 4 TiB past the buffer: no mapping there, so an illegal address (sticky).
extern "C" __global__ void write_out_of_bounds(float* out, int n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < (size_t)n) out[i + ((size_t)1 << 40)] = 1.0f;
}

// Executes a trap instruction.
extern "C" __global__ void trap_instruction(float* out, int n) {
  if (threadIdx.x == 0 && n > 0) __trap();
  out[0] = 0.0f;
}
