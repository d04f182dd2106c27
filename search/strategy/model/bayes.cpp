// bayes_opt: Bayesian optimisation with a Gaussian process (search/strategy/model/gp.h).
// After an initial design of random new configurations, each step fits the
// GP to the observations (log of run times, failures at the worst value) and
// proposes the new configurations with the best acquisition (expected
// improvement or lower confidence bound) among a random sample of new valid
// configurations plus every new neighbour of the best few. Degenerate cases
// fall back to random sampling: nothing succeeded yet, or too few points.
#include <algorithm>
#include <numeric>

#include "search/strategy/model/gp.h"
#include "search/strategy/model/model.h"

namespace ktune::strategy_detail {
namespace {

class BayesOpt final : public StrategyBase {
 public:
  explicit BayesOpt(const StrategyContext& ctx)
      : StrategyBase(ctx),
        encoder_(*ctx.space, opt_choice(ctx, "encoding") == "onehot"),
        initial_(static_cast<size_t>(opt_int(ctx, "initial_samples"))),
        candidates_(static_cast<size_t>(opt_int(ctx, "candidates"))),
        cap_(static_cast<size_t>(opt_int(ctx, "max_observations"))),
        lcb_(opt_choice(ctx, "acquisition") == "lcb"),
        kappa_(opt_float(ctx, "kappa")),
        xi_(opt_float(ctx, "xi")) {
    // A tiny budget must not be spent on the initial design alone.
    if (ctx.max_fevals > 0) initial_ = std::min<size_t>(initial_, std::max<uint64_t>(2, ctx.max_fevals / 5));
    initial_ = std::max<size_t>(initial_, 1);
  }

 private:
  std::vector<Config> next_wave(size_t max_batch) override {
    if (num_results() < initial_) return sample_unknown(std::min(max_batch, initial_ - num_results()));
    if (num_successes() == 0) return sample_unknown(max_batch);
    std::vector<Config> pool = candidate_pool();
    if (pool.size() <= max_batch) return pool;
    const TrainingSet t = make_training_set(history(), cap_);
    std::vector<double> x;
    for (const Config& c : t.configs) encoder_.encode(c, x);
    GaussianProcess gp;
    static constexpr double kLengthscales[] = {0.1, 0.2, 0.4, 0.8};
    gp.fit(std::move(x), encoder_.dims(), t.y, kLengthscales);
    std::vector<double> xs, mean, sd;
    for (const Config& c : pool) encoder_.encode(c, xs);
    gp.predict(xs, pool.size(), mean, sd);
    std::vector<double> gain(pool.size());
    for (size_t i = 0; i < pool.size(); ++i)
      gain[i] = lcb_ ? -(mean[i] - kappa_ * sd[i]) : expected_improvement(mean[i], sd[i], t.best, xi_);
    std::vector<size_t> order(pool.size());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + max_batch, order.end(),
                      [&](size_t a, size_t b) { return gain[a] > gain[b] || (gain[a] == gain[b] && a < b); });
    std::vector<Config> wave;
    for (size_t i = 0; i < max_batch; ++i) wave.push_back(pool[order[i]]);
    return wave;
  }

  // New configurations worth scoring: a random sample plus the new neighbours
  // of the three best so far (where the optimum most likely is).
  std::vector<Config> candidate_pool() {
    std::vector<Config> pool = sample_unknown(candidates_);
    add_neighbours_of_best(pool, 3);
    return pool;
  }

  ConfigEncoder encoder_;
  size_t initial_, candidates_, cap_;
  bool lcb_;
  double kappa_, xi_;
};

}  // namespace

StrategyDef bayes_opt_def() {
  return {"bayes_opt",
          "Gaussian-process Bayesian optimisation (Matern 5/2, EI or LCB) over sampled and neighbouring candidates",
          {{"initial_samples", OptionKind::Int, 10, 1, 100000, {},
            "random configurations before the model is used (at most max_fevals/5, at least 2)"},
           {"acquisition", OptionKind::Choice, "ei", 0, 0, {"ei", "lcb"}, "acquisition function"},
           {"kappa", OptionKind::Float, 2.0, 0, 100, {}, "LCB exploration weight"},
           {"xi", OptionKind::Float, 0.01, 0, 10, {}, "EI exploration margin (standardised units)"},
           {"candidates", OptionKind::Int, 1000, 1, 1000000, {}, "random candidates scored per step"},
           {"max_observations", OptionKind::Int, 200, 2, 100000, {},
            "observations the GP is fitted to (best half + most recent)"},
           {"encoding", OptionKind::Choice, "onehot", 0, 0, {"onehot", "index"}, "encoding of string parameters"}},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> { return std::make_unique<BayesOpt>(ctx); }};
}

}  // namespace ktune::strategy_detail
