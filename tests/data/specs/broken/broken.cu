// A kernel whose `fault_mode` parameter selects a failure, for the GPU test that a
// tuning run survives every kind of broken configuration and still picks the
// right winner: 0 correct, 1 out-of-bounds write, 2 never returns,
// 3 one wrong element.
#ifndef fault_mode
#define fault_mode 0
#endif

extern "C" __global__ void broken(float* c, const float* a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = 2.0f * a[i];
  if (fault_mode == 1 && i == n - 1) c[i + (1 << 30)] = v;  // far outside the allocation
  if (fault_mode == 2) {
    volatile const float* p = a;
    while (p[0] >= 0.0f) {}  // inputs are in [0, 1): loops forever
  }
  if (fault_mode == 3 && i == 1234) v += 1.0f;
  c[i] = v;
}

extern "C" __global__ void broken_ref(float* c, const float* a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = 2.0f * a[i];
}
