// HIP's kernel-language header for kernels written for HIP (or put through
// hipify) and compiled here for an NVIDIA GPU. On NVIDIA, HIP's kernel
// language is CUDA's under other names; its own header for that platform
// includes the CUDA runtime, which NVRTC cannot read. The benchmark hub's
// dedispersion kernel as published (`dedispersion.cu.hip`, a T1 file saying
// Language CUDA) is CUDA with `#include "hip/hip_runtime.h"` on top.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

namespace ktune {

// (include name, text) of the HIP headers ktune supplies: to NVRTC in
// memory, to nvcc in a scratch include folder searched last.
const std::vector<std::pair<std::string_view, std::string_view>>& hip_headers();

}  // namespace ktune
