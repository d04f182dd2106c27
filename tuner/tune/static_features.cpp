#include "tuner/tune/static_features.h"

#include <chrono>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "search/strategy/straggler.h"
#include "tuner/build/build.h"

namespace ktune {

std::vector<StaticFeatures> compile_features(const Spec& spec, const Arch& arch, CompilePool& pool,
                                             std::span<const Config> configs,
                                             const std::function<void(size_t, const StaticFeatures&)>& each,
                                             const std::function<bool()>& abandon) {
  std::vector<StaticFeatures> out(configs.size());
  std::vector<LaunchResult> launches;
  std::vector<CompileRequest> requests;
  std::vector<size_t> asked;  // index in configs of each request
  for (size_t i = 0; i < configs.size(); ++i) {
    BuildPlan p = plan_build(spec, spec.space().values(configs[i]), arch);
    if (!p.request) continue;  // it cannot be launched: as good as not compiling
    launches.push_back(std::move(p.launch));
    requests.push_back(std::move(*p.request));
    asked.push_back(i);
  }
  std::vector<CompilePool::Ticket> tickets;
  std::unordered_map<CompilePool::Ticket, size_t> index_of;  // into asked
  const auto start = std::chrono::steady_clock::now();
  std::vector<double> ended_s;  // compile seconds of those ended, cache hits left out (the straggler rule's)
  try {
    size_t started = 0;  // compiles, not cache hits (answered at submit)
    for (size_t j = 0; j < requests.size(); ++j) {
      tickets.push_back(pool.submit(std::move(requests[j])));
      index_of[tickets.back()] = j;
      started += !pool.ready(tickets.back());
    }
    while (!tickets.empty()) {
      const double patience = StragglerRule::patience(ended_s, started, pool.workers());
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= patience) {
        // The rest go on compiling for a later request or measurement
        // (the cubin cache), not known yet here.
        for (const CompilePool::Ticket t : tickets) out[asked[index_of.at(t)]].pending = true;
        pool.release(tickets);
        break;
      }
      std::optional<std::pair<CompilePool::Ticket, CompileResult>> got =
          abandon || std::isfinite(patience) ? pool.take_any_for(tickets, std::chrono::milliseconds(20))
                                             : pool.take_any(tickets);
      if (!got) {
        if (!abandon || !abandon()) continue;
        pool.cancel(tickets);
        break;
      }
      auto& [ticket, result] = *got;
      const size_t j = index_of.at(ticket);
      StaticFeatures& f = out[asked[j]];
      if (!result.cache_hit) ended_s.push_back(result.compile_ms / 1000);
      // The figures a measurement stores and a replay reads back
      // (ReplayEvaluator::features); the stack frame (local_bytes) is the
      // spill figure: register spills are what puts one there in tuned kernels.
      db::Evaluation e;
      record_build(finish_build(launches[j], std::move(result)), e);
      f.compiled = e.status != db::Status::CompileError;
      f.registers = static_cast<int>(e.registers.value_or(0));
      f.shared_bytes = static_cast<int>(e.shared_bytes.value_or(0));
      f.spill_bytes = static_cast<int>(e.local_bytes.value_or(0));
      f.occupancy = e.occupancy.value_or(0);
      if (each) each(asked[j], f);
    }
  } catch (...) {
    pool.cancel(tickets);
    throw;
  }
  return out;
}

}  // namespace ktune
