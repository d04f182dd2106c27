// `ktune strategies list` and `ktune strategies compare SPEC --simulate DATA`:
// the strategy catalogue, and a replay-based comparison of strategies on
// exhaustively recorded data (evaluations to 90/95/98% of the optimum,
// fraction at fixed budgets and recorded time, P-score, an SVG plot).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "search/compare.h"
#include "ktune/error.h"
#include "search/registry.h"
#include "tuner/cli/print/compare_json.h"
#include "tuner/cli/print/compare_text.h"
#include "tuner/cli/print/svg_plot.h"
#include "tuner/cli/cli.h"
#include "tuner/cli/print/json.h"
#include "tuner/cli/print/progress.h"
#include "tuner/tune/prior.h"
#include "tuner/tune/replay_evaluator.h"
#include "tuner/spec/spec.h"
#include "tuner/cli/print/table.h"
#include "tuner/compile/pool.h"

namespace ktune::cli {
namespace {

struct CompareCliOptions {
  std::string spec;
  std::string manifest;  // --manifest FILE: many (spec, recording) pairs
  std::string root;      // --root DIR: where the manifest's relative paths start (default: its folder)
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
  bool batch_given = false;  // --batch named: the time-budget runs take it too
  std::string time_budgets;              // --time-budget 10s,30s,...
  std::optional<size_t> compile_slots;   // --compile-slots P
  bool no_spares = false;                // --no-spares
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
  // A comma also separates a strategy's options, as Kernel Tuner users write
  // them (genetic_algorithm:popsize=4,maxiter=3): an item holding '=' but no
  // ':' belongs to the strategy before it.
  std::vector<std::string> items;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty()) continue;
    if (!items.empty() && item.find('=') != std::string::npos && item.find(':') == std::string::npos)
      items.back() += ":" + item;
    else
      items.push_back(item);
  }
  for (const std::string& item : items) {
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
  // NAME:a=1:b=2, or with commas between the options (Kernel Tuner users' habit).
  std::vector<std::string> settings;
  while (std::getline(parts, part, ':')) {
    std::stringstream each(part);
    for (std::string setting; std::getline(each, setting, ',');)
      if (!setting.empty()) settings.push_back(setting);
  }
  for (auto& [key, value] : parse_constant_overrides(settings)) options[key] = value;
  ResolvedStrategy r = resolve_strategy(name, std::move(options));
  for (const std::string& n : r.notes) std::cerr << "ktune: note: " << n << '\n';
  return r;
}

namespace {

ExhaustiveTable table_of(const Spec& spec, const ReplayEvaluator& replay) {
  const SearchSpace& space = spec.space();
  ExhaustiveTable table;
  for (const auto& [key, e] : replay.records()) {
    auto c = space.config_of(e.config);
    if (!c) continue;
    TableEntry t;
    t.objective = objective_of(spec, e);
    const ReplayCost cost = ReplayEvaluator::recorded_cost(e);
    t.cost_s = cost.compile_s + cost.gpu_s;
    t.compile_s = cost.compile_s;
    t.sampling = cost.sampling;
    table[*c] = t;
  }
  return table;
}

CompareOptions base_options(const CompareCliOptions& o, const Spec& spec, ReplayEvaluator& replay) {
  CompareOptions co;
  co.runs = o.runs;
  co.first_seed = o.seed;
  co.max_fevals = o.max_fevals;
  if (o.batch < 1) throw Error::bad_input("--batch: at least 1");
  co.batch_size = o.batch;
  if (o.batch_given) co.time_batch_size = o.batch;
  co.higher_is_better = spec.higher_is_better;
  std::stringstream list(o.time_budgets);
  for (std::string item; std::getline(list, item, ',');) {
    if (item.empty()) throw Error::bad_input("--time-budget: an empty item in '" + o.time_budgets + "'");
    const double s = duration_option("--time-budget", item);
    if (!(s > 0)) throw Error::bad_input("--time-budget: each budget must be above 0 s, not '" + item + "'");
    co.time_budgets.push_back(s);
  }
  if (o.compile_slots && (*o.compile_slots < 1 || *o.compile_slots > 4096))
    throw Error::bad_input("--compile-slots: from 1 to 4096 simulated compile processes");
  // The live run the time stands for: this host's compile processes, one
  // GPU, the strategies' own time as they take it here.
  co.clock = ClockOptions{o.compile_slots.value_or(usable_cpus()), 1, true, true};
  co.spares = !o.no_spares;
  // As `ktune tune --simulate` gives them: the strategies see what the tuner would.
  co.features = [&replay](std::span<const Config> cs) { return replay.features(cs); };
  return co;
}

int run_manifest(const CompareCliOptions& o);

int run_compare(const CompareCliOptions& o) {
  if (!o.manifest.empty()) return run_manifest(o);
  if (o.spec.empty() || o.simulate.empty())
    throw Error::bad_input("strategies compare: give SPEC and --simulate DATA, or --manifest FILE");
  const Spec spec = load_spec(o.spec, set_option(o.sets));
  for (const std::string& n : spec.notes) std::cerr << "ktune: note: " << n << '\n';
  require_valid_configurations(spec);
  for (const std::string& n : restriction_notes(spec)) std::cerr << "ktune: note: " << n << '\n';
  ReplayEvaluator replay(spec, o.simulate, o.device);
  for (const std::string& n : replay.notes()) std::cerr << "ktune: note: " << n << '\n';
  const SearchSpace& space = spec.space();
  const ExhaustiveTable table = table_of(spec, replay);
  CompareOptions co = base_options(o, spec, replay);
  std::optional<Prior> prior;
  if (!o.prior.empty()) {
    prior = as_option("--prior-device", "prior device", [&] { return load_prior(spec, o.prior, o.prior_device); });
    for (const std::string& n : prior->notes) std::cerr << "ktune: note: --prior: " << n << '\n';
    co.prior = prior->observations;
  }
  const std::vector<StrategyRun> strategies = parse_strategies(o.strategies);
  // Long comparisons (many strategies, runs or a large budget) show where they are.
  // With time budgets, random search's runs on the clock come first.
  Progress bar("compare", std::max<size_t>(o.runs, 1) * (strategies.size() + (co.time_budgets.empty() ? 0 : 1)), true);
  co.progress = [&bar](size_t done, size_t, const std::string& label, double eta_s) {
    bar.update(done, label, eta_s);
  };
  co.cancel = ctrl_c().token();
  const CompareResult r = [&] {
    const CatchInterrupt catching;
    return compare(space, table, strategies, co);
  }();
  bar.finish();
  if (r.interrupted) std::cerr << "ktune: interrupted; the table holds the runs done\n";
  if (!o.plot.empty())
    write_svg_plot(r, spec.kernel.name + " on " + replay.device().name + " (replay, " + std::to_string(o.runs) + " runs)",
                   o.plot);
  if (o.json) {
    std::cout << to_json(r) << '\n';
    return r.interrupted ? interrupted_status() : 0;
  }
  print_compare(spec, replay.device().name, o.simulate, o.runs, r, prior ? prior->describe() : "",
                co.clock.compile_slots, std::cout);
  if (!o.plot.empty()) std::cout << "plot: " << o.plot << '\n';
  return r.interrupted ? interrupted_status() : 0;
}

struct ManifestEntry {
  std::string label, spec, data, device;
};

// One space a line: LABEL SPEC DATA [DEVICE]; '#' starts a comment; a path
// with spaces is written in double quotes (published caches sit in folders
// such as "KernelTuner data"). A relative path is looked up under `root`,
// then beside the manifest, so one manifest in the repository can name both
// recordings that are not (held-out data: --root DIR) and files that are.
std::vector<ManifestEntry> read_manifest(const std::string& path, const std::string& root) {
  std::ifstream in(path);
  if (!in) throw Error::bad_input("--manifest: cannot read " + path);
  namespace fs = std::filesystem;
  const fs::path beside = fs::absolute(path).parent_path();
  auto resolve = [&](const std::string& p) {
    if (fs::path(p).is_absolute()) return p;
    if (!root.empty() && (fs::exists(fs::path(root) / p) || !fs::exists(beside / p))) return (fs::path(root) / p).string();
    return (beside / p).string();
  };
  std::vector<ManifestEntry> out;
  size_t lineno = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> std::quoted(x);) w.push_back(x);
    if (w.empty()) continue;
    if (w.size() < 3 || w.size() > 4)
      throw Error::bad_input("--manifest " + path + ":" + std::to_string(lineno) +
                             ": expected 'LABEL SPEC DATA [DEVICE]', got " + std::to_string(w.size()) + " words");
    out.push_back({w[0], resolve(w[1]), resolve(w[2]), w.size() == 4 ? w[3] : ""});
  }
  if (out.empty()) throw Error::bad_input("--manifest " + path + ": no space listed");
  return out;
}

