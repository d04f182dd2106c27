// `ktune strategies list` and `ktune strategies compare SPEC --simulate DATA`:
// the strategy catalogue, and a replay-based comparison of strategies on
// exhaustively recorded data (evaluations to 90/95/98% of the optimum,
// fraction at fixed budgets and recorded time, P-score, an SVG plot).
#include <CLI/CLI.hpp>

#include <iostream>
#include <sstream>

#include "search/compare.h"
#include "ktune/error.h"
#include "search/strategy/strategy.h"
#include "tuner/cli/print/compare_json.h"
#include "tuner/cli/print/svg_plot.h"
#include "tuner/cli/cli.h"
#include "tuner/cli/print/json.h"
#include "tuner/cli/print/progress.h"
#include "tuner/tune/prior.h"
#include "tuner/tune/replay_evaluator.h"
#include "tuner/spec/spec.h"
#include "tuner/cli/print/table.h"

namespace ktune::cli {
namespace {

struct CompareCliOptions {
  std::string spec;
  std::vector<std::string> sets;  // --set NAME=VALUE: spec constants overridden
  std::string simulate;
  std::string device;
  std::string prior;  // --prior DATA: the same kernel measured elsewhere
  std::string prior_device;
  std::string strategies;
  size_t runs = 20;
  uint64_t max_fevals = 200;
  uint64_t seed = 1;
  size_t batch = 1;
  std::string plot;
  bool json = false;
};

int run_list(bool json) {
  if (json) {
    Json a = Json::array();
    for (const auto& s : strategy_catalog()) {
      Json opts = Json::object();
      for (const auto& [k, v] : s.options) opts[k] = v;
      a.push_back({{"name", s.name}, {"summary", s.summary}, {"options", opts},
                   {"default", s.name == default_strategy_name()}});
    }
    std::cout << a.dump(2) << '\n';
    return 0;
  }
  for (const auto& s : strategy_catalog()) {
    std::cout << s.name << (s.name == default_strategy_name() ? " (default)" : "") << ": " << s.summary << '\n';
    for (const auto& [k, v] : s.options) std::cout << "    " << k << ": " << v << '\n';
  }
  return 0;
}

std::vector<StrategyRun> parse_strategies(const std::string& list) {
  std::vector<StrategyRun> out;
  if (list.empty()) {
    for (const auto& s : strategy_catalog())
      if (s.name != "brute_force") out.push_back({s.name, {}, ""});
    return out;
  }
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty()) continue;
    ResolvedStrategy r = strategy_option(item);
    out.push_back({r.name, std::move(r.options), item.find(':') != std::string::npos || r.name != item ? item : ""});
  }
  return out;
}

}  // namespace

ResolvedStrategy strategy_option(const std::string& item, std::map<std::string, Value, std::less<>> options) {
  std::stringstream parts(item);
  std::string name, part;
  std::getline(parts, name, ':');
  std::vector<std::string> settings;
  while (std::getline(parts, part, ':')) settings.push_back(part);
  for (auto& [key, value] : parse_constant_overrides(settings)) options[key] = value;
  ResolvedStrategy r = resolve_strategy(name, std::move(options));
  for (const std::string& n : r.notes) std::cerr << "ktune: note: " << n << '\n';
  return r;
}

