// simulated_annealing: a random walk over neighbours that accepts a worse
// configuration with probability exp(-relative_loss / T), T cooling
// geometrically from T_start to T_min, then reheating from the best so far.
// Relative loss ((new - cur) / |cur|) makes T independent of the objective's
// units, as in Kernel Tuner. One configuration per step (it is sequential by
// nature); unknown neighbours are preferred so steps spend budget on news.
#include <algorithm>
#include <cmath>

#include "search/strategy/support.h"

namespace ktune::strategy_detail {
namespace {

class Annealing final : public StrategyBase {
 public:
  explicit Annealing(const StrategyContext& ctx)
      : StrategyBase(ctx),
        t_start_(opt_float(ctx, "T_start")),
        t_min_(opt_float(ctx, "T_min")),
        alpha_(opt_float(ctx, "alpha")),
        kind_(opt_neighbour(ctx, "neighbour")),
        t_(t_start_) {}

 private:
  std::vector<Config> next_wave(size_t) override {
    if (candidate_) step();
    if (!cur_) {
      std::vector<Config> start = sample_unknown(1);
      if (start.empty()) return {};
      cur_ = start[0];
      candidate_ = cur_;
      return start;
    }
    candidate_ = pick_neighbour();
    if (!candidate_) {  // an isolated configuration: jump elsewhere
      cur_.reset();
      return next_wave(1);
    }
    return {*candidate_};
  }

  // Metropolis decision on the candidate, whose result is now in memory.
  void step() {
    const double cand = score(*candidate_);
    if (*candidate_ == *cur_) {
      cur_score_ = cand;
    } else if (accept(cand)) {
      cur_ = candidate_;
      cur_score_ = cand;
    }
    candidate_.reset();
    t_ *= alpha_;
    if (t_ < t_min_) {
      t_ = t_start_;
      if (best()) cur_ = best(), cur_score_ = best_score();
    }
  }

  bool accept(double cand) {
    if (cand == kFailed) return false;
    if (cur_score_ == kFailed || cand <= cur_score_) return true;
    const double rel = (cand - cur_score_) / std::max(std::abs(cur_score_), 1e-300);
    return unit(rng()) < std::exp(-rel / t_);
  }

  std::optional<Config> pick_neighbour() {
    std::vector<Config> fresh = unknown_neighbours(*cur_, kind_);
    if (!fresh.empty()) return fresh[0];
    std::vector<Config> all = space().neighbours(*cur_, kind_);
    if (all.empty()) return std::nullopt;
    return all[below(rng(), all.size())];
  }

  double t_start_, t_min_, alpha_;
  NeighbourKind kind_;
  double t_;
  std::optional<Config> cur_, candidate_;
  double cur_score_ = kFailed;
};

}  // namespace

StrategyDef simulated_annealing_def() {
  return {"simulated_annealing",
          "random neighbour walk accepting worse moves with a cooling probability; reheats from the best",
          {{"T_start", OptionKind::Float, 1.0, 1e-9, 1e9, {}, "initial temperature (relative loss units)"},
           {"T_min", OptionKind::Float, 0.001, 1e-12, 1e9, {}, "temperature at which it reheats"},
           {"alpha", OptionKind::Float, 0.995, 1e-6, 0.999999, {}, "cooling factor per step"},
           neighbour_option("hamming")},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> { return std::make_unique<Annealing>(ctx); }};
}

}  // namespace ktune::strategy_detail
