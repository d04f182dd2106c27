#include "tuner/compile/occupancy.h"

#include <cuda_occupancy.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>

#include "ktune/error.h"

namespace ktune {
namespace {

constexpr std::size_t KiB = 1024;

struct Row {
  int sm, threads_per_sm, blocks_per_sm, regs_per_block;
  std::size_t smem_per_sm_kib, optin_kib, reserved, alloc_unit;
};

// Per compute capability: CUDA C++ Programming Guide, "Technical
// Specifications per Compute Capability", and cuda_occupancy.h (CUDA 13.0)
// for blocks/SM and the shared-memory allocation unit. Every arch has 64 K
// registers per SM, at most 255 per thread, allocated per warp in units of 256.
// sm_110 follows CUDA 12.8's table for the same chip (then sm_101).
constexpr std::array<Row, 19> kRows = {{
    {50, 2048, 32, 65536, 64, 48, 0, 256},
    {52, 2048, 32, 65536, 96, 48, 0, 256},
    {53, 2048, 32, 32768, 64, 48, 0, 256},
    {60, 2048, 32, 65536, 64, 48, 0, 256},
    {61, 2048, 32, 65536, 96, 48, 0, 256},
    {62, 2048, 32, 65536, 64, 48, 0, 256},
    {70, 2048, 32, 65536, 96, 96, 0, 256},
    {72, 2048, 32, 65536, 96, 96, 0, 256},
    {75, 1024, 16, 65536, 64, 64, 0, 256},
    {80, 2048, 32, 65536, 164, 163, 1024, 128},
    {86, 1536, 16, 65536, 100, 99, 1024, 128},
    {87, 2048, 16, 65536, 164, 163, 1024, 128},
    {89, 1536, 24, 65536, 100, 99, 1024, 128},
    {90, 2048, 32, 65536, 228, 227, 1024, 128},
    {100, 2048, 32, 65536, 228, 227, 1024, 128},
    {103, 2048, 32, 65536, 228, 227, 1024, 128},
    {110, 1536, 24, 65536, 228, 227, 1024, 128},
    {120, 1536, 24, 65536, 100, 99, 1024, 128},
    {121, 1536, 24, 65536, 100, 99, 1024, 128},
}};

const std::array<ArchLimits, kRows.size()>& table() {
  static const auto limits = [] {
    std::array<ArchLimits, kRows.size()> out{};
    for (std::size_t i = 0; i < kRows.size(); ++i) {
      const Row& r = kRows[i];
      ArchLimits& l = out[i];
      l.sm = r.sm;
      l.max_threads_per_sm = r.threads_per_sm;
      l.max_warps_per_sm = r.threads_per_sm / 32;
      l.max_blocks_per_sm = r.blocks_per_sm;
      l.regs_per_block = r.regs_per_block;
      l.smem_per_sm = r.smem_per_sm_kib * KiB;
      l.smem_per_block_optin = r.optin_kib * KiB;
      l.smem_alloc_unit = r.alloc_unit;
      l.reserved_smem_per_block = r.reserved;
    }
    return out;
  }();
  return limits;
}

cudaOccDeviceProp device_prop(const ArchLimits& l) {
  cudaOccDeviceProp p;
  p.computeMajor = l.sm / 10;
  p.computeMinor = l.sm % 10;
  p.maxThreadsPerBlock = l.max_threads_per_block;
  p.maxThreadsPerMultiprocessor = l.max_threads_per_sm;
  p.regsPerBlock = l.regs_per_block;
  p.regsPerMultiprocessor = l.regs_per_sm;
  p.warpSize = 32;
  p.sharedMemPerBlock = l.smem_per_block;
  p.sharedMemPerMultiprocessor = l.smem_per_sm;
  p.numSms = 1;  // occupancy is per SM; the count only matters for grid-level questions
  p.sharedMemPerBlockOptin = l.smem_per_block_optin;
  p.reservedSharedMemPerBlock = l.reserved_smem_per_block;
  return p;
}

std::string limiter_name(unsigned factors) {
  // Several limits can tie. The architectural ceilings come first: when one of
  // them binds, using fewer registers or less shared memory would not help.
  if (factors & OCC_LIMIT_WARPS) return "warps";
  if (factors & OCC_LIMIT_BLOCKS) return "blocks";
  if (factors & OCC_LIMIT_REGISTERS) return "registers";
  if (factors & OCC_LIMIT_SHARED_MEMORY) return "shared memory";
  if (factors & OCC_LIMIT_BARRIERS) return "barriers";
  return "";
}

}  // namespace

const ArchLimits* find_arch_limits(int sm) {
  for (const ArchLimits& l : table()) {
    if (l.sm == sm) return &l;
  }
  return nullptr;
}

const ArchLimits& arch_limits(int sm) {
  if (const ArchLimits* l = find_arch_limits(sm)) return *l;
  throw Error::bad_input("no occupancy limits are known for sm_" + std::to_string(sm));
}

int kernel_max_threads_per_block(const ArchLimits& l, const KernelResources& r) {
  int threads = l.max_threads_per_block;
  if (r.launch_bound_threads > 0) threads = std::min(threads, r.launch_bound_threads);
  if (r.registers > 0) {
    // Registers go to warps in allocation units, and a block's warps are spread
    // over the SM's four sub-partitions, each with a quarter of the file.
    constexpr int kSubPartitions = 4;
    int per_warp = (r.registers * 32 + l.reg_alloc_unit - 1) / l.reg_alloc_unit * l.reg_alloc_unit;
    int warps = (l.regs_per_block / kSubPartitions / per_warp) * kSubPartitions;
    threads = std::min(threads, warps * 32);
  }
  return threads;
}

Occupancy theoretical_occupancy(const ArchLimits& l, const KernelResources& r, int block_threads,
                                std::size_t dynamic_smem) {
  Occupancy occ;
  int kernel_max = kernel_max_threads_per_block(l, r);
  if (block_threads <= 0 || block_threads > kernel_max) {
    occ.error = "block of " + std::to_string(block_threads) + " threads: this kernel allows 1.." +
                std::to_string(kernel_max) + " on sm_" + std::to_string(l.sm);
    return occ;
  }
  std::size_t smem = r.static_smem + dynamic_smem;
  if (smem > l.smem_per_block_optin) {
    occ.error = std::to_string(smem) + " bytes of shared memory per block: sm_" + std::to_string(l.sm) +
                " allows at most " + std::to_string(l.smem_per_block_optin);
    return occ;
  }
  cudaOccDeviceProp prop = device_prop(l);
  cudaOccFuncAttributes attr;
  attr.maxThreadsPerBlock = kernel_max;
  attr.numRegs = r.registers;
  attr.sharedSizeBytes = r.static_smem;
  attr.partitionedGCConfig = PARTITIONED_GC_OFF;
  // The launcher opts in to exactly the dynamic size it asks for, as it must above 48 KiB.
  attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  attr.maxDynamicSharedSizeBytes = dynamic_smem;
  attr.numBlockBarriers = 1;
  cudaOccDeviceState state;
  cudaOccResult result{};
  cudaOccError status = cudaOccMaxActiveBlocksPerMultiprocessor(&result, &prop, &attr, &state, block_threads,
                                                                dynamic_smem);
  if (status != CUDA_OCC_SUCCESS) {
    occ.error = "occupancy calculator rejected the launch on sm_" + std::to_string(l.sm);
    return occ;
  }
  occ.blocks_per_sm = result.activeBlocksPerMultiprocessor;
  occ.active_warps = occ.blocks_per_sm * ((block_threads + 31) / 32);
  occ.fraction = static_cast<double>(occ.active_warps) / l.max_warps_per_sm;
  occ.limited_by = limiter_name(result.limitingFactors);
  if (occ.blocks_per_sm == 0) occ.error = "no block fits on an SM (limited by " + occ.limited_by + ")";
  return occ;
}

}  // namespace ktune
