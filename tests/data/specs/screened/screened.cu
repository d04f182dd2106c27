// y = 2 x, written so that configurations differ in what the compiler says of
// them: compiles == 0 does not compile; scratch == 64 indexes a local array
// by a run-time value, which puts it in local memory (a stack frame).
#if compiles == 0
#error "this configuration is meant not to compile"
#endif

extern "C" __global__ void screened(float* y, const float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float buf[scratch];
#pragma unroll unroll
  for (int k = 0; k < scratch; ++k) buf[k] = x[i] * (k + 1);
  y[i] = 2.0f * buf[(i & (scratch - 1))] / ((i & (scratch - 1)) + 1);
}

extern "C" __global__ void screened_ref(float* y, const float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
