// Kernel for tests/data/specs/good/full.yaml (template mode: the block size and
// use_shared are template arguments; the other parameters arrive as -D).
template <int block_size_x, bool use_shared>
__global__ void stencil(float* out, double* inout, const float* in, const int* idx, const __half* gen,
                        const unsigned char* raw, const __nv_bfloat16* plain, int n, float alpha) {
  int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i < n) out[i] = alpha * in[i];
}

extern "C" __global__ void stencil_ref(float* out, double* inout, const float* in, const int* idx,
                                       const __half* gen, const unsigned char* raw, const __nv_bfloat16* plain,
                                       int n, float alpha) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = alpha * in[i];
}
