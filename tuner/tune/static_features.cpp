#include "tuner/tune/static_features.h"

#include <optional>

#include "tuner/tune/kernel_build.h"

namespace ktune {

std::vector<StaticFeatures> compile_features(const Spec& spec, const Arch& arch, CompilePool& pool,
                                             std::span<const Config> configs) {
  std::vector<StaticFeatures> out(configs.size());
  std::vector<CompileRequest> requests;
  std::vector<size_t> asked;  // index in configs of each request
  for (size_t i = 0; i < configs.size(); ++i) {
    KernelBuild b = plan_build(spec, spec.space().values(configs[i]), arch);
    if (!b.request) continue;  // it cannot be launched: as good as not compiling
    requests.push_back(std::move(*b.request));
    asked.push_back(i);
  }
  const std::vector<CompileResult> results = pool.compile(requests);
  for (size_t j = 0; j < results.size(); ++j) {
    const CompileResult& r = results[j];
    StaticFeatures& f = out[asked[j]];
    f.compiled = r.ok;
    if (!r.ok) continue;
    f.registers = r.resources.registers;
    f.shared_bytes = static_cast<int>(r.resources.static_smem);
    // The stack frame, as a measurement stores it (local_bytes) and a replay
    // reads it back: register spills are what puts one there in tuned kernels.
    f.spill_bytes = static_cast<int>(r.resources.local_bytes);
    if (r.occupancy && r.occupancy->error.empty()) f.occupancy = r.occupancy->fraction;
  }
  return out;
}

}  // namespace ktune
