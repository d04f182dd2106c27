// pso: particle swarm optimisation in value-index coordinates. Each particle
// moves with inertia w toward its own best (c1) and the swarm's best (c2);
// its position is snapped to the nearest valid configuration to be measured.
// When a whole swarm step lands only on known configurations three times in a
// row, the worse half of the swarm is re-seeded at random new configurations.
#include <algorithm>

#include "search/strategy/evolve/evolve.h"

namespace ktune::strategy_detail {
namespace {

class Swarm final : public StrategyBase {
 public:
  explicit Swarm(const StrategyContext& ctx)
      : StrategyBase(ctx),
        geometry_(*ctx.space),
        size_(static_cast<size_t>(opt_int(ctx, "swarm_size"))),
        w_(opt_float(ctx, "w")),
        c1_(opt_float(ctx, "c1")),
        c2_(opt_float(ctx, "c2")) {}

 private:
  struct Particle {
    std::vector<double> x, v, best_x;
    double best = kFailed;
    Config at;
  };

  std::vector<Config> next_wave(size_t) override {
    if (swarm_.empty()) return respawn(size_);
    std::vector<double> g;
    double g_score = kFailed;
    for (Particle& p : swarm_) {
      if (double s = score(p.at); s < p.best) p.best = s, p.best_x = geometry_.point(p.at);
      if (p.best < g_score || g.empty()) g_score = p.best, g = p.best_x;
    }
    std::vector<Config> wave;
    bool any_new = false;
    for (Particle& p : swarm_) {
      for (size_t d = 0; d < p.x.size(); ++d) {
        p.v[d] = w_ * p.v[d] + c1_ * unit(rng()) * (p.best_x[d] - p.x[d]) + c2_ * unit(rng()) * (g[d] - p.x[d]);
        p.x[d] = std::clamp(p.x[d] + p.v[d], 0.0, geometry_.size(d) - 1.0);
      }
      p.at = geometry_.snap(p.x, rng());
      any_new = any_new || !known(p.at);
      wave.push_back(p.at);
    }
    stale_ = any_new ? 0 : stale_ + 1;
    if (stale_ < 3) return wave;
    stale_ = 0;
    std::sort(swarm_.begin(), swarm_.end(), [](const Particle& a, const Particle& b) { return a.best < b.best; });
    swarm_.resize((swarm_.size() + 1) / 2);
    std::vector<Config> fresh = respawn(size_ - swarm_.size());
    return fresh.empty() ? wave : fresh;
  }

  // Adds up to n particles at random unknown configurations; returns them.
  std::vector<Config> respawn(size_t n) {
    std::vector<Config> fresh = sample_unknown(n);
    for (const Config& c : fresh) {
      Particle p{geometry_.point(c), {}, geometry_.point(c), kFailed, c};
      for (size_t d = 0; d < p.x.size(); ++d) p.v.push_back((unit(rng()) - 0.5) * geometry_.size(d) / 2);
      swarm_.push_back(std::move(p));
    }
    return fresh;
  }

  Geometry geometry_;
  size_t size_;
  double w_, c1_, c2_;
  std::vector<Particle> swarm_;
  int stale_ = 0;
};

}  // namespace

StrategyDef pso_def() {
  return {"pso", "particle swarm optimisation on value indices, snapped to valid configurations",
          {{"swarm_size", OptionKind::Int, 20, 1, 10000, {}, "number of particles"},
           {"w", OptionKind::Float, 0.5, 0, 10, {}, "inertia weight"},
           {"c1", OptionKind::Float, 2.0, 0, 10, {}, "attraction to a particle's own best"},
           {"c2", OptionKind::Float, 1.0, 0, 10, {}, "attraction to the swarm's best"}},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> { return std::make_unique<Swarm>(ctx); }};
}

}  // namespace ktune::strategy_detail
