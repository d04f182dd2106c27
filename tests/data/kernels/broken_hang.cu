// Never returns: the flag holds zeros and is re-read through a volatile
// pointer, so the loop cannot be hoisted or removed. Must end as `timeout`.
extern "C" __global__ void spin_forever(const int* flag, float* out, int n) {
  volatile const int* f = flag;
  while (f[0] != 12345) __nanosleep(1000);
  if (threadIdx.x < n) out[threadIdx.x] = 1.0f;
}