// The results of a manifest's spaces: each space's comparison, labelled, and
// the same as JSON with its files; `stopped` when an interrupt cut them short
// (the last space holds the runs done).
struct ManifestRun {
  std::vector<LabelledResult> results;
  Json spaces = Json::array();
  bool stopped = false;
};

ManifestRun compare_manifest(const CompareCliOptions& o, const std::vector<ManifestEntry>& entries,
                             const std::vector<StrategyRun>& strategies) {
  ManifestRun run;
  std::vector<LabelledResult>& results = run.results;
  Json& spaces = run.spaces;
  bool& stopped = run.stopped;
  const size_t jobs = strategies.size() + (o.time_budgets.empty() ? 0 : 1);  // random search's runs on the clock
  Progress bar("compare", std::max<size_t>(o.runs, 1) * jobs * entries.size(), true);
  size_t done_before = 0;
  double spaces_s = 0;  // the spaces done so far took this long
  {
    const CatchInterrupt catching;
    for (const ManifestEntry& e : entries) {
      const Spec spec = load_spec(e.spec, set_option(o.sets));
      require_valid_configurations(spec);
      for (const std::string& n : restriction_notes(spec)) std::cerr << "ktune: note: " << e.spec << ": " << n << '\n';
      ReplayEvaluator replay(spec, e.data, e.device);
      for (const std::string& n : replay.notes()) std::cerr << "ktune: note: " << n << '\n';
      const ExhaustiveTable table = table_of(spec, replay);
      CompareOptions co = base_options(o, spec, replay);
      co.budgets = {20, 50, 100, 200};
      co.fractions = {0.9, 0.95};
      // The spaces left are taken at the mean time of a space so far, this
      // one counted at its projected length.
      const auto entry_start = std::chrono::steady_clock::now();
      const size_t entries_after = entries.size() - 1 - spaces.size();
      co.progress = [&, entry_start, entries_after](size_t done, size_t, const std::string& label, double eta_s) {
        const double here = std::chrono::duration<double>(std::chrono::steady_clock::now() - entry_start).count();
        const double per_space = (spaces_s + here + eta_s) / double(spaces.size() + 1);
        bar.update(done_before + done, e.label + " " + label, eta_s + per_space * double(entries_after));
      };
      co.cancel = ctrl_c().token();
      CompareResult r = compare(spec.space(), table, strategies, co);
      done_before += std::max<size_t>(o.runs, 1) * jobs;
      spaces_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - entry_start).count();
      Json j = Json::parse(to_json(r));
      spaces.push_back({{"label", e.label}, {"spec", e.spec}, {"data", e.data}, {"device", replay.device().name},
                        {"result", j}});
      stopped = r.interrupted;
      results.push_back({e.label, std::move(r)});
      if (stopped) break;
    }
  }
  bar.finish();
  return run;
}

