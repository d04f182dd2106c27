// Search strategies and the cost layer they share.
//
// A Strategy proposes configurations in batches (so the compile pipeline stays
// full) and is told their scores. It never sees CUDA, SQLite, budgets or
// caching: the CostLayer (search/strategy/cost.h) answers repeated configurations from
// its cache at no cost, counts only measured configurations against
// max_fevals, stops at time_limit, and turns failures into observations.
// Scores are always "lower is better" (the cost layer negates
// higher-is-better objectives); a failed configuration has no score.
//
// Protocol (what the cost layer guarantees, so strategies may rely on it):
//   * before the first propose(), observe() may deliver results the run already
//     knows (resumed measurements) that the strategy never proposed;
//   * every configuration returned by propose() is observed, in order, before
//     the next propose() call, unless the run ends first (budget spent);
//   * observe() may also deliver results of configurations it did not
//     propose: its spare() ones, measured while it proposed;
//   * a strategy proposes only valid configurations of ctx.space.
// Each strategy is deterministic for a given seed and sequence of observations.
// The strategies live in search/strategy/ and its evolve/ and model/ folders; docs/strategies.md
// describes each one and its options.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "search/space/space.h"

namespace ktune {

struct Observation {
  Config config;
  std::optional<double> score;  // nullopt: failed (compile/runtime/timeout/wrong result/invalid)
};

// What the offline compile knows about a configuration before any GPU time is
// spent (registers, shared memory, spills, theoretical occupancy). Strategies
// that can use it get it through StrategyContext::features.
struct StaticFeatures {
  bool compiled = false;  // false: failed to compile (the strategy should avoid it), unless pending
  // Not known yet: its compile had not ended when the request stopped
  // waiting for it (search/strategy/straggler.h). Not a failure: the compile
  // goes on, and the configuration's features can be asked for again.
  bool pending = false;
  int registers = 0;
  int shared_bytes = 0;
  int spill_bytes = 0;
  double occupancy = 0;  // 0..1
};

using FeatureSource = std::function<std::vector<StaticFeatures>(std::span<const Config>)>;

struct StrategyContext {
  const SearchSpace* space = nullptr;
  uint64_t seed = 1;
  // Strategy-specific options, already validated by make_strategy()
  // (search/registry.h).
  std::map<std::string, Value, std::less<>> options;
  // Optional: static features of configurations, one per configuration asked
  // for, in order. On a GPU this compiles them (through the cubin cache, so a
  // configuration measured later is not compiled again); strategies ask for
  // several at once so that the compiles run in parallel.
  FeatureSource features;
  // Budget the cost layer will enforce, for strategies that plan (e.g. restarts).
  uint64_t max_fevals = 0;  // 0 = unlimited
  // Optional: results of the same kernel measured elsewhere (another GPU,
  // another problem size), in this space's configurations and the strategy's
  // units (lower is better; nullopt: failed there). They are not results of
  // this run and cost nothing: a strategy may use them to rank what it tries
  // first (model_rank draws its first design from the prior's best tenth).
  std::vector<Observation> prior;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  // Up to `max_batch` configurations to evaluate next. Repeats are allowed (the
  // cost layer answers them from its cache). An empty batch means "done".
  virtual std::vector<Config> propose(size_t max_batch) = 0;
  // Results for configurations proposed earlier (every proposed one, in order),
  // or, before the first propose(), results known from earlier runs.
  virtual void observe(std::span<const Observation> results) = 0;
  // Up to `n` configurations the strategy expects to propose after the batch
  // it proposed last, most likely first: a hint, never binding, so that their
  // compiles can run behind that batch's (the cost layer passes it on). Only
  // a strategy whose next batch does not hang on the results it waits for
  // can know it; the others say nothing.
  virtual std::vector<Config> upcoming(size_t n) {
    (void)n;
    return {};
  }
  // Up to `n` configurations worth measuring while the strategy works on its
  // next proposal, most wanted first: what it compiled for a short list and
  // did not propose, then random picks. A strategy that waits on compiles
  // (its short lists) would otherwise leave the GPU waiting too. The cost
  // layer asks right after a proposal, compiles them behind that batch and
  // measures those compiled while the next proposal is made; their results
  // come through observe() like any other. Only a strategy whose proposals
  // take time has any.
  virtual std::vector<Config> spare(size_t n) {
    (void)n;
    return {};
  }
};

}  // namespace ktune
