// Target architectures and the theoretical occupancy of a kernel on them,
// computed without a GPU.
//
// ArchLimits is the per-SM
// resource table of a compute capability, from NVIDIA's "Technical
// Specifications per Compute Capability" and the toolkit's cuda_occupancy.h.
// theoretical_occupancy() feeds those limits and a kernel's KernelResources to
// cuda_occupancy.h's calculator (the same code the CUDA runtime's occupancy
// API uses), so the answer matches cudaOccupancyMaxActiveBlocksPerMultiprocessor
// on a real device of that capability with the default shared-memory carveout.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "tuner/base/arch.h"
#include "tuner/compile/cubin_info.h"

namespace ktune {

struct ArchLimits {
  int sm = 0;
  int max_threads_per_block = 1024;
  int max_threads_per_sm = 0;
  int max_warps_per_sm = 0;
  int max_blocks_per_sm = 0;
  int regs_per_sm = 65536;
  int regs_per_block = 65536;
  int max_regs_per_thread = 255;
  int reg_alloc_unit = 256;              // registers, allocated per warp
  std::size_t smem_per_sm = 0;           // bytes, at the largest carveout
  std::size_t smem_per_block = 48 * 1024;  // without opt-in
  std::size_t smem_per_block_optin = 0;  // with cuFuncSetAttribute opt-in
  std::size_t smem_alloc_unit = 0;
  std::size_t reserved_smem_per_block = 0;  // taken by the driver per block
};

// Limits for a compute capability, or nullptr when it is not in the table.
const ArchLimits* find_arch_limits(int sm);
// As find_arch_limits(), but throws Error::bad_input for an unknown arch.
const ArchLimits& arch_limits(int sm);

// The largest block the driver lets this kernel launch with on `limits`'s
// arch: the architectural maximum, cut by __launch_bounds__ and by the
// register file (the figure cuFuncGetAttribute(MAX_THREADS_PER_BLOCK) reports).
int kernel_max_threads_per_block(const ArchLimits& limits, const KernelResources& r);

struct Occupancy {
  int blocks_per_sm = 0;
  int active_warps = 0;       // per SM
  double fraction = 0;        // active warps / max warps per SM, in [0, 1]
  std::string limited_by;     // "warps", "registers", "shared memory", "blocks", ... ("" if none)
  std::string error;          // why the launch is impossible ("" if possible)
};

// Theoretical occupancy of a kernel launched with `block_threads` threads and
// `dynamic_smem` bytes of dynamic shared memory (opting in above 48 KiB).
// An impossible launch (block too large, too much shared memory) gives
// blocks_per_sm == 0 and a reason in `error`; it never throws.
Occupancy theoretical_occupancy(const ArchLimits& limits, const KernelResources& r, int block_threads,
                                std::size_t dynamic_smem = 0);

}  // namespace ktune
