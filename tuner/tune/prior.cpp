#include "tuner/tune/prior.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "tuner/tune/evaluator.h"
#include "tuner/tune/replay_evaluator.h"

namespace ktune {
namespace {

// The strategy's units: lower is better, nullopt where it failed.
std::optional<double> minimised(const Spec& spec, const db::Evaluation& e) {
  const std::optional<double> v = objective_of(spec, e);
  if (!v) return std::nullopt;
  return spec.higher_is_better ? -*v : *v;
}

void add(const Spec& spec, const db::Evaluation& e, Prior& p) {
  const std::optional<Config> c = spec.space().config_of(e.config);
  if (!c) return;
  p.observations.push_back({*c, minimised(spec, e)});
}

}  // namespace

size_t Prior::successes() const {
  return static_cast<size_t>(
      std::count_if(observations.begin(), observations.end(), [](const Observation& o) { return o.score.has_value(); }));
}

std::string Prior::describe() const {
  const size_t n = observations.size(), ok = successes();
  return std::to_string(n) + " results" + (ok == n ? "" : ", " + std::to_string(ok) + " successful,") + " on " + device +
         (problem_size.empty() ? "" : " " + problem_size) + (replayed ? " replayed" : "") + " from " + source;
}

Prior load_prior(const Spec& spec, const std::string& path, const std::string& device) {
  const ReplayEvaluator data(spec, path, device, "prior device", /*any_problem_size=*/true);
  Prior p;
  p.device = data.device().name;
  p.source = path;
  p.notes = data.notes();
  for (const auto& [key, e] : data.records()) add(spec, e, p);
  return p;
}

std::optional<Prior> prior_from_store(const Spec& spec, db::Store& store, const db::SeriesIds& tuned, bool replay) {
  std::vector<std::string> names;
  for (const Parameter& prm : spec.space().parameters()) names.push_back(prm.name);
  db::Filter f;
  f.kernel = spec.kernel.name;
  f.sort = db::Filter::Sort::Id;
  // One series per (kernel, device, problem size, replayed or measured):
  // results() holds every evaluation, so a configuration measured twice keeps
  // its latest result.
  using Key = std::tuple<int64_t, int64_t, int64_t, bool>;
  std::map<Key, std::map<std::string, db::ResultRow>> series;
  for (db::ResultRow& r : store.results(f)) {
    const Key k{r.series.kernel_id, r.series.device_id, r.series.psize_id, r.replayed};
    if (k == Key{tuned.kernel_id, tuned.device_id, tuned.psize_id, replay} || r.param_names != names) continue;
    series[k][r.config_key] = std::move(r);
  }
  std::optional<Prior> best;
  for (const auto& [k, rows] : series) {
    Prior p;
    p.source = store.path();
    for (const auto& [key, r] : rows) {
      p.device = r.device;
      p.problem_size = db::problem_size_key(r.problem_size);
      p.replayed = r.replayed;
      add(spec, r.eval, p);
    }
    if (p.successes() > 0 && (!best || p.successes() > best->successes())) best = std::move(p);
  }
  return best;
}

}  // namespace ktune
