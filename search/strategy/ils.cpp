// greedy_ils: iterated local search. After an initial random design, hill
// climbing (local.h) from its best; at a local optimum the best local
// optimum so far is perturbed by a random walk of `perturbation` neighbour
// steps and climbing resumes from there. After
// no_improvement local optima without a better one it restarts at a random
// new configuration (or stops when restart is false).
#include "search/strategy/local.h"

namespace ktune::strategy_detail {
namespace {

class IteratedLocalSearch final : public LocalSearch {
 public:
  explicit IteratedLocalSearch(const StrategyContext& ctx)
      : LocalSearch(ctx, opt_neighbour(ctx, "neighbour"), initial_design_size(ctx)),
        perturbation_(opt_int(ctx, "perturbation")),
        no_improvement_(opt_int(ctx, "no_improvement")),
        restart_(opt_bool(ctx, "restart")) {}

 private:
  std::optional<Config> restart_point() override {
    if (!current()) return first_start();
    if (!base_ || current_score() < base_score_) {
      base_ = current(), base_score_ = current_score(), stale_ = 0;
    } else if (++stale_ >= no_improvement_) {
      if (!restart_) return std::nullopt;
      base_.reset(), stale_ = 0;
    }
    if (!base_) {
      std::vector<Config> start = sample_unknown(1);
      if (start.empty()) return std::nullopt;
      return start[0];
    }
    Config walk = *base_;
    for (int64_t step = 0; step < perturbation_; ++step) {
      std::vector<Config> nb = space().neighbours(walk, NeighbourKind::Hamming);
      if (nb.empty()) break;
      walk = nb[below(rng(), nb.size())];
    }
    return walk;
  }

  int64_t perturbation_, no_improvement_;
  bool restart_;
  std::optional<Config> base_;
  double base_score_ = kFailed;
  int64_t stale_ = 0;
};

}  // namespace

StrategyDef greedy_ils_def() {
  return {"greedy_ils", "iterated local search: hill climbing with random-walk perturbation of the best optimum",
          {neighbour_option("repaired"),
           {"perturbation", OptionKind::Int, 3, 1, 1000, {}, "random neighbour steps applied to a local optimum"},
           {"no_improvement", OptionKind::Int, 20, 1, 1000000, {}, "local optima without progress before a restart"},
           {"restart", OptionKind::Bool, true, 0, 0, {}, "restart at random after no_improvement; false stops"},
           {"initial_samples", OptionKind::Int, 8, 0, 100000, {},
            "random configurations measured first; the first climb starts at their best (at most max_fevals/4)"}},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> {
            return std::make_unique<IteratedLocalSearch>(ctx);
          }};
}

}  // namespace ktune::strategy_detail
