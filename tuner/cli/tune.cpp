// `ktune tune SPEC`: the tuning loop. A strategy proposes configurations, the
// cost layer enforces the budget, an evaluator measures them (a GPU now, or a
// replay of recorded measurements with --simulate) and the store commits each
// evaluation as it completes. Configurations already measured for the same
// spec, device and problem size are reused (resume) unless --force.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>

#include "db/store.h"
#include "search/strategy/cost.h"
#include "ktune/error.h"
#include "tuner/cli/cli.h"
#include "tuner/cli/print/json.h"
#include "tuner/tune/configs_from.h"
#include "tuner/tune/gpu_evaluator.h"
#include "tuner/tune/prior.h"
#include "tuner/cli/print/progress.h"
#include "tuner/tune/replay_evaluator.h"
#include "tuner/spec/spec.h"
#include "tuner/cli/print/table.h"
#include "tuner/cli/print/tune_report.h"

namespace ktune::cli {
namespace {


struct TuneOptions : ResultsOptions {
  std::string spec;
  std::string verify;  // --verify first-valid
  std::vector<std::string> sets;  // --set NAME=VALUE: spec constants overridden
  std::string strategy;
  std::optional<uint64_t> max_fevals;
  std::string time_limit;
  std::optional<uint64_t> seed;
  int gpu = 0;
  std::string simulate;
  std::string prior;  // --prior DATA; default: the database's own results of the kernel elsewhere
  std::string prior_device;
  bool no_prior = false;
  bool force = false;
  bool cold = false;
  std::optional<double> warmup_ms;
  size_t batch = 0;
  double timeout_s = 0;
  std::string compile_timeout;
  int top = 10;
  std::string configs_from;  // --configs-from DEVICE: measure its --top fastest configurations
};

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

std::string host_name() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

std::unique_ptr<ConfigEvaluator> make_evaluator(const Spec& spec, const TuneOptions& o) {
  if (!o.simulate.empty()) return std::make_unique<ReplayEvaluator>(spec, o.simulate, o.device);
  GpuSessionOptions go;
  go.gpu = o.gpu;
  go.cold = o.cold;
  if (o.warmup_ms) {
    if (!(*o.warmup_ms >= 0) || *o.warmup_ms > 10000) throw Error::bad_input("--warmup: milliseconds from 0 to 10000");
    go.warm_warmup_ms = go.idle_warmup_ms = *o.warmup_ms;
  }
  go.timeout_s = o.timeout_s;
  if (!o.compile_timeout.empty()) go.compile_timeout_s = duration_option("--compile-timeout", o.compile_timeout);
  go.interrupt = &interrupted();
  return std::make_unique<GpuSession>(spec, go);
}

StrategyContext strategy_context(const Spec& spec, const TuneOptions& o, ConfigEvaluator& evaluator) {
  StrategyContext ctx;
  ctx.space = &spec.space();
  ctx.seed = o.seed.value_or(spec.strategy.seed.value_or(1));
  ctx.features = [&evaluator](std::span<const Config> cs) { return evaluator.features(cs); };
  return ctx;
}

int run_tune(const TuneOptions& o) {
  Spec loaded = load_spec(o.spec, parse_constant_overrides(o.sets));
  if (!o.verify.empty()) {
    if (o.verify != "first-valid") throw Error::bad_input("--verify: 'first-valid' is the one choice, not '" + o.verify + "'");
    loaded.verify_against_first_valid();
  }
  const Spec spec = std::move(loaded);
  if (o.simulate.empty()) spec.require_runnable();  // before the notes: a GPU run needs them
  for (const std::string& n : spec.notes) std::cerr << "ktune: note: " << n << '\n';
  require_valid_configurations(spec);
  const SearchSpace& space = spec.space();
  // Named on the command line (with its options), else the spec's, else the
  // default; Kernel Tuner's names and option names are read as ktune's.
  const std::string named = !o.strategy.empty() ? o.strategy
                            : !spec.strategy.name.empty() ? spec.strategy.name : default_strategy_name();
  const bool spec_named = named.substr(0, named.find(':')) == spec.strategy.name;  // its options apply
  const ResolvedStrategy chosen =
      strategy_option(named, spec_named ? spec.strategy.options : std::map<std::string, Value, std::less<>>{});
  const std::string& strategy = chosen.name;
  Budget budget;
  budget.max_fevals = o.max_fevals.value_or(spec.strategy.max_fevals.value_or(0));
  if (!o.max_fevals && spec.strategy.max_fraction)
    budget.max_fevals = std::max<uint64_t>(1, uint64_t(*spec.strategy.max_fraction * space.count_valid()));
  budget.time_limit_s = o.time_limit.empty() ? spec.strategy.time_limit_s.value_or(0) : duration_option("--time-limit", o.time_limit);

  db::Store store(o.resolved_db());  // opened for writing before anything is measured
  std::optional<ConfigsFrom> from;    // --configs-from: another device's fastest, in place of a strategy
  if (!o.configs_from.empty()) {
    from = configs_from(spec, store, resolved_device(store, o.configs_from), size_t(std::max(o.top, 1)));
    if (!o.max_fevals) budget.max_fevals = from->configs.size();
    std::cerr << "ktune: measuring " << from->describe() << '\n';
  }
  std::unique_ptr<ConfigEvaluator> evaluator = make_evaluator(spec, o);
  StrategyContext ctx = strategy_context(spec, o, *evaluator);
  ctx.options = chosen.options;
  ctx.max_fevals = budget.max_fevals;

  const db::DeviceInfo device = evaluator->device();
  db::SeriesIds ids;
  ids.device_id = store.upsert_device(device);
  ids.kernel_id = store.upsert_kernel(kernel_info(spec));
  ids.psize_id = store.upsert_problem_size(spec_problem_size(spec));
  db::RunInfo run;
  run.strategy = from ? "configs_from" : strategy;
  run.seed = static_cast<int64_t>(ctx.seed);
  run.budget = "max_fevals=" + std::to_string(budget.max_fevals) + ",time_limit_s=" + fixed(budget.time_limit_s, 1);
  run.host = host_name();
  run.ktune_version = KTUNE_VERSION;
  run.replay = evaluator->replay();
  run.replay_source = run.replay ? evaluator->source() : "";
  // Set before the strategy is made: it plans its first design from it.
  std::optional<Prior> prior;
  if (!o.prior.empty()) prior = load_prior(spec, o.prior, o.prior_device);
  else if (!o.no_prior && !from) prior = prior_from_store(spec, store, ids, run.replay);
  if (prior) ctx.prior = prior->observations;
  std::unique_ptr<Strategy> strat = from ? listed_strategy(from->configs) : make_strategy(strategy, ctx);
  const int64_t run_id = store.begin_run(run);

  TuneReport report(spec, device, run.replay, evaluator->source(), !o.json);
  if (prior) report.set_prior(*prior);
  CostOptions co;
  // A batch is what the compile pool works on ahead of the GPU. Strategies
  // that learn from each result get small batches; those that do not
  // (exhaustive, random) get large ones, so compiles keep ahead of the GPU.
  // A replay proposes in the same batches, so it searches as the GPU run would.
  const bool adaptive = !from && strategy != "brute_force" && strategy != "random_sample";
  co.batch_size = o.batch ? o.batch : adaptive ? 8 : 64;
  if (!run.replay) {
    const auto t0 = std::chrono::steady_clock::now();
    co.clock = [t0] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  }
  // Each result is committed as it completes, not when the batch does, and
  // the cost layer says after each whether the batch may go on.
  auto evaluate = [&](std::span<const Config> batch, const CostLayer::Done& done) {
    std::vector<std::vector<Value>> values;
    for (const Config& c : batch) values.push_back(space.values(c));
    evaluator->evaluate(values, [&](size_t i, const Measured& m) {
      if (!m.missing) store.add_evaluation(run_id, ids, m.eval);
      report.add(m);
      return done(i, {objective_of(spec, m.eval), m.cost_s}) && !interrupted();
    });
    if (interrupted()) throw Error::failed("interrupted");
  };
  // A partial recording (an interrupted cache): the strategy keeps to what it holds.
  if (const auto* rec = dynamic_cast<const ReplayEvaluator*>(evaluator.get()); rec && rec->partial()) {
    co.recorded = [rec, &space](const Config& c) { return rec->records().count(space.key(c)) > 0; };
    co.recorded_count = rec->recorded_valid();
    report.set_partial(rec->recorded_valid(), space.count_valid());
  }
  CostLayer layer(space, budget, CostLayer::EvaluateEach(evaluate), spec.higher_is_better, co);
  // This series' results in the database: reused when the strategy proposes
  // them, each counted toward --max-fevals as Kernel Tuner counts a cache hit.
  std::map<std::string, db::Evaluation> reusable;
  if (!o.force)
    for (auto& [key, e] : store.measured(ids, run.replay))
      if (auto c = space.config_of(e.config)) {
        layer.seed(*c, {objective_of(spec, e), 0.0});
        reusable[space.key(*c)] = std::move(e);
      }
  report.set_reusable(reusable.size());

  RunResult result;
  try {
    const CatchInterrupt ctrl_c;
    report.start(budget.max_fevals ? std::min<uint64_t>(budget.max_fevals, space.count_valid()) : space.count_valid());
    result = layer.run(*strat, [&](const TraceEntry& t) {
      if (t.seeded) report.add_resumed(reusable.at(space.key(t.config)));
      report.progress(t);
    });
  } catch (const Error& e) {
    store.end_run(run_id);
    if (!interrupted()) throw;
    report.finish_interrupted(std::cerr);
    return 130;
  }
  store.end_run(run_id);
  if (auto* gpu = dynamic_cast<GpuSession*>(evaluator.get())) report.confirm_top(*gpu, 3);
  report.finish(result, o.json, o.top, run_id);
  return report.any_ok() ? 0 : 1;
}

}  // namespace

void add_tune_command(CLI::App& app, CommandResult& result) {
  auto o = std::make_shared<TuneOptions>();
  CLI::App* sub = app.add_subcommand("tune", "Tune a spec on a GPU, or replay recorded measurements (--simulate)");
  sub->add_option("spec", o->spec, "tuning spec (YAML or T1 JSON)")->required();
  sub->add_option("--set", o->sets, "override a constant of the spec: NAME=VALUE (repeatable)");
  sub->add_option("--strategy", o->strategy, std::string("search strategy (default: the spec's, else ") +
                                                 default_strategy_name() + "); see `ktune strategies list`");
  sub->add_option("--max-fevals", o->max_fevals, "at most N measured configurations");
  sub->add_option("--time-limit", o->time_limit, "wall-time budget (replay: recorded time), e.g. 90s, 10m");
  sub->add_option("--seed", o->seed, "seed for the strategy");
  sub->add_option("--gpu", o->gpu, "GPU index");
  sub->add_option("--verify", o->verify,
                  "first-valid: check every configuration's outputs against the first that runs (for a spec that "
                  "does not verify, e.g. a T1 file)");
  sub->add_option("--simulate", o->simulate, "replay recorded measurements: a ktune database or Kernel Tuner cache");
  CLI::Option* prior = sub->add_option("--prior", o->prior,
                  "results of the same kernel measured elsewhere (a ktune database or Kernel Tuner cache): the "
                  "strategy starts from what ranked well there (default: this database's series of the kernel "
                  "on another device or problem size with the most results)");
  sub->add_option("--prior-device", o->prior_device, "which device's results of --prior, where it holds several");
  sub->add_flag("--no-prior", o->no_prior, "start without a prior, not even the database's")->excludes(prior);
  sub->add_flag("--force", o->force, "measure again what the database already holds");
  sub->add_flag("--cold", o->cold, "flush the L2 cache before every sample");
  sub->add_option("--warmup", o->warmup_ms, "milliseconds of launches before every configuration's timed samples (default: 20 for the first and after the GPU idled 250 ms, 2 while it is kept busy)");
  sub->add_option("--timeout", o->timeout_s,
                  "seconds a launch batch may take before the kernel counts as hung "
                  "(default: from the best time so far, at least 1 s; 10 s before any timing)");
  sub->add_option("--compile-timeout", o->compile_timeout,
                  "a configuration whose compile takes longer fails (compile_error) and the run goes on (default 300s)");
  sub->add_option("--batch", o->batch, "configurations per strategy proposal (default: 64 for brute_force and random_sample, else 8; the same in replay)");
  sub->add_option("--top", o->top, "rows in the final table; with --configs-from, also how many configurations")
      ->capture_default_str();
  sub->add_option("--configs-from", o->configs_from,
                  "measure the --top fastest configurations DEVICE (any part of its name) recorded in the database "
                  "for this kernel and problem size, instead of searching (then `ktune compare`)");
  sub->add_option("--db", o->db, "results database (default $KTUNE_DB, else ./ktune.db)");
  sub->add_option("--device", o->device, "replay: which device's results to use");
  sub->add_flag("--json", o->json, "machine-readable summary");
  sub->callback([o, &result] { result.exit_status = run_tune(*o); });
}

}  // namespace ktune::cli
