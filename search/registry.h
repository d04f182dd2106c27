// The catalogue of strategies: their names, summaries and options as users
// see them, building one by name with its options checked, and Kernel
// Tuner's strategy and option names read as ktune's. Defined at the top of
// search/ (registry.cpp, kernel_tuner_names.cpp), the one layer that links
// every strategy.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "search/strategy/strategy.h"

namespace ktune {

struct StrategyInfo {
  std::string name;
  std::string summary;
  // option name -> one-line description with its default
  std::vector<std::pair<std::string, std::string>> options;
  // Configurations per proposal when the caller does not fix it. A batch is
  // what the compile pool works on ahead of the GPU: strategies that learn
  // from each result want small ones; those that do not (exhaustive, random)
  // large ones, so compiles keep ahead of the GPU.
  size_t preferred_batch = 8;
  // preferred_batch is per worker: on several GPUs (or simulated ones) the
  // batch grows with them, so that each GPU has as many compiled ahead as
  // one alone. For strategies that learn nothing between batches
  // (brute_force, random_sample), whose path is then the same. A learning
  // strategy's batch stays: a larger one means longer short lists, whose
  // proposal waits for the slowest compile (measured: docs/benchmarks.md,
  // "Several GPUs at a wall-clock budget"), while spares fill the GPUs.
  bool batch_per_worker = false;
};

// The catalogue entry of a strategy; Error::bad_input for an unknown name.
const StrategyInfo& strategy_info(const std::string& name);

// Every registered strategy, in a stable order.
const std::vector<StrategyInfo>& strategy_catalog();
// The strategy `ktune tune` uses when none is named.
const char* default_strategy_name();

// Builds a strategy. ctx.options holds strategy options only (not name,
// max_fevals or seed); missing ones take their defaults. Unknown name or
// option, or a bad option value: Error::bad_input naming it and listing what
// exists. REQUIRES: ctx.space is set and outlives the strategy.
std::unique_ptr<Strategy> make_strategy(const std::string& name, StrategyContext ctx);

// A strategy as a user names it, ktune's or Kernel Tuner's (firefly_algorithm,
// greedy_mls, ordered_greedy_mls, and Kernel Tuner's option names: popsize of
// pso, T, mutation_chance, neighbor, method, ...), in ktune's names. Kernel
// Tuner options ktune does without (maxiter: the budget is max_fevals) are
// dropped; `notes` says what was read as what and what was dropped. A Kernel
// Tuner strategy with no counterpart (dual_annealing, basinhopping, ...) is
// Error::bad_input naming the closest ktune strategy. Names and options it does
// not know pass through for make_strategy to check.
struct ResolvedStrategy {
  std::string name;
  std::map<std::string, Value, std::less<>> options;
  std::vector<std::string> notes;
};
ResolvedStrategy resolve_strategy(const std::string& name, std::map<std::string, Value, std::less<>> options);

}  // namespace ktune
