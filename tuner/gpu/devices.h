// What ktune knows about one CUDA device.
//
// DeviceProperties is a plain record filled from the driver (and NVML where
// available); printing it as JSON or a table is the command line's business.
// query_device() needs a Ready driver and so initialises CUDA in the calling
// process; probe_devices() (tuner/gpu/engine.h) asks a worker instead and
// leaves the calling process CUDA-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tuner/gpu/driver.h"

namespace ktune::gpu {

// What the driver reports of a device: name, capability and limits. The
// stored description of a device (db::DeviceInfo) is made from it by one
// converter, GpuEvaluator::device() (tuner/tune/gpu_evaluator.h).
struct DeviceProperties {
  int ordinal = 0;
  std::string name;
  std::string uuid;              // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::uint64_t total_memory = 0;    // bytes
  int max_sm_clock_mhz = 0;          // NVML max clock, else the driver's rated clock
  int max_mem_clock_mhz = 0;
  int memory_bus_width = 0;          // bits
  int l2_bytes = 0;
  int smem_per_block = 0;            // without opt-in (48 KiB)
  int smem_per_block_optin = 0;      // ceiling for cuFuncSetAttribute
  int smem_per_sm = 0;
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int regs_per_block = 0;
  int regs_per_sm = 0;
  int warp_size = 0;
  int max_block_dim[3] = {0, 0, 0};
  int max_grid_dim[3] = {0, 0, 0};
  int cuda_version = 0;              // cuDriverGetVersion: 13000 = CUDA 13.0
  std::string driver_version;        // NVML's release string, "" without NVML

  // "sm_90"
  std::string arch() const;
};

// REQUIRES: api comes from a Ready driver; 0 <= ordinal < device count.
DeviceProperties query_device(const CudaApi& api, int ordinal, int cuda_version);

// Every device the driver sees. Throws CudaError on a driver failure.
std::vector<DeviceProperties> query_all_devices(const CudaApi& api, int cuda_version);

// "GPU-" + the 16 UUID bytes in nvidia-smi's 8-4-4-4-12 grouping.
std::string format_uuid(const unsigned char bytes[16]);

}  // namespace ktune::gpu
