// What the attention templates share for their online softmax in bf16: -infinity
// (NVRTC has no <cmath>), the fast exp2 of the log2-domain softmax, and a pair of
// floats packed as bf16 (the register form of a bf16 matrix operand).
#pragma once
#include <cuda_bf16.h>

#define NEG_INF __int_as_float(0xff800000)

__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// Two floats as a bf16 pair, `lo` in the low half (the lower column or key).
__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<unsigned*>(&v);
}
