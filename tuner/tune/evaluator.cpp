#include "tuner/tune/evaluator.h"

namespace ktune {

std::optional<double> objective_of(const Spec& spec, const db::Evaluation& e) {
  if (e.status != db::Status::Ok || !e.time_ms) return std::nullopt;
  if (spec.objective == "time") return *e.time_ms;
  if (auto it = e.metrics.find(spec.objective); it != e.metrics.end()) return it->second;
  return spec.objective_value(e.config, *e.time_ms);
}

}  // namespace ktune
