// model_rank: ktune's own strategy. It spends GPU time only on configurations
// that the offline compile says are worth it, ranked by a cheap learned model.
//
// Each step builds a candidate pool (every new neighbour of the three best so
// far, plus a random sample of new configurations) and ranks it by the lower
// confidence bound of a Gaussian process on value-index coordinates. The
// first of them, a short list, get their static features
// (StrategyContext::features: a compile each on a GPU host), are screened
// (configurations that fail to compile are dropped and, while others remain,
// those that spill) and ranked again by a GP on coordinates plus features
// (occupancy, registers, shared memory, spills), which carry over between
// configurations that share resource usage. Without features it is a
// local-emphasis GP search: still a good strategy. Features are asked for at
// most once per configuration, a chunk at a time. The first configurations,
// before the model has data, are random, or with a prior (StrategyContext::
// prior: the kernel measured on another GPU) drawn from the prior's best tenth.
#include <algorithm>
#include <numeric>

#include "ktune/error.h"
#include "search/strategy/model/gp.h"
#include "search/strategy/model/model.h"

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
        shortlist_(static_cast<size_t>(opt_int(ctx, "shortlist"))),
        kappa_(opt_float(ctx, "kappa")),
        avoid_spills_(opt_bool(ctx, "avoid_spills")),
        use_features_(static_cast<bool>(ctx.features)) {
    // At most 1/15 of the space (design_size): on a small space each random
    // pick is a large share of it, and the model's picks among the rest are
    // worth more (6 of gemm_wgmma's 90 configurations: 8 left its median
    // best after 10 evaluations at 0.83 of the optimum, random search's at 0.95).
    initial_ = design_size(initial_);
    prior_design_ = prior_design(initial_);
  }

 private:
  std::vector<Config> next_wave(size_t max_batch) override {
    std::vector<Config> pool = candidate_pool();
    if (pool.size() <= max_batch) return screen(std::move(pool));
    if (num_results() < initial_ || num_successes() == 0) {  // the design: the prior's picks, then the pool's random part
      std::erase_if(prior_design_, [&](const Config& c) { return known(c); });
      pool.insert(pool.begin(), prior_design_.begin(), prior_design_.end());
      // No more than the design has left: a batch larger than the design
      // (8 on a GPU) would otherwise fill up with random picks, past the cap
      // for small spaces.
      const size_t want = num_results() < initial_ ? std::min(max_batch, initial_ - num_results()) : max_batch;
      std::vector<Config> wave = screened_in_order(pool, want, want);
      if (wave.size() > want) wave.resize(want);
      return wave;
    }
    const TrainingSet t = make_training_set(history(), cap_);
    if (!use_features_) return best_of(t, pool, max_batch, false);
    // Features cost a compile each on a GPU host, so only a short list gets
    // them: the candidates a model on the configurations alone ranks first.
    const std::vector<size_t> order = rank(t, pool, false);
    std::vector<Config> by_model;
    for (size_t i : order) by_model.push_back(pool[i]);
    const std::vector<Config> shortlist =
        screened_in_order(by_model, std::max(shortlist_ * max_batch, kShortlistMin), max_batch);
    if (shortlist.size() <= max_batch) return shortlist;
    learn_features(t.configs);  // those answered as pending before: measured since, so compiled
    return best_of(t, shortlist, max_batch, true);
  }

  // At least `want` configurations that the compile does not condemn, from
  // `ordered` in order: the first `at_least` that compile, and more while
  // fewer than `want` of them are free of spills (when avoid_spills). Their
  // features are learnt a chunk at a time, so no more are compiled than that takes.
  std::vector<Config> screened_in_order(const std::vector<Config>& ordered, size_t at_least, size_t want) {
    if (!use_features_) return {ordered.begin(), ordered.begin() + std::min(at_least, ordered.size())};
    std::vector<Config> compiled, clean;
    const size_t chunk = std::max<size_t>(2 * want, 8);
    for (size_t i = 0; i < ordered.size() && (i < at_least || (avoid_spills_ ? clean.size() : compiled.size()) < want);
         i += chunk) {
      const std::span<const Config> part(ordered.data() + i, std::min(chunk, ordered.size() - i));
      learn_features(part);
      for (const Config& c : part) {
        const StaticFeatures& f = features(c);
        if (!f.compiled) continue;  // pending too: not known yet, asked again at a later proposal
        if (f.spill_bytes == 0) clean.push_back(c);
        compiled.push_back(c);
      }
    }
    if (avoid_spills_ && !clean.empty()) return clean;
    return compiled;
  }

  // Indices of `pool`, best lower confidence bound first; `mean_out` (when
  // given) receives the model's mean for each of `pool`.
  std::vector<size_t> rank(const TrainingSet& t, const std::vector<Config>& pool, bool with_features,
                           std::vector<double>* mean_out = nullptr) {
    std::vector<double> x, xs, mean, sd;
    for (const Config& c : t.configs) encode(c, x, with_features);
    for (const Config& c : pool) encode(c, xs, with_features);
    GaussianProcess gp;
    static constexpr double kLengthscales[] = {0.1, 0.2, 0.4, 0.8};
    gp.fit(std::move(x), encoder_.dims() + (with_features ? kFeatureDims : 0), t.y, kLengthscales);
    gp.predict(xs, pool.size(), mean, sd);
    std::vector<size_t> order(pool.size());
    std::iota(order.begin(), order.end(), 0);
    auto lcb = [&](size_t i) { return mean[i] - kappa_ * sd[i]; };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lcb(a) < lcb(b); });
    if (mean_out) *mean_out = std::move(mean);
    return order;
  }

  // The n best of `pool` for one batch. Each pick after the first is ranked by
  // a model that believes its own mean at the picks before it (the "kriging
  // believer"): their uncertainty is gone, so the next pick goes where the
  // model still expects a gain, not next to the last one. The first n of one
  // ranking are near-copies: on gemm_wgmma_h100 in batches of 8 (a GPU
  // run's) they leave the median after 10 evaluations at 0.83 of the optimum
  // against 0.99 one at a time (docs/benchmarks.md).
  std::vector<Config> best_of(const TrainingSet& t, const std::vector<Config>& pool, size_t n, bool with_features) {
    std::vector<Config> wave;
    TrainingSet believed = t;
    std::vector<bool> taken(pool.size(), false);
    std::vector<double> mean;
    while (wave.size() < n && wave.size() < pool.size()) {
      const std::vector<size_t> order = rank(believed, pool, with_features, &mean);
      size_t pick = order.front();
      for (size_t i : order)
        if (!taken[i]) {
          pick = i;
          break;
        }
      taken[pick] = true;
      wave.push_back(pool[pick]);
      believed.configs.push_back(pool[pick]);
      believed.y.push_back(mean[pick]);
    }
    return wave;
  }

  // A drifting random sample (drifting_sample: what the model ranked close
  // to the short list stays in view) plus the new neighbours of the three best.
  std::vector<Config> candidate_pool() {
    std::vector<Config> pool = drifting_sample(reserve_, pool_);
    add_neighbours_of_best(pool, 3);
    return pool;
  }

  // Drops what the compile already condemns; keeps the pool when that is everything.
  std::vector<Config> screen(std::vector<Config> pool) { return screened_in_order(pool, pool.size(), pool.size()); }

  static constexpr size_t kFeatureDims = 4;
  // The short list gets `shortlist` candidates per configuration proposed,
  // at least kShortlistMin: one round of a 16-process compile pool, so with
  // the default shortlist of 2 a GPU run's batch of 8 waits for one round of
  // feature compiles, not two (docs/benchmarks.md: "The short list").
  static constexpr size_t kShortlistMin = 16;

  void encode(const Config& c, std::vector<double>& out, bool with_features) {
    encoder_.encode(c, out);
    if (!with_features) return;
    const StaticFeatures& f = features(c);
    out.push_back(std::clamp(f.occupancy, 0.0, 1.0));
    out.push_back(std::min(f.registers / 255.0, 1.0));
    out.push_back(std::min(f.shared_bytes / 232448.0, 1.0));  // the largest per-block shared memory (sm_90)
    out.push_back(f.spill_bytes > 0 ? 1.0 : 0.0);
  }

  ConfigEncoder encoder_;
  size_t initial_, pool_, cap_, shortlist_;
  double kappa_;
  bool avoid_spills_, use_features_;
  std::vector<Config> reserve_;
  std::vector<Config> prior_design_;  // what is left of it
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
           {"avoid_spills", OptionKind::Bool, true, 0, 0, {}, "skip configurations that spill registers"},
           {"shortlist", OptionKind::Int, 2, 1, 1000, {},
            "candidates whose features are compiled per configuration proposed (at least 16 a step): fewer "
            "compiles, a coarser screen"}},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> { return std::make_unique<ModelRank>(ctx); }};
}

}  // namespace ktune::strategy_detail
