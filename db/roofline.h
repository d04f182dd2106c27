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

#include <map>

#include "db/record/record.h"
#include "db/store.h"

namespace ktune::db {

struct Roofline {
  double dram_bytes = 0;              // read + written per launch
  double dram_gbs = 0;                // dram_bytes / time
  std::optional<double> flop_per_byte;  // CUDA-core plus tensor-core operations per byte; nullopt without any
  std::optional<double> gflops;
  // "memory" or "compute": the roof that is lower at this intensity (a kernel
  // with no floating-point work is memory-bound); for a kernel whose work is
  // mostly tensor-core operations, "tensor" or "memory", whichever is nearer
  // its peak (the tensor pipes' utilisation against the bandwidth's share of
  // the copy roof); "" without the device's roofs.
  std::string bound;
  std::optional<double> of_roof;      // achieved / that roof at this intensity
};

// nullopt unless e is ok, has a time and its DRAM counters.
std::optional<Roofline> roofline(const Evaluation& e, const DeviceInfo& device);

// Every stored device's roofs, by name: the roofline of stored rows.
class Roofs {
 public:
  explicit Roofs(Store& store);
  std::optional<Roofline> of(const ResultRow& row) const;

 private:
  std::map<std::string, DeviceInfo> by_name_;
};

}  // namespace ktune::db
