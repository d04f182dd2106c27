// model_rank: ktune's own strategy. It spends GPU time only on configurations
// that the offline compile says are worth it, ranked by a cheap learned model.
//
// Each step builds a candidate pool (every new neighbour of the three best so
// far, plus a random sample of new configurations), screens it with the static
// features of StrategyContext::features (drops configurations that fail to
// compile and, while others remain, those that spill), and ranks the rest by
// the lower confidence bound of a Gaussian process fitted on value-index
// coordinates plus the static features (occupancy, registers, shared memory,
// spills), which carry over between configurations that share resource usage.
// Without features it is a local-emphasis GP search: still a good strategy.
// Features are asked for at most once per configuration.
#include <algorithm>
#include <numeric>

#include "search/error.h"
#include "search/gp.h"
#include "search/strategy_support.h"

namespace ktune::strategy_detail {
namespace {

class ModelRank final : public StrategyBase {
 public:
  explicit ModelRank(const StrategyContext& ctx)
      : StrategyBase(ctx),
        encoder_(*ctx.space, true),
        initial_(static_cast<size_t>(opt_int(ctx, "initial_samples"))),
        pool_(static_cast<size_t>(opt_int(ctx, "pool"))),
        cap_(static_cast<size_t>(opt_int(ctx, "max_observations"))),
        kappa_(opt_float(ctx, "kappa")),
        avoid_spills_(opt_bool(ctx, "avoid_spills")),
        use_features_(static_cast<bool>(ctx.features)) {
    if (ctx.max_fevals > 0) initial_ = std::min<size_t>(initial_, std::max<uint64_t>(2, ctx.max_fevals / 8));
    // On a small space each random pick is a large share of it, and the
    // model's picks among the rest are worth more: at most ~1/15 of the space
    // (6 of gemm_wgmma's 90 configurations: 8 left its median best after 10
    // evaluations at 0.83 of the optimum, random search's at 0.95).
    initial_ = std::min<size_t>(initial_, std::max<uint64_t>(2, valid_count() / 15));
    initial_ = std::max<size_t>(initial_, 1);
  }

 private:
  std::vector<Config> next_wave(size_t max_batch) override {
    std::vector<Config> pool = screen(candidate_pool());
    if (pool.size() <= max_batch) return pool;
    if (num_results() < initial_ || num_successes() == 0) {
      pool.resize(max_batch);  // the sample part is already in random order
      return pool;
    }
    const TrainingSet t = make_training_set(history(), cap_);
    std::vector<double> x, xs, mean, sd;
    for (const Config& c : t.configs) encode(c, x);
    for (const Config& c : pool) encode(c, xs);
    GaussianProcess gp;
    static constexpr double kLengthscales[] = {0.1, 0.2, 0.4, 0.8};
    gp.fit(std::move(x), dims(), t.y, kLengthscales);
    gp.predict(xs, pool.size(), mean, sd);
    std::vector<size_t> order(pool.size());
    std::iota(order.begin(), order.end(), 0);
    auto lcb = [&](size_t i) { return mean[i] - kappa_ * sd[i]; };
    std::partial_sort(order.begin(), order.begin() + max_batch, order.end(),
                      [&](size_t a, size_t b) { return lcb(a) < lcb(b) || (lcb(a) == lcb(b) && a < b); });
    std::vector<Config> wave;
    for (size_t i = 0; i < max_batch; ++i) wave.push_back(pool[order[i]]);
    return wave;
  }

  // The random part persists between steps and only a few of its oldest
  // members are renewed each step, so features are asked for a bounded number
  // of configurations per step while the pool still drifts over the space.
  std::vector<Config> candidate_pool() {
    std::erase_if(reserve_, [&](const Config& c) { return known(c); });
    constexpr size_t kRenew = 16;
    if (reserve_.size() + kRenew > pool_)
      reserve_.erase(reserve_.begin(), reserve_.begin() + std::min(kRenew, reserve_.size()));
    {
      ConfigSet have(reserve_.begin(), reserve_.end());
      for (Config& c : sample_unknown(pool_ - reserve_.size()))
        if (have.insert(c).second) reserve_.push_back(std::move(c));
    }
    std::vector<Config> pool = reserve_;
    shuffle(pool, rng());
    add_neighbours_of_best(pool, 3);
    return pool;
  }

  // Drops what the compile already condemns; keeps the pool when that is everything.
  std::vector<Config> screen(std::vector<Config> pool) {
    if (!use_features_) return pool;
    learn_features(pool);
    std::vector<Config> compiled, clean;
    for (Config& c : pool) {
      const StaticFeatures& f = features(c);
      if (!f.compiled) continue;
      if (f.spill_bytes == 0) clean.push_back(c);
      compiled.push_back(std::move(c));
    }
    if (avoid_spills_ && !clean.empty()) return clean;
    return compiled;
  }

  // Asks for the features of the configurations not asked for before, in one
  // batch (on a GPU host, one parallel compile).
  void learn_features(std::span<const Config> configs) {
    std::vector<Config> ask;
    for (const Config& c : configs)
      if (!features_.count(c)) ask.push_back(c);
    std::sort(ask.begin(), ask.end());
    ask.erase(std::unique(ask.begin(), ask.end()), ask.end());
    if (ask.empty()) return;
    std::vector<StaticFeatures> got = context().features(ask);
    if (got.size() != ask.size()) throw Error::failed("model_rank: the feature source answered " +
                                                      std::to_string(got.size()) + " of " +
                                                      std::to_string(ask.size()) + " configurations");
    for (size_t i = 0; i < ask.size(); ++i) features_.emplace(std::move(ask[i]), got[i]);
  }

  const StaticFeatures& features(const Config& c) {
    if (!features_.count(c)) learn_features(std::span<const Config>(&c, 1));
    return features_.at(c);
  }

  size_t dims() const { return encoder_.dims() + (use_features_ ? 4 : 0); }

  void encode(const Config& c, std::vector<double>& out) {
    encoder_.encode(c, out);
    if (!use_features_) return;
    const StaticFeatures& f = features(c);
    out.push_back(std::clamp(f.occupancy, 0.0, 1.0));
    out.push_back(std::min(f.registers / 255.0, 1.0));
    out.push_back(std::min(f.shared_bytes / 232448.0, 1.0));  // the largest per-block shared memory (sm_90)
    out.push_back(f.spill_bytes > 0 ? 1.0 : 0.0);
  }

  ConfigEncoder encoder_;
  size_t initial_, pool_, cap_;
  double kappa_;
  bool avoid_spills_, use_features_;
  std::unordered_map<Config, StaticFeatures, ConfigHash> features_;
  std::vector<Config> reserve_;
};

}  // namespace

StrategyDef model_rank_def() {
  return {"model_rank",
          "screens candidates with compile-time features (no failed compiles, no spills) and ranks them "
          "with a GP on indices + features; local emphasis around the best",
          {{"initial_samples", OptionKind::Int, 8, 1, 100000, {},
            "screened random configurations before the model is used (at most max_fevals/8 and 1/15 of the space, at least 2)"},
           {"pool", OptionKind::Int, 300, 1, 1000000, {}, "random candidates per step (plus best neighbours)"},
           {"kappa", OptionKind::Float, 1.0, 0, 100, {}, "LCB exploration weight"},
           {"max_observations", OptionKind::Int, 120, 2, 100000, {}, "observations the model is fitted to"},
           {"avoid_spills", OptionKind::Bool, true, 0, 0, {}, "skip configurations that spill registers"}},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> { return std::make_unique<ModelRank>(ctx); }};
}

}  // namespace ktune::strategy_detail
