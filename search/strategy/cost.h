// The cost layer: the one place that spends tuning budget.
//
// CostLayer::run() drives a Strategy: it asks for a batch, answers the
// configurations it has already measured from its cache (free, not counted),
// measures the new ones with one call of the evaluate callback (which reports
// each as it is done), tells the strategy every result, and keeps a trace.
// Rules:
//   * an evaluation = one measured configuration, failed ones included; a
//     repeat answered from the cache is not one. max_fevals is never exceeded:
//     a batch is truncated to the evaluations left.
//   * the time budget is spent when the summed cost_s of the measured
//     configurations (or the injected clock, CostOptions::clock) reaches
//     time_limit_s. It is checked after every evaluation, inside a batch too:
//     the one that reaches the limit is the last, none starts after it. On a
//     wall clock it is also checked after each proposal, which can take time
//     (model_rank compiles features): a batch proposed past the limit is not
//     measured.
//   * configurations pre-loaded with seed() (known results: a resumed run, or
//     another strategy's run on the same database) are answered when the
//     strategy proposes one, at no time cost, and then count as an evaluation
//     (trace entry `seeded`), as Kernel Tuner counts a cache hit toward
//     max_fevals: a run's budget is the configurations its strategy visits,
//     so a second strategy on the same database gets its whole budget, and a
//     resumed deterministic run retraces its path for free.
//   * the run also stops when the strategy proposes nothing, when every valid
//     configuration has been measured, or after max_stale_proposals proposals
//     in a row with nothing new (a strategy looping on the cache).
//   * with CostOptions::ahead set, the strategy's hint of what follows each
//     batch (Strategy::upcoming) is passed on before the batch is measured,
//     never past max_fevals, and an empty one when the run ends, so that what
//     is compiled ahead is dropped with it.
//   * with CostOptions::beside set and no max_fevals (a budget of
//     evaluations goes to the strategy's own picks; one of time, or none, is
//     spent where the GPU would wait), the strategy's spares
//     (Strategy::spare) are asked for after each proposal, passed on with the hint (compiled behind the batch), and
//     measured beside the next proposal with what its short lists compile:
//     each is an evaluation like any other, counted, traced and told to the
//     strategy (before the batch it proposed meanwhile is measured; what of
//     that batch was measured beside it is then a repeat). How many spares
//     are asked for follows how many the last proposal's time used: eight
//     batches' worth per worker first, twice as many when all were measured,
//     half when fewer than a quarter were, between one batch per worker and
//     kMaxSpare.
//   * with CostOptions::cancel requested, no evaluation starts after the one
//     in flight and the run stops (StopReason::Interrupted) with what
//     finished; an evaluation or a proposal that throws Cancelled meanwhile
//     ends it the same way. Any other exception, Error included, propagates.
//   * with CostOptions::recorded set (a replay of a partial recording, a run
//     limited to a list), a configuration outside it is answered as failed
//     at no cost, is not an evaluation and is not in the trace
//     (RunResult::not_recorded counts them); the space is exhausted when
//     every recorded one is measured.
// Scores are negated for higher-is-better objectives so strategies always
// minimise; the trace reports the user's objective. A strategy proposing an
// invalid configuration is a bug: Error::failed. Deterministic when evaluate
// is; one CostLayer is used by one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "search/expr/cancel.h"
#include "search/space/space.h"
#include "search/strategy/strategy.h"

