// A 1D filter with its taps in constant memory, as Kernel Tuner's convolution
// keeps its filter: the tuned kernel and its reference read the same
// __constant__ array, which ktune fills in each configuration's module.
#ifndef taps
#define taps 17
#endif
__constant__ float weights[taps];

extern "C" __global__ void filter1d(float* out, const float* in, int n) {
  const int base = (blockIdx.x * blockDim.x + threadIdx.x) * items_per_thread;
#pragma unroll
  for (int k = 0; k < items_per_thread; ++k) {
    const int i = base + k;
    if (i >= n) return;
    float acc = 0.f;
    for (int t = 0; t < taps; ++t) acc += weights[t] * in[i + t];
    out[i] = acc;
  }
}

extern "C" __global__ void filter1d_ref(float* out, const float* in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.f;
  for (int t = 0; t < taps; ++t) acc += weights[t] * in[i + t];
  out[i] = acc;
}
