// genetic_algorithm: a (mu + lambda) genetic algorithm on value indices.
// Parents are drawn rank-weighted from the better half of the population;
// children come from crossover and per-gene mutation, and an invalid child is
// repaired to the nearest valid configuration (Geometry::snap). The next
// population is the best popsize of parents and children, so the best found
// is never lost. A generation that brings nothing new gets fresh random blood.
#include <algorithm>

#include "search/strategy/evolve/evolve.h"

namespace ktune::strategy_detail {
namespace {

class Genetic final : public StrategyBase {
 public:
  explicit Genetic(const StrategyContext& ctx)
      : StrategyBase(ctx),
        geometry_(*ctx.space),
        popsize_(static_cast<size_t>(opt_int(ctx, "popsize"))),
        mutation_(opt_float(ctx, "mutation_rate")),
        crossover_(opt_choice(ctx, "crossover")) {}

 private:
  std::vector<Config> next_wave(size_t) override {
    if (population_.empty()) {
      population_ = sample_unknown(popsize_);
      return population_;
    }
    std::vector<Config> pool = population_;
    for (const Config& c : children_) pool.push_back(c);
    select(pool);
    children_ = breed();
    return children_;
  }

  // Best popsize distinct configurations of the pool.
  void select(std::vector<Config>& pool) {
    std::sort(pool.begin(), pool.end(),
              [&](const Config& a, const Config& b) { return score(a) < score(b) || (score(a) == score(b) && a < b); });
    pool.erase(std::unique(pool.begin(), pool.end()), pool.end());
    if (pool.size() > popsize_) pool.resize(popsize_);
    population_ = std::move(pool);
  }

  std::vector<Config> breed() {
    std::vector<Config> kids;
    bool any_new = false;
    for (size_t i = 0; i < popsize_; ++i) {
      Config kid = mutate(cross(parent(), parent()));
      for (int tries = 0; known(kid) && tries < 3; ++tries) kid = mutate(kid, 1.0 / geometry_.dims());
      any_new = any_new || !known(kid);
      kids.push_back(std::move(kid));
    }
    if (!any_new) {
      // Converged onto known ground: half the population is replaced by news.
      std::vector<Config> fresh = sample_unknown(std::max<size_t>(1, popsize_ / 2));
      kids.insert(kids.end(), fresh.begin(), fresh.end());
    }
    return kids;
  }

  // Rank-weighted choice among the better half (weight n - rank).
  const Config& parent() {
    const size_t n = std::max<size_t>(1, population_.size() / 2);
    uint64_t r = below(rng(), n * (n + 1) / 2);
    for (size_t i = 0; i < n; ++i) {
      if (r < n - i) return population_[i];
      r -= n - i;
    }
    return population_[0];
  }

  Config cross(const Config& a, const Config& b) {
    const size_t d = a.size();
    Config kid = a;
    if (crossover_ == "uniform") {
      for (size_t i = 0; i < d; ++i)
        if (rng()() & 1) kid[i] = b[i];
      return kid;
    }
    size_t lo = below(rng(), d + 1), hi = d;
    if (crossover_ == "two_point") {
      hi = below(rng(), d + 1);
      if (lo > hi) std::swap(lo, hi);
    }
    for (size_t i = lo; i < hi; ++i) kid[i] = b[i];
    return kid;
  }

  Config mutate(Config kid, double rate = -1) {
    if (rate < 0) rate = mutation_;
    for (size_t i = 0; i < kid.size(); ++i) {
      const uint32_t n = geometry_.size(i);
      if (n > 1 && unit(rng()) < rate) kid[i] = static_cast<uint32_t>((kid[i] + 1 + below(rng(), n - 1)) % n);
    }
    if (space().is_valid(kid)) return kid;
    std::vector<double> x(kid.begin(), kid.end());
    return geometry_.snap(x, rng());
  }

  Geometry geometry_;
  size_t popsize_;
  double mutation_;
  std::string crossover_;
  std::vector<Config> population_, children_;
};

}  // namespace

StrategyDef genetic_algorithm_def() {
  return {"genetic_algorithm",
          "(mu + lambda) genetic algorithm with crossover, mutation and repair to valid configurations",
          {{"popsize", OptionKind::Int, 20, 2, 10000, {}, "population size (configurations per generation)"},
           {"mutation_rate", OptionKind::Float, 0.1, 0, 1, {}, "probability that a gene mutates"},
           {"crossover", OptionKind::Choice, "uniform", 0, 0, {"uniform", "single_point", "two_point"},
            "crossover operator"}},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> { return std::make_unique<Genetic>(ctx); }};
}

}  // namespace ktune::strategy_detail