namespace {

std::string median_text(const Spread& s) { return s.median ? fixed(*s.median, 0) : "never"; }

int run_compare(const CompareCliOptions& o) {
  const Spec spec = load_spec(o.spec, parse_constant_overrides(o.sets));
  for (const std::string& n : spec.notes) std::cerr << "ktune: note: " << n << '\n';
  require_valid_configurations(spec);
  for (const std::string& n : restriction_notes(spec)) std::cerr << "ktune: note: " << n << '\n';
  ReplayEvaluator replay(spec, o.simulate, o.device);
  const SearchSpace& space = spec.space();
  ExhaustiveTable table;
  for (const auto& [key, e] : replay.records()) {
    auto c = space.config_of(e.config);
    if (!c) continue;
    TableEntry t;
    t.objective = objective_of(spec, e);
    t.cost_s = ReplayEvaluator::recorded_cost_s(e);
    t.compile_s = ReplayEvaluator::recorded_compile_s(e);
    table[*c] = t;
  }
  CompareOptions co;
  co.runs = o.runs;
  co.first_seed = o.seed;
  co.max_fevals = o.max_fevals;
  if (o.batch < 1) throw Error::bad_input("--batch: at least 1");
  co.batch_size = o.batch;
  co.higher_is_better = spec.higher_is_better;
  // As `ktune tune --simulate` gives them: the strategies see what the tuner would.
  co.features = [&replay](std::span<const Config> cs) { return replay.features(cs); };
  std::optional<Prior> prior;
  if (!o.prior.empty()) {
    prior = load_prior(spec, o.prior, o.prior_device);
    co.prior = prior->observations;
  }
  const std::vector<StrategyRun> strategies = parse_strategies(o.strategies);
  // Long comparisons (many strategies, runs or a large budget) show where they are.
  Progress bar("compare", std::max<size_t>(o.runs, 1) * strategies.size(), true);
  co.progress = [&bar](size_t done, size_t, const std::string& label) { bar.update(done, label); };
  co.interrupt = &interrupted();
  const CompareResult r = [&] {
    const CatchInterrupt ctrl_c;
    return compare(space, table, strategies, co);
  }();
  bar.finish();
  if (r.interrupted) std::cerr << "ktune: interrupted; the table holds the runs done\n";
  if (!o.plot.empty())
    write_svg_plot(r, spec.kernel.name + " on " + replay.device().name + " (replay, " + std::to_string(o.runs) + " runs)",
                   o.plot);
  if (o.json) {
    std::cout << to_json(r) << '\n';
    return r.interrupted ? 130 : 0;
  }
  std::cout << "REPLAY of recorded measurements: " << spec.kernel.name << " on " << replay.device().name << " ("
            << o.simulate << ")\n"
            << "space: " << r.valid << " valid configurations (" << r.recorded << " recorded, " << r.failed
            << " of them failed); optimum " << (r.partial ? "of the recorded part " : "") << fixed(r.optimum, 5) << " "
            << (spec.objective == "time" ? "ms" : spec.objective) << "; " << o.runs << " runs per strategy, budget "
            << r.max_fevals << "\n";
  if (r.partial)
    std::cout << "a PARTIAL recording: strategies keep to the " << r.recorded << " recorded configurations; the optimum, "
              << "the fractions and random search are those of the recorded part, not of the space\n";
  if (prior) std::cout << "prior given to the strategies: " << prior->describe() << "\n";
  std::cout << "\n";
  Table t({"strategy", "evals to 90%", "to 95%", "to 98%", "at 50 evals", "at 100 evals", "P-score", "recorded s/run"});
  for (const auto& s : r.strategies) {
    std::vector<std::string> row{s.name};
    for (const auto& [f, spread] : s.evals_to_fraction) row.push_back(median_text(spread));
    for (uint64_t b : {uint64_t{50}, uint64_t{100}}) {
      std::string cell = "-";
      for (const auto& [budget, spread] : s.fraction_at_budget)
        if (budget == b && spread.median) cell = fixed(100 * *spread.median, 1) + "%";
      row.push_back(cell);
    }
    row.push_back(fixed(s.p_score, 3));
    row.push_back(fixed(s.mean_time_s, 1));
    t.add(row);
  }
  {
    std::vector<std::string> row{"random search, exact"};
    for (const RandomToFraction& rt : r.random_exact_to_fraction) row.push_back(std::to_string(rt.median));
    for (uint64_t b : {uint64_t{50}, uint64_t{100}}) {
      std::string cell = "-";
      for (const RandomAtBudget& ra : r.random_exact)
        if (ra.budget == b) cell = fixed(100 * ra.median_fraction, 1) + "%";
      row.push_back(cell);
    }
    row.push_back("0 (by definition)");
    row.push_back("-");
    t.add(row);
  }
  t.print(std::cout);
  std::cout << "(medians over runs; 'never': not reached in more than half the runs; the exact row is random search "
               "without replacement, computed, not sampled, its evaluations to a fraction not cut at the budget; "
               "recorded s/run: the recorded compile and benchmark time of a run, the compiles of configurations "
               "a strategy asked features for included)\n";
  if (!o.plot.empty()) std::cout << "plot: " << o.plot << '\n';
  return r.interrupted ? 130 : 0;
}

}  // namespace

void add_strategies_command(CLI::App& app, CommandResult& result) {
  CLI::App* sub = app.add_subcommand("strategies", "Search strategies: list them, compare them on recorded data");
  sub->require_subcommand(1);
  auto list_json = std::make_shared<bool>(false);
  CLI::App* list = sub->add_subcommand("list", "Every strategy with its options");
  list->add_flag("--json", *list_json, "machine-readable output");
  list->callback([list_json, &result] { result.exit_status = run_list(*list_json); });

  auto o = std::make_shared<CompareCliOptions>();
  CLI::App* cmp = sub->add_subcommand("compare", "Compare strategies by replaying exhaustively recorded data");
  cmp->add_option("spec", o->spec, "tuning spec")->required();
  cmp->add_option("--set", o->sets, "override a constant of the spec: NAME=VALUE (repeatable)");
  cmp->add_option("--simulate", o->simulate, "recorded data: a ktune database or Kernel Tuner cache")->required();
  cmp->add_option("--device", o->device, "which device's results, where the data holds several");
  cmp->add_option("--prior", o->prior,
                  "the same kernel measured elsewhere (a ktune database or Kernel Tuner cache), given to the "
                  "strategies as ktune tune --prior gives it");
  cmp->add_option("--prior-device", o->prior_device, "which device's results of --prior, where it holds several");
  cmp->add_option("--strategies", o->strategies,
                  "comma-separated names, each optionally with options: bayes_opt:initial_samples=20 "
                  "(default: all but brute_force)");
  cmp->add_option("--runs", o->runs, "runs per strategy (seeds seed, seed+1, ...)")->capture_default_str();
  cmp->add_option("--max-fevals", o->max_fevals, "evaluations per run")->capture_default_str();
  cmp->add_option("--seed", o->seed, "first seed")->capture_default_str();
  cmp->add_option("--batch", o->batch,
                  "configurations per proposal, as ktune tune --batch (a GPU run proposes 8 at a time for the "
                  "adaptive strategies)")
      ->capture_default_str();
  cmp->add_option("--plot", o->plot, "write an SVG plot of best-so-far against evaluations");
  cmp->add_flag("--json", o->json, "machine-readable output");
  cmp->callback([o, &result] { result.exit_status = run_compare(*o); });
}

}  // namespace ktune::cli
