// Batched hill climbing shared by mls and greedy_ils (private to search/).
//
// From a start configuration, the unknown-or-known neighbours are tried in
// random order, max_batch at a time; the climber moves to the best of a batch
// as soon as it improves on the current configuration (first-improving batch,
// so the compile pipeline stays full). With no neighbour left to try the
// current configuration is a local optimum and restart_point() says where to
// climb next (nullopt ends the search). Known configurations are scored from
// memory and cost nothing. With an initial design (initial > 0), that many
// random new configurations are measured first and the first climb starts
// from the best of them: small budgets then do at least as well as random.
#pragma once

#include "search/strategy/support.h"

namespace ktune::strategy_detail {

// The initial design for a budget: the option, but at most a quarter of it.
size_t initial_design_size(const StrategyContext& ctx);

class LocalSearch : public StrategyBase {
 protected:
  LocalSearch(const StrategyContext& ctx, NeighbourKind kind, size_t initial)
      : StrategyBase(ctx), kind_(kind), initial_(initial) {}
  // Called at a local optimum (current()/current_score()) and before the
  // first climb (no current(); the default then starts at the best so far).
  virtual std::optional<Config> restart_point() = 0;
  std::optional<Config> first_start();
  const std::optional<Config>& current() const { return cur_; }
  double current_score() const { return cur_score_; }
  NeighbourKind kind() const { return kind_; }

 private:
  std::vector<Config> next_wave(size_t max_batch) final;
  void absorb_batch();
  void move_to(const Config& c, double s);

  NeighbourKind kind_;
  size_t initial_;
  std::optional<Config> cur_;
  double cur_score_ = kFailed;
  bool awaiting_start_ = false;
  std::vector<Config> frontier_, batch_;
};

}  // namespace ktune::strategy_detail
