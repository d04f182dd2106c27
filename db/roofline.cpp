#include "db/roofline.h"

#include <algorithm>

namespace ktune::db {

std::optional<Roofline> roofline(const Evaluation& e, const DeviceInfo& device) {
  if (e.status != Status::Ok || !e.time_ms || !(*e.time_ms > 0) || !e.dram_read_bytes || !e.dram_write_bytes)
    return std::nullopt;
  Roofline r;
  r.dram_bytes = *e.dram_read_bytes + *e.dram_write_bytes;
  r.dram_gbs = r.dram_bytes / (*e.time_ms * 1e6);
  const double cores = e.flop.value_or(0), tensor = e.tensor_flop.value_or(0);
  if (cores + tensor > 0) {
    r.gflops = (cores + tensor) / (*e.time_ms * 1e6);
    if (r.dram_bytes > 0) r.flop_per_byte = (cores + tensor) / r.dram_bytes;
  }
  if (!(device.copy_gbs > 0) || !(device.fp32_gflops > 0)) return r;
  const double of_bandwidth = r.dram_gbs / device.copy_gbs;
  if (tensor > cores) {
    // The tensor cores' roof is not measured here; their pipes' own
    // utilisation (CUPTI's fraction of peak) stands for it.
    const double of_tensor = e.tensor_util.value_or(0);
    r.bound = of_tensor >= of_bandwidth ? "tensor" : "memory";
    r.of_roof = std::max(of_tensor, of_bandwidth);
    return r;
  }
  // Ridge point: the intensity where the bandwidth roof meets the FP32 roof.
  const double ridge = device.fp32_gflops / device.copy_gbs;
  const bool compute = r.gflops && r.flop_per_byte && *r.flop_per_byte >= ridge;
  r.bound = compute ? "compute" : "memory";
  r.of_roof = compute ? *r.gflops / device.fp32_gflops : of_bandwidth;
  return r;
}

Roofs::Roofs(Store& store) {
  for (const DeviceRow& d : store.devices()) by_name_[d.info.name] = d.info;
}

std::optional<Roofline> Roofs::of(const ResultRow& row) const {
  const auto it = by_name_.find(row.device);
  return roofline(row.eval, it == by_name_.end() ? DeviceInfo{} : it->second);
}

}  // namespace ktune::db
