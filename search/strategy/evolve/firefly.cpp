// firefly: the firefly algorithm in normalised value-index coordinates
// ([0, 1] per parameter). Each firefly moves toward every brighter one with
// attractiveness B0 * exp(-gamma * r^2) plus a random step of size alpha, and
// is snapped to the nearest valid configuration. A generation that lands only
// on known configurations re-seeds the dimmer half at random.
#include <algorithm>
#include <cmath>

#include "search/strategy/evolve/evolve.h"

namespace ktune::strategy_detail {
namespace {

class Firefly final : public StrategyBase {
 public:
  explicit Firefly(const StrategyContext& ctx)
      : StrategyBase(ctx),
        geometry_(*ctx.space),
        popsize_(static_cast<size_t>(opt_int(ctx, "popsize"))),
        b0_(opt_float(ctx, "B0")),
        gamma_(opt_float(ctx, "gamma")),
        alpha_(opt_float(ctx, "alpha")) {}

 private:
  std::vector<Config> next_wave(size_t) override {
    if (flies_.empty()) {
      flies_ = sample_unknown(popsize_);
      return flies_;
    }
    const size_t n = flies_.size(), dims = geometry_.dims();
    std::vector<std::vector<double>> u(n);
    std::vector<double> light(n);
    for (size_t i = 0; i < n; ++i) u[i] = normalised(flies_[i]), light[i] = score(flies_[i]);
    bool any_new = false;
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) {
        if (!(light[j] < light[i])) continue;
        double r2 = 0;
        for (size_t d = 0; d < dims; ++d) r2 += (u[j][d] - u[i][d]) * (u[j][d] - u[i][d]);
        const double beta = b0_ * std::exp(-gamma_ * r2);
        for (size_t d = 0; d < dims; ++d) u[i][d] += beta * (u[j][d] - u[i][d]) + alpha_ * (unit(rng()) - 0.5);
      }
      std::vector<double> x(dims);
      for (size_t d = 0; d < dims; ++d) x[d] = std::clamp(u[i][d], 0.0, 1.0) * (geometry_.size(d) - 1.0);
      flies_[i] = geometry_.snap(x, rng());
      any_new = any_new || !known(flies_[i]);
    }
    if (!any_new) {
      std::vector<size_t> order(n);
      for (size_t i = 0; i < n; ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return light[a] > light[b]; });
      std::vector<Config> fresh = sample_unknown((n + 1) / 2);
      for (size_t k = 0; k < fresh.size(); ++k) flies_[order[k]] = fresh[k];
    }
    return flies_;
  }

  std::vector<double> normalised(const Config& c) const {
    std::vector<double> u(c.size());
    for (size_t d = 0; d < c.size(); ++d) u[d] = geometry_.size(d) > 1 ? c[d] / (geometry_.size(d) - 1.0) : 0.0;
    return u;
  }

  Geometry geometry_;
  size_t popsize_;
  double b0_, gamma_, alpha_;
  std::vector<Config> flies_;
};

}  // namespace

StrategyDef firefly_def() {
  return {"firefly", "firefly algorithm on normalised value indices, snapped to valid configurations",
          {{"popsize", OptionKind::Int, 20, 1, 10000, {}, "number of fireflies"},
           {"B0", OptionKind::Float, 1.0, 0, 10, {}, "attractiveness at distance 0"},
           {"gamma", OptionKind::Float, 1.0, 0, 1000, {}, "light absorption (how fast attraction fades)"},
           {"alpha", OptionKind::Float, 0.2, 0, 1, {}, "random step size (normalised units)"}},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> { return std::make_unique<Firefly>(ctx); }};
}

}  // namespace ktune::strategy_detail
