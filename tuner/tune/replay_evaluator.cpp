#include "tuner/tune/replay_evaluator.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "db/interchange/interchange.h"
#include "db/store.h"
#include "ktune/error.h"

namespace ktune {
namespace {

std::string joined(const std::set<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// Where the spec's problem size means something: a T1 GlobalSize grid has
// none (1), so any recording's size goes with it.
std::optional<db::ProblemSize> checked_size(const Spec& spec) {
  if (spec.grid_mode == GridMode::GlobalSize) return std::nullopt;
  db::ProblemSize ps = spec_problem_size(spec);
  if (ps.empty()) return std::nullopt;
  return ps;
}

std::string size_text(const db::ProblemSize& ps) {
  std::string s;
  for (int64_t x : ps) {
    if (!s.empty()) s += 'x';
    s += std::to_string(x);
  }
  return s.empty() ? "1" : s;
}

}  // namespace

db::ProblemSize spec_problem_size(const Spec& spec) {
  const SearchSpace& space = spec.space();
  if (space.count_valid() == 0 || spec.problem_size_tuned) return {};
  const LaunchResult geo = spec.geometry(space.values(space.at(0)));
  if (!geo.ok()) return {};
  const Dim3& p = geo.launch->problem_size;
  return db::canonical_problem_size({p[0], p[1], p[2]});
}

double ReplayEvaluator::recorded_cost_s(const db::Evaluation& e) {
  double ms = 0;
  for (const db::EvaluationField& f : db::evaluation_fields())
    if (f.kind == db::EvaluationField::Kind::Phase) ms += f.get(e).value_or(0);
  if (!e.benchmark_ms) {
    // Older records carry no benchmark time: the samples are what the GPU spent.
    double sampled = 0;
    for (double s : e.samples) sampled += s;
    ms += sampled > 0 ? sampled : e.time_ms.value_or(0) * std::max<int64_t>(e.sample_count, 1);
  }
  return ms / 1000.0;
}

namespace {

RecordedSampling recorded_sampling(const db::Evaluation& e) {
  RecordedSampling r;
  if (e.status != db::Status::Ok || !e.time_ms) return r;
  r.time_ms = *e.time_ms;
  r.samples = int(e.sample_count > 0 ? e.sample_count : int64_t(e.samples.size()));
  double sampled = 0;
  for (double x : e.samples) sampled += x;
  r.sampling_s = (e.benchmark_ms ? *e.benchmark_ms : sampled) / 1000.0;
  r.raced = e.stopped_early.value_or(0) != 0;
  return r;
}

}  // namespace

ReplayCost ReplayEvaluator::recorded_cost(const db::Evaluation& e) {
  const double cost = std::max(recorded_cost_s(e), 0.0);
  const double compile = std::min(recorded_compile_s(e), cost);
  return {compile, cost - compile, recorded_sampling(e)};
}

double ReplayEvaluator::compile_s(const Config& c) const {
  auto it = records_.find(spec_->space().config_key(c));
  return it == records_.end() ? 0.0 : recorded_compile_s(it->second);
}

std::vector<StaticFeatures> ReplayEvaluator::features(std::span<const Config> configs) {
  std::vector<StaticFeatures> out;
  for (const Config& c : configs) {
    StaticFeatures& f = out.emplace_back();
    auto it = records_.find(spec_->space().config_key(c));
    if (it == records_.end()) continue;
    const db::Evaluation& e = it->second;
    f.compiled = e.status != db::Status::CompileError;
    f.registers = static_cast<int>(e.registers.value_or(0));
    f.shared_bytes = static_cast<int>(e.shared_bytes.value_or(0));
    f.spill_bytes = static_cast<int>(e.local_bytes.value_or(0));
    f.occupancy = e.occupancy.value_or(0);
  }
  return out;
}

ReplayEvaluator::ReplayEvaluator(const Spec& spec, const std::string& data_path, const std::string& device,
                                 const std::string& device_subject, bool any_problem_size)
    : spec_(&spec), path_(data_path) {
  const std::optional<db::ProblemSize> want = any_problem_size ? std::nullopt : checked_size(spec);
  if (db::is_sqlite_file(data_path)) {
    db::StoreOptions so;
    so.read_only = true;
    db::Store store(data_path, so);
    db::Filter f;
    f.kernel = spec.kernel.name;
    f.device = device;
    f.sort = db::Filter::Sort::Id;
    store.require_known(f);
    std::vector<db::ResultRow> rows = store.results(f);
    if (want) {
      std::set<std::string> sizes;
      for (const auto& r : rows)
        if (!r.problem_size.empty()) sizes.insert(size_text(r.problem_size));
      std::erase_if(rows, [&](const db::ResultRow& r) { return !r.problem_size.empty() && r.problem_size != *want; });
      if (rows.empty() && !sizes.empty())
        throw Error::bad_input("problem size: " + data_path + " holds kernel '" + spec.kernel.name +
                               "' at problem size " + joined(sizes) + ", not at the spec's " + size_text(*want) +
                               "; a replay answers only for the size it was recorded at");
    }
    std::set<std::string> devices;
    for (const auto& r : rows) devices.insert(r.device);
    if (devices.size() > 1)
      throw Error::bad_input(device_subject + ": " + data_path + " holds results of kernel '" + spec.kernel.name +
                             "' on several devices; choose one: " + joined(devices));
    if (rows.empty())
      throw Error::bad_input(data_path + " holds no results for kernel '" + spec.kernel.name + "'");
    for (const db::DeviceRow& d : store.devices())
      if (d.info.name == *devices.begin()) device_ = d.info;
    std::vector<db::Evaluation> evals;
    for (auto& r : rows) evals.push_back(std::move(r.eval));
    adopt(rows.front().param_names, std::move(evals));
    return;
  }
  db::ResultSet rs = db::read_results_file(data_path);
  if (want && !rs.problem_size.empty() && db::canonical_problem_size(rs.problem_size) != *want)
    throw Error::bad_input("problem size: " + data_path + " was recorded at problem size " +
                           size_text(rs.problem_size) + ", not at the spec's " + size_text(*want) +
                           "; a replay answers only for the size it was recorded at");
  device_.name = device.empty() ? rs.device_name : device;
  if (device_.name.empty()) device_.name = "unknown device";
  adopt(rs.param_names, std::move(rs.evaluations));
}

void ReplayEvaluator::adopt(std::vector<std::string> names, std::vector<db::Evaluation> evals) {
  const SearchSpace& space = spec_->space();
  std::set<std::string> wanted;
  for (const Parameter& p : space.parameters()) wanted.insert(p.name);
  match_names(names, evals, wanted);
  std::set<std::string> recorded(names.begin(), names.end());
  if (recorded != wanted) {
    std::set<std::string> missing, extra;
    std::set_difference(wanted.begin(), wanted.end(), recorded.begin(), recorded.end(),
                        std::inserter(missing, missing.end()));
    std::set_difference(recorded.begin(), recorded.end(), wanted.begin(), wanted.end(),
                        std::inserter(extra, extra.end()));
    std::string msg = path_ + ": recorded parameters do not match the spec";
    if (!missing.empty()) msg += "; missing from the data: " + joined(missing);
    if (!extra.empty()) msg += "; not in the spec: " + joined(extra);
    throw Error::bad_input(msg);
  }
  std::vector<size_t> from(space.parameters().size());
  for (size_t i = 0; i < from.size(); ++i)
    from[i] = std::find(names.begin(), names.end(), space.parameters()[i].name) - names.begin();
  for (db::Evaluation& e : evals) {
    if (e.config.size() != names.size()) continue;
    std::vector<Value> ordered(from.size());
    for (size_t i = 0; i < from.size(); ++i) ordered[i] = e.config[from[i]];
    auto c = space.config_of(ordered);
    if (!c) continue;  // a value outside the spec's lists: that point is not in this space
    e.config = space.values(*c);
    // Later records win, as a resumed run's would; each configuration counts once.
    if (records_.insert_or_assign(space.config_key(*c), std::move(e)).second && space.is_valid(*c)) ++recorded_valid_;
  }
}

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

// Other tools name the same parameters otherwise: KTT writes Kernel Tuner's
// pnpoly as BLOCK_SIZE_X, TILE_SIZE, ... and adds the problem's constants
// (VERTICES = 600) as parameters of one value. A recorded name the spec
// lacks is read as the spec's name that differs from it in case only (when
// that is the one such name); one that is still unknown and holds a single
// value in every record is set aside. Each is noted; anything else stays a
// mismatch.
void ReplayEvaluator::match_names(std::vector<std::string>& names, std::vector<db::Evaluation>& evals,
                                  const std::set<std::string>& wanted) {
  for (std::string& n : names) {
    if (wanted.count(n)) continue;
    std::vector<std::string> same;
    for (const std::string& w : wanted)
      if (lower(w) == lower(n) && std::find(names.begin(), names.end(), w) == names.end()) same.push_back(w);
    if (same.size() != 1) continue;
    notes_.push_back(path_ + ": recorded parameter '" + n + "' is read as the spec's '" + same[0] +
                     "' (the names differ in case only)");
    n = same[0];
  }
  for (size_t k = names.size(); k-- > 0;) {
    if (wanted.count(names[k])) continue;
    const db::Evaluation* first = nullptr;
    bool one_value = true;
    for (const db::Evaluation& e : evals) {
      if (e.config.size() != names.size()) continue;
      if (!first) first = &e;
      one_value = one_value && e.config[k] == first->config[k];
    }
    if (!first || !one_value) continue;
    notes_.push_back(path_ + ": recorded parameter '" + names[k] + "' holds one value (" + first->config[k].str() +
                     ") in every record and is no parameter of the spec: set aside");
    for (db::Evaluation& e : evals)
      if (e.config.size() == names.size()) e.config.erase(e.config.begin() + static_cast<std::ptrdiff_t>(k));
    names.erase(names.begin() + static_cast<std::ptrdiff_t>(k));
  }
}

void ReplayEvaluator::evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on_measured) {
  for (size_t i = 0; i < configs.size(); ++i) {
    const std::vector<Value>& values = configs[i];
    Measured m;
    auto c = spec_->space().config_of(values);
    auto it = c ? records_.find(spec_->space().config_key(*c)) : records_.end();
    if (it == records_.end()) {
      m.missing = true;
      m.eval.config = values;
      m.eval.status = db::Status::Invalid;
      m.eval.reason = "not in the recorded data";
    } else {
      m.eval = it->second;
      m.cost_s = recorded_cost_s(m.eval);
    }
    if (!on_measured(i, m)) return;
  }
}

std::optional<RecordedData::RecordedPart> ReplayEvaluator::recorded_part() const {
  if (!partial()) return std::nullopt;
  const SearchSpace* space = &spec_->space();
  return RecordedPart{recorded_valid_, [this, space](const Config& c) { return records_.count(space->config_key(c)) > 0; }};
}

}  // namespace ktune
