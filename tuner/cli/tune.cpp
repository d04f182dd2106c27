// `ktune tune SPEC`: reads the options, makes the evaluator (a GPU now, or a
// replay of recorded measurements with --simulate), calls tune::run
// (tuner/tune/run.h) and prints what it observed.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <iostream>
#include <memory>
#include <thread>

#include "db/store.h"
#include "ktune/error.h"
#include "search/registry.h"
#include "tuner/cli/cli.h"
#include "tuner/cli/mpi_run.h"
#include "tuner/cli/print/json.h"
#include "tuner/tune/configs_from.h"
#include "tuner/gpu/engine.h"
#include "tuner/tune/gpu_evaluator.h"
#include "tuner/tune/pool_evaluator.h"
#include "tuner/tune/run.h"
#include "tuner/tune/replay_evaluator.h"
#include "tuner/spec/spec.h"
#include "tuner/cli/print/tune_report.h"
#include "tuner/cli/print/profile.h"
#include "tuner/compile/pool.h"
#include "tuner/tune/profile.h"

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
  std::optional<std::string> gpus;  // --gpus all|0,1,...: one run over several GPUs
  std::optional<size_t> workers;  // --workers N: a replay's simulated GPUs
  std::optional<size_t> compile_slots;  // --compile-slots P: a replay's simulated compile processes
  std::string simulate;
  std::string prior;  // --prior DATA; default: the database's own results of the kernel elsewhere
  std::string prior_device;
  bool no_prior = false;
  bool no_spares = false;
  bool force = false;
  bool cold = false;
  std::optional<double> warmup_ms;
  size_t batch = 0;
  double timeout_s = 0;
  std::string compile_timeout;
  int top = 10;
  std::string configs_from;  // --configs-from DEVICE: measure its --top fastest configurations
  std::string configs;       // --configs FILE: measure the configurations it lists
  std::string within;        // --within FILE: the strategy searches among the configurations it lists
  bool no_racing = false;
  std::optional<double> energy_ms;  // --energy [MS]
  std::string objective;            // --objective NAME
  size_t profile_top = 0;           // --profile-top N
  bool mpi = false;                 // --mpi: one rank of an MPI job even where no launcher is detected
};

