// tune::run: one tuning run, as a library call.
//
// A strategy proposes configurations, the cost layer (search/strategy/cost.h)
// enforces the budget and answers repeats, the evaluator measures them (a GPU
// now, or a replay of recorded measurements), and the store commits each
// evaluation as it completes. Configurations the store already holds for the
// same kernel, device and problem size are reused when proposed (each counts
// toward max_fevals, as Kernel Tuner counts a cache hit) unless `force`. After
// the search, the best few are measured again interleaved (where the
// evaluator can measure again) and those measurements are stored too.
//
// The observer sees everything the run does, in order, and only observes: a
// printer (the command line's TuneReport) or a test. Errors of the whole run
// (a bad option, an unreadable prior) are ktune::Error, thrown whether or not
// a cancel was requested; a configuration that fails is data, stored with its
// status. A cancelled run is no error: it returns, RunOutcome::interrupted.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "db/store.h"
#include "search/expr/cancel.h"
#include "search/strategy/cost.h"
#include "tuner/spec/spec.h"
#include "tuner/tune/evaluator.h"
#include "tuner/tune/prior.h"

namespace ktune::tune {

struct RunOptions {
  std::string strategy;  // a ktune strategy name (see resolve_strategy for Kernel Tuner's)
  std::map<std::string, Value, std::less<>> strategy_options;
  uint64_t seed = 1;
  Budget budget;
  size_t batch = 0;      // configurations per proposal; 0: the strategy's preferred batch
  bool force = false;    // measure again what the store holds
  // When set: these configurations, in order, once each, in place of a
  // strategy (stored as strategy "configs_from"; no prior from the store).
  std::vector<Config> listed;
  // When set: the strategy searches as usual, but only these configurations
  // (of them, the valid ones) are measured; one it proposes outside them is
  // answered as unavailable at no cost (not measured, not an evaluation), as
  // a partial recording's unrecorded ones are, and the run ends when all are
  // measured. Not with `listed`.
  std::optional<std::vector<Config>> within;
  // The prior: a results file (ktune database or Kernel Tuner cache, with one
  // of its devices where it holds several), else the store's own series of
  // the kernel with the most results elsewhere; none with no_prior.
  std::string prior_path;
  std::string prior_device;
  bool no_prior = false;
  // While the strategy proposes, measure its spares (CostOptions::beside),
  // where the evaluator can (ConfigEvaluator::measures_beside).
  bool spares = true;
  size_t remeasure_top = 3;  // the final interleaved re-measure: how many
  int remeasure_rounds = 3;  // and how many rounds
  // Requested (by a signal handler): the run stops after the evaluations in
  // flight, skips the re-measure and returns what finished, interrupted.
  Cancel::Token cancel;
};

// What the run is about to do, once the store, the prior and the resumable
// results are known.
struct RunStart {
  int64_t run_id = 0;
  db::DeviceInfo device;
  bool replay = false;
  std::string source;                  // the evaluator's: a GPU or the replayed file
  size_t workers = 1;                  // configurations measured at once (GPUs, or simulated ones)
  bool simulated = false;              // the workers are simulated, on virtual clocks (RecordedData::virtual_time)
  std::optional<Prior> prior;
  size_t reusable = 0;                 // the store's results this run may reuse
  // A replay of a partial recording: recorded valid configurations of the space's valid ones.
  std::optional<std::pair<uint64_t, uint64_t>> partial;
  // RunOptions::within: its distinct valid configurations (recorded ones, in a partial recording).
  std::optional<uint64_t> within;
  uint64_t total = 0;                  // configurations the run may visit
  Budget budget;                       // the run's budget (0: none of that kind)
};

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void started(const RunStart& start) { (void)start; }
  // A configuration evaluated now (stored unless m.missing: not in the recording).
  virtual void measured(const Measured& m) { (void)m; }
  // A configuration the store held, reused.
  virtual void reused(const db::Evaluation& e) { (void)e; }
  virtual void progress(const TraceEntry& t) { (void)t; }
  // One of the best, measured again after the search (stored).
  virtual void remeasured(const Measured& m) { (void)m; }
};

struct RunOutcome {
  int64_t run_id = 0;
  RunResult result;
  bool interrupted = false;  // RunOptions::cancel was requested; what finished is stored and in `result`
  uint64_t not_within = 0;   // of result.not_recorded, the proposals outside RunOptions::within
};

RunOutcome run(const Spec& spec, ConfigEvaluator& evaluator, db::Store& store, const RunOptions& options,
               RunObserver& observer);

// The budget the spec's strategy section sets: max_fevals, or max_fraction
// of the valid space (at least 1) where it gives that, and time_limit_s;
// unlimited where it sets none. A caller's own limits replace these.
Budget spec_budget(const Spec& spec);

// The store's description of the spec's kernel.
db::KernelInfo kernel_info(const Spec& spec);

}  // namespace ktune::tune