namespace ktune {

struct Budget {
  uint64_t max_fevals = 0;   // 0 = unlimited
  double time_limit_s = 0;   // 0 = unlimited
};

struct EvalOutcome {
  std::optional<double> score;  // the user's objective; nullopt = failed
  double cost_s = 0;            // time this evaluation took: compile + benchmark + framework
};

struct CostOptions {
  size_t batch_size = 1;                 // configurations asked from the strategy per proposal
  uint64_t max_stale_proposals = 1000;   // proposals in a row with nothing new before giving up
  std::function<double()> clock;         // seconds; when set, the time budget is wall time on it
  Cancel::Token cancel;                  // requested: stop after the evaluations in flight
  // The configurations the run may measure, where that is not all of the
  // space (what an interrupted recording holds, a list the run is limited
  // to), and how many valid ones that is.
  std::function<bool(const Config&)> recorded;
  uint64_t recorded_count = 0;
  // Told once of each proposed configuration answered as outside `recorded`
  // (a caller whose `recorded` joins several limits tells them apart).
  std::function<void(const Config&)> not_recorded;
  // Told, right before each batch is measured, what the strategy expects to
  // propose after it (Strategy::upcoming, at most a batch), less what is
  // already known or in the batch and cut to the evaluations the budget has
  // left after it: what may be compiled behind the batch. Each call replaces
  // the one before; the last, when the run ends, is empty.
  std::function<void(std::span<const Config>)> ahead;
  // Measures while the strategy proposes (the GPU would otherwise wait for
  // its short lists' compiles): makes the proposal and meanwhile measures,
  // as their compiles end, the spares named with the batch before
  // (Strategy::spare; less what is measured) and what the proposal's short
  // lists compile clean (StrategyContext::features), each only if wanted (not
  // measured or known yet), none started once the proposal is made, each
  // reported (false: start no more). Returns the proposal. Unset: the
  // proposal alone, and no spares asked for.
  struct Beside {
    std::function<std::vector<Config>()> propose;
    std::span<const Config> spare;
    std::function<bool(const Config&)> wanted;
    std::function<bool(const Config&, const EvalOutcome&)> report;
    // Seconds left of the time budget on `clock` (infinite without one):
    // once none is, the proposal stops waiting for its compiles.
    std::function<double()> time_left;
    bool batch = false;  // propose measures the batch and proposes nothing (several workers)
  };
  std::function<std::vector<Config>(const Beside&)> beside;
  // The GPUs measuring (several: a pool or simulated GPUs). Spares are
  // asked for per GPU, each needing its own to compile and measure. With
  // beside and several, the batch too is measured through beside (its
  // propose measures the batch and returns nothing), so that a worker that
  // has ended its part of the batch measures spares while the others end
  // theirs, instead of waiting for the batch's slowest.
  size_t workers = 1;
};

enum class StopReason { MaxFevals, TimeLimit, StrategyDone, SpaceExhausted, NoProgress, Interrupted };
const char* stop_reason_name(StopReason r);  // "max_fevals", "time_limit", ...

struct TraceEntry {
  Config config;
  std::optional<double> score;      // the user's objective; nullopt = failed
  uint64_t fevals = 0;              // evaluations counted so far, this one included
  double elapsed_s = 0;             // cumulative cost (time budget units)
  std::optional<double> best;       // best objective so far (user units)
  bool seeded = false;              // answered from seed(): reused, not measured in this run
};

struct RunResult {
  std::vector<TraceEntry> trace;
  StopReason stop = StopReason::StrategyDone;
  uint64_t fevals = 0;
  double elapsed_s = 0;
  std::optional<Config> best_config;
  std::optional<double> best_score;  // user units
  uint64_t proposals = 0, cache_hits = 0;
  uint64_t not_recorded = 0;  // proposed, outside CostOptions::recorded: answered as failed, not counted
  uint64_t beside = 0;        // of fevals, measured while the strategy proposed (CostOptions::beside)
};

class CostLayer {
 public:
  // Told of configuration `index` of the batch as it is measured, in any
  // order; false once the time budget is spent: start no more of the batch.
  using Done = std::function<bool(size_t index, const EvalOutcome&)>;
  // Measures a batch, calling done once per configuration it measures; it
  // may return with some unmeasured after done said false. A GPU run's
  // evaluator is one of these.
  using EvaluateEach = std::function<void(std::span<const Config>, const Done& done)>;
  // Measures a batch at once, one outcome per configuration (replays, tests).
  // With a time limit the layer hands it one configuration at a time.
  using Evaluate = std::function<std::vector<EvalOutcome>(std::span<const Config>)>;
  using OnTrace = std::function<void(const TraceEntry&)>;

