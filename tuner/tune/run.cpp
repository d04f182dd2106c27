#include "tuner/tune/run.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <unordered_set>

#include "ktune/error.h"
#include "search/registry.h"
#include "tuner/tune/configs_from.h"
#include "tuner/tune/replay_evaluator.h"

namespace ktune::tune {
namespace {

std::string host_name() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

// The run's budget and, where it has several, its workers: the resources it was given.
std::string budget_text(const Budget& b, size_t workers) {
  char limit[64];
  std::snprintf(limit, sizeof limit, "%.1f", b.time_limit_s);
  std::string s = "max_fevals=" + std::to_string(b.max_fevals) + ",time_limit_s=" + limit;
  if (workers > 1) s.append(",workers=").append(std::to_string(workers));
  return s;
}

// The best `k` distinct configurations of this run's results.
std::vector<std::vector<Value>> best_configs(const Spec& spec, const std::vector<db::Evaluation>& evals, size_t k) {
  std::vector<std::vector<Value>> out;
  for (const db::Evaluation* e : rank_results(spec, evals)) {
    if (out.size() == k) break;
    if (std::find(out.begin(), out.end(), e->config) == out.end()) out.push_back(e->config);
  }
  return out;
}

// The configurations as the evaluator takes them: each one's values.
std::vector<std::vector<Value>> values_of(const SearchSpace& space, std::span<const Config> configs) {
  std::vector<std::vector<Value>> values;
  for (const Config& c : configs) values.push_back(space.values(c));
  return values;
}

// What becomes of a measured result: stored, told to the observer, and its
// objective and cost handed back to the cost layer.
using Keep = std::function<EvalOutcome(const Measured&)>;

// A run once it is open in the store: what the observer is told first (the
// run's id among it), the series its results belong to and the strategy.
struct Opened {
  RunStart start;
  db::SeriesIds ids;
  std::unique_ptr<Strategy> strategy;
};

// Records the device, kernel, problem size and run in the store, and makes
// the strategy after the prior it plans its first design from.
Opened open_run(const Spec& spec, ConfigEvaluator& evaluator, db::Store& store, const RunOptions& o,
                StrategyContext& ctx) {
  Opened opened;
  RunStart& start = opened.start;
  db::SeriesIds& ids = opened.ids;
  start.device = evaluator.device();
  const RecordedData* recorded = evaluator.offers().recorded;
  start.replay = recorded != nullptr;
  start.source = evaluator.source();
  ids.device_id = store.upsert_device(start.device);
  ids.kernel_id = store.upsert_kernel(kernel_info(spec));
  ids.psize_id = store.upsert_problem_size(spec_problem_size(spec));
  db::RunInfo info;
  info.strategy = o.listed.empty() ? o.strategy : "configs_from";
  info.seed = static_cast<int64_t>(ctx.seed);
  start.workers = evaluator.workers();
  start.simulated = recorded && recorded->virtual_time().has_value();
  info.budget = budget_text(o.budget, start.workers);
  info.host = host_name();
  info.ktune_version = KTUNE_VERSION;
  info.replay = start.replay;
  info.replay_source = start.replay ? start.source : "";
  // Before the strategy is made: it plans its first design from the prior.
  if (!o.prior_path.empty()) start.prior = load_prior(spec, o.prior_path, o.prior_device);
  else if (!o.no_prior && o.listed.empty()) start.prior = prior_from_store(spec, store, ids, start.replay);
  if (start.prior) ctx.prior = start.prior->observations;
  opened.strategy = o.listed.empty() ? make_strategy(o.strategy, ctx) : listed_strategy(o.listed);
  start.run_id = store.begin_run(info);
  return opened;
}

// The cost layer's options but for measuring beside the proposals: the
// batch, the clock of the time budget, the configurations the run may
// measure (a partial recording's, RunOptions::within; noted in `start`, the
// proposals outside `within` counted in `not_within`) and the compiles ahead.
CostOptions cost_options(const RunOptions& o, ConfigEvaluator& evaluator, const SearchSpace& space, RunStart& start,
                         uint64_t& not_within) {
  CostOptions co;
  co.cancel = o.cancel;
  // A replay proposes in the same batches as a GPU run, so it searches as the GPU run would.
  // On several workers a strategy that learns nothing between batches gets
  // one batch's worth per worker (StrategyInfo::batch_per_worker); one that
  // learns keeps its batch, and the workers measure its spares meanwhile.
  const StrategyInfo& info = strategy_info(o.strategy);
  co.batch_size = o.batch             ? o.batch
                  : !o.listed.empty() ? 64 * start.workers  // nothing to learn between them: keep the compiles ahead
                                      : info.preferred_batch * (info.batch_per_worker ? start.workers : 1);
  RecordedData* recorded = evaluator.offers().recorded;
  if (recorded && recorded->virtual_time()) {
    // Simulated workers: the budget is the wall time the recorded times imply for them.
    co.clock = [recorded] { return *recorded->virtual_time(); };
  } else if (!start.replay) {
    const auto t0 = std::chrono::steady_clock::now();
    co.clock = [t0] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  }
  // A partial recording (an interrupted cache): the strategy keeps to what it holds.
  if (std::optional<RecordedData::RecordedPart> part = recorded ? recorded->recorded_part() : std::nullopt) {
    co.recorded = part->holds;
    co.recorded_count = part->valid;
    start.partial = {part->valid, space.count_valid()};
  }
  // A list to search within: the strategy keeps to it too, and to the recorded part of it.
  if (o.within) {
    auto inside = std::make_shared<std::unordered_set<Config, ConfigHash>>();
    for (const Config& c : *o.within)
      if (c.size() == space.parameters().size() && space.is_valid(c)) inside->insert(c);
    const std::function<bool(const Config&)> recorded = co.recorded;
    uint64_t count = 0;
    for (const Config& c : *inside)
      if (!recorded || recorded(c)) ++count;
    co.recorded = [inside, recorded](const Config& c) { return inside->count(c) && (!recorded || recorded(c)); };
    co.recorded_count = count;
    co.not_recorded = [inside, &not_within](const Config& c) {
      if (!inside->count(c)) ++not_within;
    };
    start.within = count;
  }
  // What the strategy expects after each batch compiles behind it (a GPU run's evaluator).
  co.ahead = [&evaluator, &space](std::span<const Config> next) { evaluator.compile_ahead(values_of(space, next)); };
  return co;
}

// The cost layer's spares, measured by the evaluator while the strategy
// proposes, each result kept as it completes.
std::function<std::vector<Config>(const CostOptions::Beside&)> measure_beside(ConfigEvaluator& evaluator,
                                                                              const SearchSpace& space, Keep keep) {
  return [&evaluator, &space, keep](const CostOptions::Beside& cb) {
    ConfigEvaluator::Beside b;
    b.propose = cb.propose;
    b.time_left = cb.time_left;
    b.batch = cb.batch;
    const std::vector<std::vector<Value>> spare = values_of(space, cb.spare);
    b.spare = spare;
    b.wanted = [&](const std::vector<Value>& values) {
      const std::optional<Config> c = space.config_of(values);
      return c && cb.wanted(*c);
    };
    b.on_measured = [&](const Measured& m) {
      const std::optional<Config> c = space.config_of(m.eval.config);
      if (!c) throw Error::failed("internal: a configuration measured beside the proposal is not of the space");
      return cb.report(*c, keep(m));
    };
    return evaluator.beside(b);
  };
}

}  // namespace

Budget spec_budget(const Spec& spec) {
  Budget b;
  b.max_fevals = spec.strategy.max_fevals.value_or(0);
  if (spec.strategy.max_fraction)
    b.max_fevals = std::max<uint64_t>(1, uint64_t(*spec.strategy.max_fraction * spec.space().count_valid()));
  b.time_limit_s = spec.strategy.time_limit_s.value_or(0);
  return b;
}

db::KernelInfo kernel_info(const Spec& spec) {
  db::KernelInfo k;
  k.name = spec.kernel.name;
  k.source_hash = spec.source_hash;
  k.spec_hash = spec.hash;
  for (const Parameter& p : spec.space().parameters()) {
    k.param_names.push_back(p.name);
    k.param_types.push_back(p.type);
  }
  return k;
}

namespace {

// The evaluator's compile features of what may be measured (`measurable`
// unset: anything; else a list or a partial recording's part); the rest read
// as not compiled, without a compile. None where the evaluator offers none.
FeatureSource features_of(CompileFeatures* offered, const std::function<bool(const Config&)>& measurable) {
  if (!offered) return {};
  return [offered, &measurable](std::span<const Config> cs) {
    if (!measurable) return offered->features(cs);
    std::vector<Config> asked;
    for (const Config& c : cs)
      if (measurable(c)) asked.push_back(c);
    const std::vector<StaticFeatures> got = offered->features(asked);
    std::vector<StaticFeatures> out(cs.size());
    for (size_t i = 0, k = 0; i < cs.size() && k < got.size(); ++i)
      if (measurable(cs[i])) out[i] = got[k++];
    return out;
  };
}

// The run's best configurations measured again, interleaved, each round stored.
void remeasure_best(const Spec& spec, ConfigEvaluator& evaluator, db::Store& store, const RunOptions& o,
                    std::pair<int64_t, const db::SeriesIds&> run, const std::vector<db::Evaluation>& evaluated,
                    RunObserver& observer) {
  Remeasurer* remeasurer = evaluator.offers().remeasurer;
  if (!remeasurer) return;
  const auto top = best_configs(spec, evaluated, o.remeasure_top);
  if (top.size() < 2) return;
  for (const Measured& m : remeasurer->remeasure(top, o.remeasure_rounds)) {
    store.add_evaluation(run.first, run.second, m.eval);
    observer.remeasured(m);
  }
}

}  // namespace

RunOutcome run(const Spec& spec, ConfigEvaluator& evaluator, db::Store& store, const RunOptions& o,
               RunObserver& observer) {
  if (o.within && !o.listed.empty())
    throw Error::bad_input("a run measures listed configurations in place of a strategy, or lets the strategy search "
                           "within a list, not both");
  const SearchSpace& space = spec.space();
  StrategyContext ctx;
  ctx.space = &space;
  ctx.seed = o.seed;
  std::function<bool(const Config&)> measurable;  // CostOptions::recorded, once known
  ctx.features = features_of(evaluator.offers().features, measurable);
  ctx.options = o.strategy_options;
  ctx.max_fevals = o.budget.max_fevals;
  Opened opened = open_run(spec, evaluator, store, o, ctx);
  RunStart& start = opened.start;
  const db::SeriesIds& ids = opened.ids;
  const int64_t run_id = start.run_id;

  uint64_t not_within = 0;
  CostOptions co = cost_options(o, evaluator, space, start, not_within);
  measurable = co.recorded;
  std::vector<db::Evaluation> evaluated;  // this run's ok and failed results, for the re-measure
  // Each result is committed as it completes, not when the batch does, and
  // the cost layer says after each whether the batch may go on.
  const Keep keep = [&](const Measured& m) {
    if (!m.missing) {
      store.add_evaluation(run_id, ids, m.eval);
      evaluated.push_back(m.eval);
    }
    observer.measured(m);
    return EvalOutcome{objective_of(spec, m.eval), m.cost_s};
  };
  auto evaluate = [&](std::span<const Config> batch, const CostLayer::Done& done) {
    evaluator.evaluate(values_of(space, batch), [&](size_t i, const Measured& m) { return done(i, keep(m)); });
  };
  // Measured while the strategy proposes (a GPU run's evaluator, or simulated GPUs).
  if (o.spares && evaluator.measures_beside()) co.beside = measure_beside(evaluator, space, keep);
  co.workers = evaluator.workers();
  CostLayer layer(space, o.budget, CostLayer::EvaluateEach(evaluate), spec.higher_is_better, co);
  std::map<std::string, db::Evaluation> reusable;
  if (!o.force)
    for (auto& [key, e] : store.measured(ids, start.replay))
      if (auto c = space.config_of(e.config); c && (!o.within || co.recorded(*c))) {
        layer.seed(*c, {objective_of(spec, e), 0.0});
        reusable[space.config_key(*c)] = std::move(e);
      }
  start.reusable = reusable.size();
  start.budget = o.budget;
  const uint64_t visitable = start.within ? *start.within : space.count_valid();
  start.total = o.budget.max_fevals ? std::min<uint64_t>(o.budget.max_fevals, visitable) : visitable;
  observer.started(start);

  RunOutcome outcome;
  outcome.run_id = run_id;
  try {
    outcome.result = layer.run(*opened.strategy, [&](const TraceEntry& t) {
      if (t.seeded) {
        const db::Evaluation& e = reusable.at(space.config_key(t.config));
        evaluated.push_back(e);
        observer.reused(e);
      }
      observer.progress(t);
    });
    if (o.remeasure_top > 1 && !start.replay && !o.cancel.requested())
      remeasure_best(spec, evaluator, store, o, {run_id, ids}, evaluated, observer);
  } catch (const Cancelled&) {
    // The re-measure, cut short: none of its rounds is stored.
    if (!o.cancel.requested()) {
      store.end_run(run_id);
      throw;
    }
  } catch (...) {
    store.end_run(run_id);
    throw;
  }
  store.end_run(run_id);
  outcome.interrupted = o.cancel.requested();
  outcome.not_within = not_within;
  return outcome;
}

}  // namespace ktune::tune
