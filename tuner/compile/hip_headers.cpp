#include "tuner/compile/hip_headers.h"

namespace ktune {

namespace {

// The kernel-side names of HIP (thread and block indices and sizes, dynamic
// shared memory, the platform macro code tests with #ifdef), each CUDA's.
// Host-side HIP (hipMalloc, hipLaunchKernelGGL, ...) has no place in a
// kernel ktune compiles and is not named.
constexpr std::string_view kHipRuntime = R"(#pragma once
#ifndef __HIP_PLATFORM_NVIDIA__
#define __HIP_PLATFORM_NVIDIA__ 1
#endif
#define hipThreadIdx_x threadIdx.x
#define hipThreadIdx_y threadIdx.y
#define hipThreadIdx_z threadIdx.z
#define hipBlockIdx_x blockIdx.x
#define hipBlockIdx_y blockIdx.y
#define hipBlockIdx_z blockIdx.z
#define hipBlockDim_x blockDim.x
#define hipBlockDim_y blockDim.y
#define hipBlockDim_z blockDim.z
#define hipGridDim_x gridDim.x
#define hipGridDim_y gridDim.y
#define hipGridDim_z gridDim.z
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];
#define HIP_KERNEL_NAME(...) __VA_ARGS__
)";

}  // namespace

const std::vector<std::pair<std::string_view, std::string_view>>& hip_headers() {
  static const std::vector<std::pair<std::string_view, std::string_view>> headers = {
      {"hip/hip_runtime.h", kHipRuntime}};
  return headers;
}

}  // namespace ktune
