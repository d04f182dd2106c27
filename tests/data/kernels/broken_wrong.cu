// Vector additions that finish cleanly but compute the wrong thing; each must
// end as wrong_result naming the bad element.

// Element 1234 is off by one.
extern "C" __global__ void add_off_by_one(float* c, const float* a, const float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i] + (i == 1234 ? 1.0f : 0.0f);
}

// Never writes the last element (the poisoned NaN must be caught).
extern "C" __global__ void add_skips_last(float* c, const float* a, const float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n - 1) c[i] = a[i] + b[i];
}