Json aggregate_json(const std::vector<AggregateRow>& agg) {
  Json a = Json::array();
  for (const AggregateRow& r : agg) {
    Json f = Json::object();
    for (const auto& [b, v] : r.median_fraction_at_budget) f[std::to_string(b)] = v;
    Json ft = Json::object();
    for (const auto& [s, v] : r.median_fraction_at_time) ft[seconds_text(s)] = v;
    a.push_back({{"name", r.name}, {"spaces", r.spaces}, {"mean_p_score", r.mean_p_score},
                 {"median_fraction_at_time", ft},
                 {"mean_p_score_time", r.mean_p_score_time ? Json(*r.mean_p_score_time) : Json(nullptr)},
                 {"vs_random_at_time", {{"ahead", r.time_ahead}, {"level", r.time_level}, {"behind", r.time_behind}}},
                 {"time_behind_at", r.time_behind_at},
                 {"min_p_score", r.min_p_score}, {"median_fraction_at_budget", f},
                 {"vs_random_exact", {{"ahead", r.ahead}, {"level", r.level}, {"behind", r.behind}}},
                 {"behind_at", r.behind_at}, {"behind_p", r.behind_p},
                 {"behind_significant", r.behind_significant}});
  }
  return a;
}

int run_manifest(const CompareCliOptions& o) {
  if (!o.spec.empty() || !o.simulate.empty() || !o.prior.empty() || !o.plot.empty())
    throw Error::bad_input("--manifest: SPEC, --simulate, --prior and --plot are for one space");
  const std::vector<ManifestEntry> entries = read_manifest(o.manifest, o.root);
  const std::vector<StrategyRun> strategies = parse_strategies(o.strategies);
  const ManifestRun run = compare_manifest(o, entries, strategies);
  if (run.stopped) std::cerr << "ktune: interrupted; the tables hold the runs done\n";
  const std::vector<AggregateRow> agg = aggregate(run.results);
  if (o.json) {
    std::cout << Json{{"runs", o.runs}, {"spaces", run.spaces}, {"aggregate", aggregate_json(agg)}}.dump(1) << '\n';
    return run.stopped ? interrupted_status() : 0;
  }
  for (const LabelledResult& sp : run.results) print_manifest_space(sp, std::cout);
  print_aggregate(agg, run.results.size(), o.runs, std::cout);
  return run.stopped ? interrupted_status() : 0;
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
  cmp->add_option("spec", o->spec, "tuning spec (or --manifest)");
  cmp->add_option("--manifest", o->manifest,
                  "compare over many recordings: a file with one space a line, 'LABEL SPEC DATA [DEVICE]' "
                  "('#' starts a comment); prints each space and the aggregate");
  cmp->add_option("--root", o->root, "where the manifest's relative paths are looked up first (then beside the manifest)");
  cmp->add_option("--set", o->sets, "override a constant of the spec: NAME=VALUE (repeatable)");
  cmp->add_option("--simulate", o->simulate, "recorded data: a ktune database or Kernel Tuner cache");
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
  cmp->add_option("--time-budget", o->time_budgets,
                  "wall-clock budgets, e.g. 10s,30s,100s: each run is made again to the largest, its time predicted "
                  "(compile processes, the GPU, the strategy's own time); the fraction at each, the score over time "
                  "against random search; these runs propose as `ktune tune` does (each strategy's own batch, "
                  "unless --batch is given)");
  cmp->add_option("--compile-slots", o->compile_slots,
                  "compile processes of the host the predicted time stands for (default: this machine's usable CPUs)");
  cmp->add_flag("--no-spares", o->no_spares,
                "measure nothing while a strategy proposes (as `ktune tune --no-spares`): the strategies' own picks only");
  cmp->add_option("--plot", o->plot, "write an SVG plot of best-so-far against evaluations");
  cmp->add_flag("--json", o->json, "machine-readable output");
  cmp->callback([o, cmp, &result] {
    o->batch_given = cmp->count("--batch") > 0;
    result.exit_status = run_compare(*o);
  });
}

}  // namespace ktune::cli
