#include "tuner/tune/profile.h"

#include <map>

#include "ktune/error.h"
#include "tuner/gpu/counters.h"
#include "tuner/tune/replay_evaluator.h"

namespace ktune::tune {

std::vector<ProfiledRow> profile_stored(const Spec& spec, ConfigEvaluator& evaluator, db::Store& store,
                                        const ProfileOptions& options) {
  const ConfigEvaluator::Offers offered = evaluator.offers();
  if (offered.recorded) throw Error::failed("hardware counters need a GPU; a replay has none");
  if (!offered.profiler) throw Error::failed("hardware counters: " + evaluator.source() + " cannot profile");
  const db::DeviceInfo device = evaluator.device();
  db::Filter f;
  f.kernel = spec.kernel.name;
  f.device = device.name;
  f.problem_size = spec_problem_size(spec);
  f.replayed = false;
  // The latest row per configuration of this spec (another spec of the same
  // kernel name measures something else).
  std::map<std::string, db::ResultRow> latest;
  for (db::ResultRow& r : store.results(f))
    if (r.spec_hash == spec.hash) {
      auto [it, fresh] = latest.try_emplace(r.config_key, r);
      if (!fresh && r.id > it->second.id) it->second = std::move(r);
    }
  std::vector<const db::ResultRow*> chosen;
  if (options.configs.empty()) {
    std::vector<db::Evaluation> evals;
    std::vector<const db::ResultRow*> rows;
    for (const auto& [key, r] : latest) {
      evals.push_back(r.eval);
      rows.push_back(&r);
    }
    for (const db::Evaluation* e : rank_results(spec, evals)) {
      if (chosen.size() >= options.top) break;
      chosen.push_back(rows[static_cast<size_t>(e - evals.data())]);
    }
    if (chosen.empty())
      throw Error::bad_input("nothing to profile: " + store.path() + " holds no successful measurement of " +
                             spec.kernel.name + " on " + device.name + " for this spec; tune it first");
  } else {
    for (const auto& c : options.configs) {
      auto it = latest.find(config_key(c));
      if (it == latest.end())
        throw Error::bad_input("configuration " + config_key(c) + " of " + spec.kernel.name + " is not stored for " +
                               device.name + "; tune or measure it first");
      chosen.push_back(&it->second);
    }
  }
  std::vector<std::string> metrics = gpu::standard_metrics();
  metrics.insert(metrics.end(), options.metrics.begin(), options.metrics.end());
  std::vector<std::vector<Value>> configs;
  for (const db::ResultRow* r : chosen) configs.push_back(r->eval.config);
  const std::vector<Measured> measured = offered.profiler->profile(configs, metrics);
  std::vector<ProfiledRow> out;
  for (size_t i = 0; i < chosen.size() && i < measured.size(); ++i) {
    ProfiledRow row;
    row.evaluation_id = chosen[i]->id;
    row.eval = chosen[i]->eval;
    row.cost_s = measured[i].cost_s;
    const db::Evaluation& got = measured[i].eval;
    if (got.status != db::Status::Ok) {
      row.note = got.reason;  // e.g. a crash under the profiler: the stored row keeps its status
    } else {
      row.note = got.reason;
      store.add_figures(row.evaluation_id, got, db::EvaluationField::Kind::Counter);
      for (const db::EvaluationField& field : db::evaluation_fields())
        if (field.kind == db::EvaluationField::Kind::Counter && field.get(got)) field.set(row.eval, field.get(got));
      for (const auto& [k, v] : got.metrics) row.eval.metrics[k] = v;
    }
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace ktune::tune
