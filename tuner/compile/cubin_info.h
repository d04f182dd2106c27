// What a compiled kernel costs the hardware, read from the compiler's output
// alone (no GPU, no driver).
//
// KernelResources is filled from two independent sources:
//  * the cubin itself (an ELF file): EIATTR attributes in `.nv.info` and
//    `.nv.info.<kernel>` give registers, stack frame and launch bounds; the size
//    of `.nv.shared.<kernel>` gives static shared memory; `.nv.constantN`
//    sections give user constant memory. read_kernel_resources() parses these.
//  * the `ptxas info` lines NVRTC writes to its log under --ptxas-options=-v,
//    the only place spill traffic is reported. parse_ptxas_log() reads them.
// Figures were checked against `nvcc -Xptxas -v` and the CUDA driver's
// cuFuncGetAttribute on an H100 (see tests/compile_test.cpp).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ktune {

struct KernelResources {
  int registers = 0;               // per thread (EIATTR_REGCOUNT)
  std::size_t static_smem = 0;     // bytes of __shared__ declared in the kernel
  std::size_t local_bytes = 0;     // stack frame per thread (EIATTR_FRAME_SIZE)
  std::size_t stack_bytes = 0;     // frame plus callees' frames (EIATTR_MIN_STACK_SIZE)
  std::size_t const_bytes = 0;     // user __constant__ memory of the module
  std::size_t param_bytes = 0;     // kernel parameter block (EIATTR_CBANK_PARAM_SIZE)
  int spill_store_bytes = -1;      // from the ptxas log; -1 when the log did not say
  int spill_load_bytes = -1;
  int launch_bound_threads = 0;    // __launch_bounds__/maxntid product; 0 = none
  int max_registers = 0;           // register cap ptxas obeyed (EIATTR_MAXREG_COUNT); 0 = unknown
  int max_threads_per_block = 0;   // what the driver will allow: set by the compiler per arch

  bool operator==(const KernelResources&) const = default;
};

// One function's figures as ptxas printed them.
struct PtxasUsage {
  int registers = -1;
  int barriers = -1;
  long smem = 0;
  long stack_frame = -1;
  long spill_stores = -1;
  long spill_loads = -1;
};

// Resources of `kernel` (its lowered, i.e. mangled, name) in `cubin`.
// Returns nullopt and sets *error when the bytes are not a CUDA ELF or the
// kernel is not in it. Never throws.
std::optional<KernelResources> read_kernel_resources(std::string_view cubin,
                                                     std::string_view kernel,
                                                     std::string* error = nullptr);

// Names of all kernels (entry functions) in the cubin; empty if unreadable.
std::vector<std::string> cubin_kernel_names(std::string_view cubin);

// Per-function figures from `ptxas info` lines, keyed by mangled name. Lines
// that do not match are ignored, so any NVRTC log can be passed.
std::map<std::string, PtxasUsage> parse_ptxas_log(std::string_view log);

}  // namespace ktune
