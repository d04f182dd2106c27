// Where an evaluation sits on its device's roofline.
//
// From a profiled evaluation's counters (DRAM bytes, floating-point
// operations) and ktune's time, and the device's measured roofs (copy
// bandwidth, FP32 FMA throughput; DeviceInfo::copy_gbs, fp32_gflops): the
// arithmetic intensity, the achieved bandwidth and throughput, which roof
// bounds the kernel at that intensity, and how close it comes to it.
#pragma once

#include <optional>
#include <string>

#include "db/record/record.h"

namespace ktune::db {

struct Roofline {
  double dram_bytes = 0;              // read + written per launch
  double dram_gbs = 0;                // dram_bytes / time
  std::optional<double> flop_per_byte;  // nullopt when no floating-point operation was counted
  std::optional<double> gflops;
  // "memory" or "compute": the roof that is lower at this intensity (a kernel
  // with no floating-point work is memory-bound); "" without the device's roofs.
  std::string bound;
  std::optional<double> of_roof;      // achieved / that roof at this intensity
};

// nullopt unless e is ok, has a time and its DRAM counters.
std::optional<Roofline> roofline(const Evaluation& e, const DeviceInfo& device);

}  // namespace ktune::db
