// The C and C++ standard headers a CUDA kernel includes out of habit
// (<math.h>, <stdint.h>, <cstdint>, <limits.h>, <assert.h>, ...), which nvcc
// finds on the host compiler's path and NVRTC, having no host compiler, does
// not. Each is a small header over what NVRTC does have: the device math
// functions it declares itself, and CCCL's <cuda/std/...> (libcu++) from the
// toolkit. They are handed to NVRTC in memory, so the ktune binary needs no
// folder of its own on the GPU host.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

namespace ktune {

// (include name, text) of every standard header ktune supplies to NVRTC.
const std::vector<std::pair<std::string_view, std::string_view>>& nvrtc_std_headers();

}  // namespace ktune
