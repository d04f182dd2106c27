#include "db/roofline.h"

#include <algorithm>

namespace ktune::db {

std::optional<Roofline> roofline(const Evaluation& e, const DeviceInfo& device) {
  if (e.status != Status::Ok || !e.time_ms || !(*e.time_ms > 0) || !e.dram_read_bytes || !e.dram_write_bytes)
    return std::nullopt;
  Roofline r;
  r.dram_bytes = *e.dram_read_bytes + *e.dram_write_bytes;
  r.dram_gbs = r.dram_bytes / (*e.time_ms * 1e6);
  if (e.flop && *e.flop > 0) {
    r.gflops = *e.flop / (*e.time_ms * 1e6);
    if (r.dram_bytes > 0) r.flop_per_byte = *e.flop / r.dram_bytes;
  }
  if (!(device.copy_gbs > 0) || !(device.fp32_gflops > 0)) return r;
  // Ridge point: the intensity where the bandwidth roof meets the compute roof.
  const double ridge = device.fp32_gflops / device.copy_gbs;
  const bool compute = r.gflops && (!r.flop_per_byte || *r.flop_per_byte >= ridge);
  r.bound = compute ? "compute" : "memory";
  r.of_roof = compute ? *r.gflops / device.fp32_gflops : r.dram_gbs / device.copy_gbs;
  return r;
}

}  // namespace ktune::db