// --gpus: "all" (every GPU the driver sees) or indices, repeats allowed
// ("0,0": two workers on one GPU). Several models in one list are refused:
// each model is a series of its own.
std::vector<int> gpu_list(const std::string& text) {
  if (text == "all") {
    const gpu::DeviceProbe probe = gpu::probe_devices();
    if (probe.state != gpu::DriverState::Ready || probe.devices.empty())
      throw Error::failed("cannot tune on a GPU: " + (probe.message.empty() ? "no GPU" : probe.message));
    for (const auto& d : probe.devices)
      if (d.name != probe.devices[0].name)
        throw Error::bad_input("--gpus all: this host has several GPU models (" + probe.devices[0].name + ", " +
                               d.name + "); one run tunes one model: list the indices of one (`ktune devices`)");
    std::vector<int> all(probe.devices.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    return all;
  }
  std::vector<int> out;
  size_t at = 0;
  for (;;) {
    const size_t comma = text.find(',', at);
    const std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (item.empty() || item.size() > 4 || item.find_first_not_of("0123456789") != std::string::npos)
      throw Error::bad_input("--gpus: 'all' or GPU indices separated by commas (e.g. 0,1,2,3), not '" + text + "'");
    out.push_back(std::stoi(item));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  if (out.size() > 64) throw Error::bad_input("--gpus: at most 64 workers");
  return out;
}

// Under MPI the ranks of a host take one GPU each (--gpu plus the rank's index
// on its host) and share the host's CPUs for compiling: each rank's pool is as
// large as its CPUs, and every pool of the host compiles only in one of the
// host's slots (HostSlots), so a compile-bound rank uses what the others leave.
// A replay's evaluator also gives the recording's best objective (`recorded_best`).
std::unique_ptr<ConfigEvaluator> make_evaluator(const Spec& spec, const TuneOptions& o, const MpiRun& mpi,
                                                std::optional<double>& recorded_best,
                                                std::shared_ptr<CompilePool>* pool = nullptr) {
  if (!o.simulate.empty()) {
    if (o.gpus) throw Error::bad_input("--gpus measures on GPUs; a replay (--simulate) takes --workers N");
    auto replay = with_hint("problem size", " (--set changes the spec's)", [&] {
      return as_option("--device", "device",
                       [&] { return std::make_unique<ReplayEvaluator>(spec, o.simulate, o.device); });
    });
    for (const std::string& n : replay->notes()) std::cerr << "ktune: note: " << n << '\n';
    for (const auto& [key, e] : replay->records())
      if (const std::optional<double> v = objective_of(spec, e); v && std::isfinite(*v))
        if (!recorded_best || (spec.higher_is_better ? *v > *recorded_best : *v < *recorded_best)) recorded_best = v;
    if (o.workers && (*o.workers < 1 || *o.workers > 1024))
      throw Error::bad_input("--workers: from 1 to 1024 simulated GPUs");
    if (o.compile_slots && (*o.compile_slots < 1 || *o.compile_slots > 4096))
      throw Error::bad_input("--compile-slots: from 1 to 4096 simulated compile processes");
    ClockOptions clock;
    clock.gpus = o.workers.value_or(1);
    clock.compile_slots = o.compile_slots.value_or(usable_cpus());
    clock.racing = !o.no_racing && !ranks_by_energy(spec);  // as a live run samples
    return std::make_unique<PoolEvaluator>(std::move(replay), clock);
  }
  if (o.workers) throw Error::bad_input("--workers simulates GPUs in a replay (--simulate); on GPUs use --gpus");
  if (o.compile_slots) throw Error::bad_input("--compile-slots simulates compile processes in a replay (--simulate)");
  GpuEvaluatorOptions go;
  go.gpu = o.gpu + mpi.local_rank();
  // A rank that sees one GPU alone (Slurm's --gpus-per-task, CUDA_VISIBLE_DEVICES
  // set per rank) measures on it.
  if (mpi.local_ranks() > 1 && o.gpu == 0) {
    const gpu::DeviceProbe probe = gpu::probe_devices();
    if (probe.state == gpu::DriverState::Ready && probe.devices.size() == 1) go.gpu = 0;
  }
  go.cold = o.cold;
  if (o.warmup_ms) {
    if (!(*o.warmup_ms >= 0) || *o.warmup_ms > 10000) throw Error::bad_input("--warmup: milliseconds from 0 to 10000");
    go.warm_warmup_ms = go.idle_warmup_ms = *o.warmup_ms;
  }
  go.timeout_s = o.timeout_s;
  go.racing = !o.no_racing;
  go.energy_ms = o.energy_ms.value_or(0);
  if (!o.compile_timeout.empty()) go.compile_timeout_s = duration_option("--compile-timeout", o.compile_timeout);
  go.cancel = ctrl_c().token();
  // One compile pool (and the cubin cache under it) for all the GPUs, its counts for the report.
  CompilePoolOptions po;
  po.workers = go.compile_threads;
  po.host_slots_path = HostSlots::default_path();
  po.time_limit_s = go.compile_timeout_s;
  po.cancel = go.cancel;
  go.compile_pool = std::make_shared<CompilePool>(po);
  if (pool) *pool = go.compile_pool;
  if (!o.gpus) return std::make_unique<GpuEvaluator>(spec, go);
  const std::vector<int> gpus = gpu_list(*o.gpus);
  std::vector<PoolEvaluator::MakeMember> members;
  for (const int gpu : gpus)
    members.push_back([&spec, go, gpu]() mutable -> std::unique_ptr<ConfigEvaluator> {
      go.gpu = gpu;
      return std::make_unique<GpuEvaluator>(spec, go);
    });
  auto say_lost = [gpus](const LostWorker& lost) {
    std::cerr << "ktune: GPU " << gpus.at(lost.index) << " is lost (" << lost.reason
              << "); the other GPUs measure what it held\n";
  };
  return std::make_unique<PoolEvaluator>(std::move(members), 0, say_lost);
}

// The spec as the options make it: constants overridden, verified against
// its first valid configuration, ranked by another objective.
Spec load_tune_spec(const TuneOptions& o) {
  Spec loaded = load_spec(o.spec, set_option(o.sets));
  if (!o.verify.empty()) {
    if (o.verify != "first-valid") throw Error::bad_input("--verify: 'first-valid' is the one choice, not '" + o.verify + "'");
    as_option("--verify first-valid", "first-valid verification", [&] { loaded.verify_against_first_valid(); });
  }
  if (!o.objective.empty()) as_option("--objective", "objective", [&] { loaded.set_objective(o.objective); });
  if (o.energy_ms && (!(*o.energy_ms >= 100) || *o.energy_ms > 60000))
    throw Error::bad_input("--energy: milliseconds of back-to-back launches per configuration, 100 to 60000");
  return loaded;
}

// The run's strategy, seed, budget and prior: the options', else the spec's.
tune::RunOptions run_options(const TuneOptions& o, const Spec& spec) {
  // Named on the command line (with its options), else the spec's, else the
  // default; Kernel Tuner's names and option names are read as ktune's.
  const std::string named = !o.strategy.empty() ? o.strategy
                            : !spec.strategy.name.empty() ? spec.strategy.name : default_strategy_name();
  const bool spec_named = named.substr(0, named.find(':')) == spec.strategy.name;  // its options apply
  const ResolvedStrategy chosen =
      strategy_option(named, spec_named ? spec.strategy.options : std::map<std::string, Value, std::less<>>{});
  tune::RunOptions ro;
  ro.strategy = chosen.name;
  ro.strategy_options = chosen.options;
  ro.seed = o.seed.value_or(spec.strategy.seed.value_or(1));
  ro.budget = tune::spec_budget(spec);
  if (o.max_fevals) ro.budget.max_fevals = *o.max_fevals;
  if (!o.time_limit.empty()) ro.budget.time_limit_s = duration_option("--time-limit", o.time_limit);
  ro.batch = o.batch;
  ro.force = o.force;
  ro.prior_path = o.prior;
  ro.prior_device = o.prior_device;
  ro.no_prior = o.no_prior;
  ro.spares = !o.no_spares;
  ro.cancel = ctrl_c().token();
  return ro;
}

// --configs-from and --configs: the configurations measured in place of a
// strategy, listed in `ro`; --within: those the strategy searches among.
void list_configs(const TuneOptions& o, const Spec& spec, db::Store& store, tune::RunOptions& ro) {
  if (!o.configs_from.empty()) {  // another device's fastest, in place of a strategy
    const ConfigsFrom from = as_option("--configs-from", "configurations from another device", [&] {
      return configs_from(spec, store, resolved_device(store, o.configs_from), size_t(std::max(o.top, 1)));
    });
    if (!o.max_fevals) ro.budget.max_fevals = from.configs.size();
    std::cerr << "ktune: measuring " << from.describe() << '\n';
    ro.listed = from.configs;
  }
  if (!o.configs.empty()) {  // the configurations a file lists, in place of a strategy
    const ListedConfigs listed = configs_listed_in(spec, o.configs);
    if (listed.outside)
      std::cerr << "ktune: note: " << listed.outside << " of the configurations in " << o.configs
                << " break the spec's restrictions: left out (the first: " << listed.first_outside << ")\n";
    if (listed.configs.empty()) throw Error::failed(o.configs + ": no valid configuration to measure");
    std::cerr << "ktune: measuring the " << listed.configs.size() << " configuration"
              << (listed.configs.size() == 1 ? "" : "s") << " listed in " << o.configs << '\n';
    ro.listed = listed.configs;
  }
  if (!o.within.empty()) {  // the configurations a file lists, searched by the strategy
    const ListedConfigs listed = as_option("--within", "", [&] { return configs_listed_in(spec, o.within); });
    if (listed.outside)
      std::cerr << "ktune: note: " << listed.outside << " of the configurations in " << o.within
                << " break the spec's restrictions: left out (the first: " << listed.first_outside << ")\n";
    if (listed.configs.empty()) throw Error::failed(o.within + ": no valid configuration to search");
    std::cerr << "ktune: searching among the " << listed.configs.size() << " configuration"
              << (listed.configs.size() == 1 ? "" : "s") << " listed in " << o.within << '\n';
    ro.within = listed.configs;
  }
}

int run_tune(const TuneOptions& o) {
  MpiRun mpi(o.mpi);
  if (mpi.ranks() > 1 && (o.gpus || o.workers))
    throw Error::bad_input("--gpus and --workers spread one process's run; under MPI each rank measures on one GPU "
                           "(--gpu plus its index among the ranks of its host)");
  const Spec spec = load_tune_spec(o);
  if (o.simulate.empty()) spec.require_runnable();  // before the notes: a GPU run needs them
  if (mpi.serving()) {
    // Rank 0 alone hears Ctrl-C and Slurm's SIGTERM (sent to every process of
    // a step): it stops the run, stores and reports, then releases the others.
    std::signal(SIGINT, SIG_IGN);
    std::signal(SIGTERM, SIG_IGN);
    return mpi.serve(spec, [&] {
      std::optional<double> unused;
      return make_evaluator(spec, o, mpi, unused);
    });
  }
  for (const std::string& n : spec.notes) std::cerr << "ktune: note: " << n << '\n';
  require_valid_configurations(spec);
  for (const std::string& n : restriction_notes(spec)) std::cerr << "ktune: note: " << n << '\n';
  if (const unsigned cpus = usable_cpus(); o.simulate.empty() && cpus < std::thread::hardware_concurrency())
    std::cerr << "ktune: note: compiles run on " << cpus << " of this machine's "
              << std::thread::hardware_concurrency()
              << " hardware threads (this process's CPU affinity; under mpirun add --bind-to none, as Open MPI "
                 "binds each of 2 or fewer ranks to one core)\n";
  tune::RunOptions ro = run_options(o, spec);

  db::Store store = open_results_db(o.resolved_db());  // opened for writing before anything is measured
  list_configs(o, spec, store, ro);
  std::optional<double> recorded_best;
  std::shared_ptr<CompilePool> compile_pool;
  std::unique_ptr<ConfigEvaluator> evaluator =
      mpi.evaluator(spec, make_evaluator(spec, o, mpi, recorded_best, &compile_pool));
  TuneReport report(spec, !o.json);
  if (recorded_best) report.recorded_optimum(*recorded_best);
  const CatchInterrupt catching;
  const tune::RunOutcome outcome =
      as_option("--prior-device", "prior device", [&] { return tune::run(spec, *evaluator, store, ro, report); });
  if (const PoolStats* pool = evaluator->offers().pool) report.pool(*pool);
  if (compile_pool) report.compiles(compile_pool->counts());
  std::vector<tune::ProfiledRow> profiled;
  db::DeviceInfo roofs;
  if (o.profile_top > 0 && report.any_ok() && !outcome.interrupted) {
    const ConfigEvaluator::Offers offered = evaluator->offers();
    if (offered.recorded) throw Error::bad_input("--profile-top needs a GPU run; a replay has no counters");
    if (!offered.profiler)
      throw Error::failed("--profile-top: the GPU of this process is lost, none is left to profile on; "
                          "`ktune profile SPEC --gpu N` profiles the stored results on another");
    roofs = profile_device_limits(evaluator->device(), *offered.profiler, store, false);
    tune::ProfileOptions po;
    po.top = o.profile_top;
    profiled = tune::profile_stored(spec, *evaluator, store, po);
    if (o.json) report.add_json("profile", profile_json(spec, roofs, profiled));
  }
  report.finish(outcome, o.json, o.top);
  if (outcome.interrupted) {
    report.finish_interrupted(std::cerr);
    return interrupted_status();
  }
  if (!profiled.empty() && !o.json) {
    std::cout << "\nhardware counters of the " << profiled.size() << " best (ktune profile):\n";
    print_profile(spec, roofs, profiled, false, std::cout);
    for (const auto& r : profiled)
      if (!r.note.empty()) std::cerr << "ktune: note: " << config_key(r.eval.config) << ": " << r.note << '\n';
  }
  return report.any_ok() ? 0 : 1;
}

// How each configuration is measured: cache, racing, energy, the objective,
// counters afterwards, warm-up and time limits.
void add_measure_options(CLI::App* sub, TuneOptions* o) {
  sub->add_flag("--cold", o->cold, "flush the L2 cache before every sample");
  sub->add_flag("--no-racing", o->no_racing,
                "sample every configuration fully (default: one whose first 3 samples all lie over 1.2 x the best "
                "median so far stops sampling, stored as stopped_early)");
  sub->add_option("--energy", o->energy_ms,
                  "also measure each configuration's energy per launch (NVML) over about MS ms of back-to-back "
                  "launches; --energy alone: 1000 ms (off by default; on without the option where the objective is "
                  "energy or a metric uses energy_j)")
      ->expected(0, 1)
      ->default_str("1000")
      ->type_name("[MS]");
  sub->add_option("--objective", o->objective,
                  "rank by this instead of the spec's objective: time, energy (J per launch, measured with --energy) "
                  "or a metric of the spec");
  sub->add_option("--profile-top", o->profile_top,
                  "after the run, hardware counters and roofline position of the N best (as `ktune profile`)");
  sub->add_option("--warmup", o->warmup_ms, "milliseconds of launches before every configuration's timed samples (default: 20 for the first and after the GPU idled 250 ms, 2 while it is kept busy)");
  sub->add_option("--timeout", o->timeout_s,
                  "seconds a launch batch may take before the kernel counts as hung "
                  "(default: from the best time so far, at least 1 s; 10 s before any timing)");
  sub->add_option("--compile-timeout", o->compile_timeout,
                  "a configuration whose compile takes longer fails (compile_error) and the run goes on (default 300s)");
}

}  // namespace

void add_tune_command(CLI::App& app, CommandResult& result) {
  auto o = std::make_shared<TuneOptions>();
  CLI::App* sub = app.add_subcommand("tune", "Tune a spec on a GPU, or replay recorded measurements (--simulate)");
  sub->add_option("spec", o->spec, "tuning spec (YAML or T1 JSON)")->required();
  sub->add_option("--set", o->sets, "override a constant of the spec: NAME=VALUE (repeatable)");
  sub->add_option("--strategy", o->strategy, std::string("search strategy (default: the spec's, else ") +
                                                 default_strategy_name() + "); see `ktune strategies list`");
  sub->add_option("--max-fevals", o->max_fevals,
                  "at most N measured configurations (default: the spec's budget, else none; 0: none)");
  sub->add_option("--time-limit", o->time_limit,
                  "wall-time budget (replay: the predicted wall time, docs/strategies.md), e.g. 90s, 10m (default: the "
                  "spec's, else none). With neither budget the run goes on until the strategy is done, for "
                  "brute_force the whole space; the run says so at its start");
  sub->add_option("--seed", o->seed, "seed for the strategy");
  CLI::Option* one_gpu = sub->add_option("--gpu", o->gpu, "GPU index");
  sub->add_option("--gpus", o->gpus,
                  "several GPUs of one model in one run: 'all' or indices, e.g. 0,1,2,3 (repeats allowed: 0,0 is two "
                  "workers on GPU 0); each configuration measured once, on whichever GPU frees up first")
      ->excludes(one_gpu);
  sub->add_option("--workers", o->workers,
                  "replay only: N simulated GPUs (default 1); the replay's time is the wall time a live run would "
                  "take, predicted from the recorded compile and GPU times");
  sub->add_option("--compile-slots", o->compile_slots,
                  "replay only: P simulated compile processes (default: this machine's usable CPUs; a live run has "
                  "one per usable CPU)");
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
  sub->add_flag("--no-spares", o->no_spares,
                "measure only the strategy's picks (default: while the strategy makes its next proposal, the GPU "
                "measures its spares, compiled already: the rest of its short lists and random picks; each is an "
                "evaluation)");
  sub->add_flag("--force", o->force, "measure again what the database already holds");
  add_measure_options(sub, o.get());
  sub->add_option("--batch", o->batch, "configurations per strategy proposal (default: 64 for brute_force and random_sample, per worker with --gpus or --workers; else 8; the same in replay)");
  sub->add_option("--top", o->top, "rows in the final table; with --configs-from, also how many configurations")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--configs-from", o->configs_from,
                  "measure the --top fastest configurations DEVICE (any part of its name) recorded in the database "
                  "for this kernel and problem size, instead of searching (then `ktune compare`)");
  sub->add_option("--configs", o->configs,
                  "measure exactly the configurations FILE lists (a JSON list of {parameter: value}), in order, "
                  "in place of a strategy; those the spec's restrictions rule out are left out, with a note")
      ->excludes("--configs-from");
  sub->add_option("--within", o->within,
                  "search only among the configurations FILE lists (as --configs reads it): the strategy proposes "
                  "as usual, one outside the list is not measured and counts as no evaluation, and the run ends "
                  "when all are measured")
      ->excludes("--configs-from")
      ->excludes("--configs");
  sub->add_option("--db", o->db, "results database (default $KTUNE_DB, else ./ktune.db)");
  sub->add_option("--device", o->device, "replay: which device's results to use");
  sub->add_flag("--mpi", o->mpi,
                "run as one rank of an MPI job even where no launcher is detected (mpirun and srun are "
                "detected): rank 0 tunes and stores, the other ranks evaluate; exit 2 where built without MPI");
  sub->add_flag("--json", o->json, "machine-readable summary");
  sub->callback([o, &result] { result.exit_status = run_tune(*o); });
}

}  // namespace ktune::cli
