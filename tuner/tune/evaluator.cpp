#include "tuner/tune/evaluator.h"

#include <algorithm>
#include <cmath>

namespace ktune {

std::optional<double> objective_of(const Spec& spec, const db::Evaluation& e) {
  if (e.status != db::Status::Ok) return std::nullopt;
  if (spec.objective == "time") return e.time_ms;
  if (spec.objective == "energy") return e.time_ms ? e.energy_j : std::nullopt;
  // A recorded value first: a metric stored with the measurement, or an
  // objective only recordings hold (Kernel Tuner's hyper-parameter `score`,
  // recorded without a time).
  if (auto it = e.metrics.find(spec.objective); it != e.metrics.end()) return it->second;
  if (!e.time_ms) return std::nullopt;
  return spec.objective_value(e.config, *e.time_ms, e.energy_j);
}

std::vector<const db::Evaluation*> rank_results(const Spec& spec, const std::vector<db::Evaluation>& evals) {
  std::vector<const db::Evaluation*> r;
  for (const auto& e : evals)
    if (objective_of(spec, e)) r.push_back(&e);
  const double sign = spec.higher_is_better ? -1 : 1;
  std::stable_sort(r.begin(), r.end(), [&](auto* a, auto* b) {
    return sign * *objective_of(spec, *a) < sign * *objective_of(spec, *b);
  });
  for (size_t i = 1; i < r.size(); ++i) {
    const db::Evaluation &a = *r[i - 1], &b = *r[i];
    const double noise = std::max(a.stddev_ms.value_or(0), b.stddev_ms.value_or(0));
    if (a.time_ms && b.time_ms && std::abs(*a.time_ms - *b.time_ms) <= noise &&
        b.occupancy.value_or(0) > a.occupancy.value_or(0))
      std::swap(r[i - 1], r[i]);
  }
  return r;
}

}  // namespace ktune
