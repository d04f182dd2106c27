// diff_evo: differential evolution in value-index coordinates. Each member i
// gets a trial u = base + F * (x_r1 - x_r2), binomially crossed with x_i at
// rate CR (at least one coordinate from the mutant), snapped to the nearest
// valid configuration; the trial replaces x_i when it is no worse.
// base is the population's best (best1bin) or a random member (rand1bin).
#include <algorithm>

#include "search/strategy/evolve/evolve.h"

namespace ktune::strategy_detail {
namespace {

class DiffEvo final : public StrategyBase {
 public:
  explicit DiffEvo(const StrategyContext& ctx)
      : StrategyBase(ctx),
        geometry_(*ctx.space),
        popsize_(static_cast<size_t>(opt_int(ctx, "popsize"))),
        f_(opt_float(ctx, "F")),
        cr_(opt_float(ctx, "CR")),
        use_best_(opt_choice(ctx, "method") == "best1bin") {}

 private:
  std::vector<Config> next_wave(size_t) override {
    if (members_.empty()) {
      members_ = sample_unknown(popsize_);
      return members_;
    }
    for (size_t i = 0; i < trials_.size() && i < members_.size(); ++i)
      if (score(trials_[i]) <= score(members_[i])) members_[i] = trials_[i];
    size_t best = 0;
    for (size_t i = 1; i < members_.size(); ++i)
      if (score(members_[i]) < score(members_[best])) best = i;
    trials_.clear();
    bool any_new = false;
    for (size_t i = 0; i < members_.size(); ++i) {
      trials_.push_back(trial(i, best));
      any_new = any_new || !known(trials_.back());
    }
    if (!any_new) {
      // Collapsed: the worse half of the trials become random new configurations.
      std::vector<size_t> order(members_.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score(members_[a]) > score(members_[b]); });
      std::vector<Config> fresh = sample_unknown((members_.size() + 1) / 2);
      for (size_t k = 0; k < fresh.size(); ++k) trials_[order[k]] = fresh[k];
    }
    return trials_;
  }

  size_t other(size_t n, std::initializer_list<size_t> avoid) {
    for (int tries = 0; tries < 16; ++tries) {
      size_t r = below(rng(), n);
      if (std::find(avoid.begin(), avoid.end(), r) == avoid.end()) return r;
    }
    return below(rng(), n);
  }

  Config trial(size_t i, size_t best) {
    const size_t n = members_.size();
    const size_t r0 = use_best_ ? best : other(n, {i});
    const size_t r1 = other(n, {i, r0});
    const size_t r2 = other(n, {i, r0, r1});
    const std::vector<double> x = geometry_.point(members_[i]), b = geometry_.point(members_[r0]),
                              p = geometry_.point(members_[r1]), q = geometry_.point(members_[r2]);
    std::vector<double> u = x;
    const size_t forced = below(rng(), x.size());
    for (size_t d = 0; d < x.size(); ++d)
      if (d == forced || unit(rng()) < cr_) u[d] = b[d] + f_ * (p[d] - q[d]);
    return geometry_.snap(u, rng());
  }

  Geometry geometry_;
  size_t popsize_;
  double f_, cr_;
  bool use_best_;
  std::vector<Config> members_, trials_;
};

}  // namespace

StrategyDef diff_evo_def() {
  return {"diff_evo", "differential evolution on value indices, snapped to valid configurations",
          {{"popsize", OptionKind::Int, 20, 1, 10000, {}, "population size"},
           {"F", OptionKind::Float, 0.8, 0, 2, {}, "differential weight"},
           {"CR", OptionKind::Float, 0.9, 0, 1, {}, "crossover rate"},
           {"method", OptionKind::Choice, "best1bin", 0, 0, {"best1bin", "rand1bin"}, "mutation base"}},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> { return std::make_unique<DiffEvo>(ctx); }};
}

}  // namespace ktune::strategy_detail
