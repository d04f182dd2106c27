#include "tuner/tune/static_features.h"

#include <chrono>
#include <optional>
#include <unordered_map>

#include "tuner/tune/kernel_build.h"

namespace ktune {

std::vector<StaticFeatures> compile_features(const Spec& spec, const Arch& arch, CompilePool& pool,
                                             std::span<const Config> configs,
                                             const std::function<void(size_t, const StaticFeatures&)>& each,
                                             const std::function<bool()>& abandon) {
  std::vector<StaticFeatures> out(configs.size());
  std::vector<CompileRequest> requests;
  std::vector<size_t> asked;  // index in configs of each request
  for (size_t i = 0; i < configs.size(); ++i) {
    KernelBuild b = plan_build(spec, spec.space().values(configs[i]), arch);
    if (!b.request) continue;  // it cannot be launched: as good as not compiling
    requests.push_back(std::move(*b.request));
    asked.push_back(i);
  }
  std::vector<CompilePool::Ticket> tickets;
  std::unordered_map<CompilePool::Ticket, size_t> index_of;  // into asked
  try {
    for (size_t j = 0; j < requests.size(); ++j) {
      tickets.push_back(pool.submit(std::move(requests[j])));
      index_of[tickets.back()] = j;
    }
    while (!tickets.empty()) {
      std::optional<std::pair<CompilePool::Ticket, CompileResult>> got =
          abandon ? pool.take_any_for(tickets, std::chrono::milliseconds(20)) : pool.take_any(tickets);
      if (!got) {
        if (!abandon()) continue;
        pool.cancel(tickets);
        break;
      }
      const auto& [ticket, r] = *got;
      StaticFeatures& f = out[asked[index_of.at(ticket)]];
      f.compiled = r.ok;
      if (r.ok) {
        f.registers = r.resources.registers;
        f.shared_bytes = static_cast<int>(r.resources.static_smem);
        // The stack frame, as a measurement stores it (local_bytes) and a replay
        // reads it back: register spills are what puts one there in tuned kernels.
        f.spill_bytes = static_cast<int>(r.resources.local_bytes);
        if (r.occupancy && r.occupancy->error.empty()) f.occupancy = r.occupancy->fraction;
      }
      if (each) each(asked[index_of.at(ticket)], f);
    }
  } catch (...) {
    pool.cancel(tickets);
    throw;
  }
  return out;
}

}  // namespace ktune