  // REQUIRES: space outlives the layer.
  CostLayer(const SearchSpace& space, Budget budget, EvaluateEach evaluate, bool higher_is_better,
            CostOptions options = {});
  CostLayer(const SearchSpace& space, Budget budget, Evaluate evaluate, bool higher_is_better,
            CostOptions options = {});

  // A known result: answered from the cache; see the rules above. Call before run().
  void seed(const Config& config, const EvalOutcome& outcome);

  // Runs the strategy to a stop. on_trace (optional) hears every trace entry.
  RunResult run(Strategy& strategy, const OnTrace& on_trace = {});

 private:
  struct Cached {
    std::optional<double> score;  // user units
  };
  // Neither budget spent nor a cancel requested: an evaluation may start.
  bool budget_left(const RunResult& r, double start) const;
  // Why budget_left said no.
  StopReason spent(const RunResult& r, double start) const;
  // Proposals and evaluations until a stop, which it returns.
  StopReason search(Strategy& strategy, RunResult& r, double start, const OnTrace& on_trace);
  double elapsed(const RunResult& r, double start) const;
  void record(RunResult& r, const Config& c, const EvalOutcome& o, bool seeded, double start,
              const OnTrace& on_trace);
  std::optional<double> internal(std::optional<double> user) const;
  void evaluate_new(RunResult& r, std::vector<Config>& fresh, double start, const OnTrace& on_trace);
  // Neither measured, nor known, nor outside the recording: what a hint or a
  // spare may name.
  bool unevaluated(const Config& c) const;
  // The strategy's proposal, with `spare` measured beside it (CostOptions::beside).
  std::vector<Config> propose_beside(Strategy& strategy, RunResult& r, const std::vector<Config>& spare,
                                     double start, const OnTrace& on_trace);
  // `fresh` measured with what of `spare` is still wanted beside it
  // (CostOptions::workers); the spares measured, told to the strategy.
  void evaluate_beside(Strategy& strategy, RunResult& r, std::vector<Config>& fresh, const std::vector<Config>& spare,
                       double start, const OnTrace& on_trace);
  // CostOptions::beside around `work` with the unevaluated of `spare`: the
  // work's result, and which of the spares were measured.
  struct BesideResult {
    std::vector<Config> proposal;
    std::vector<Config> measured;  // every configuration measured beside the work, in order
    size_t spares_measured = 0;  // of those the spares named
  };
  BesideResult beside(const std::function<std::vector<Config>()>& work, bool batch, RunResult& r,
                      const std::vector<Config>& spare, double start, const OnTrace& on_trace);
  // Tells the strategy what was measured beside its proposal or its batch.
  void observe_measured(Strategy& strategy, const std::vector<Config>& measured);
  // What of the strategy's spares may be measured: not known, not in the batch.
  std::vector<Config> spares_of(Strategy& strategy, const std::unordered_set<Config, ConfigHash>& in_batch);
  // The strategy's hint for CostOptions::ahead, with `measuring` of the batch about to be measured.
  std::vector<Config> ahead_of(Strategy& strategy, const RunResult& r,
                               const std::unordered_set<Config, ConfigHash>& in_batch, size_t measuring);

  const SearchSpace* space_;
  Budget budget_;
  EvaluateEach evaluate_;
  bool higher_is_better_;
  CostOptions options_;
  std::unordered_map<Config, Cached, ConfigHash> cache_;
  std::unordered_set<Config, ConfigHash> unrecorded_;
  std::unordered_map<Config, EvalOutcome, ConfigHash> known_;  // seed()
  size_t spare_n_ = 0;  // spares asked for after each proposal (CostOptions::beside)
  size_t batch_spares_measured_ = 0;  // of the last spares, measured beside the batch (several workers)
};

// The most spares asked for after one proposal.
inline constexpr size_t kMaxSpare = 256;

}  // namespace ktune
