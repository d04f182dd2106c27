// random_sample: uniform over the valid configurations, without replacement.
// On addressable spaces a lazily built Fisher-Yates permutation of the indices
// makes every draw O(1); larger spaces fall back to rejection sampling. With
// `edges` > 0 each parameter of more than two values is drawn at an end of
// its list with that probability (sample_edges), as the default's random
// picks are.
#include <unordered_map>

#include "search/strategy/support.h"

namespace ktune::strategy_detail {
namespace {

class RandomSample final : public StrategyBase {
 public:
  explicit RandomSample(const StrategyContext& ctx) : StrategyBase(ctx), edges_(opt_float(ctx, "edges")) {}

 private:
  std::vector<Config> next_wave(size_t max_batch) override {
    if (edges_ > 0) return sample_edges(max_batch, edges_);
    if (!indexable()) return sample_unknown(max_batch);
    std::vector<Config> wave;
    const uint64_t n = valid_count();
    for (; drawn_ < n && wave.size() < max_batch; ++drawn_) {
      const uint64_t j = drawn_ + below(rng(), n - drawn_);
      const uint64_t pick = slot(j);
      swapped_[j] = slot(drawn_);
      wave.push_back(space().at(pick));
    }
    return wave;
  }
  // The draws next_wave will make, on a copy of the generator, the swaps
  // they would make kept aside.
  std::vector<Config> upcoming(size_t n) override {
    if (edges_ > 0 || !indexable()) return {};
    std::vector<Config> next;
    std::mt19937_64 g = rng();
    std::unordered_map<uint64_t, uint64_t> swaps;
    auto at = [&](uint64_t i) {
      auto it = swaps.find(i);
      return it == swaps.end() ? slot(i) : it->second;
    };
    const uint64_t total = valid_count();
    for (uint64_t d = drawn_; d < total && next.size() < n; ++d) {
      const uint64_t j = d + below(g, total - d);
      const uint64_t pick = at(j);
      swaps[j] = at(d);
      next.push_back(space().at(pick));
    }
    return next;
  }
  uint64_t slot(uint64_t i) const {
    auto it = swapped_.find(i);
    return it == swapped_.end() ? i : it->second;
  }
  double edges_;
  uint64_t drawn_ = 0;
  std::unordered_map<uint64_t, uint64_t> swapped_;
};

}  // namespace

StrategyDef random_sample_def() {
  return {"random_sample", "uniform random valid configurations, without replacement",
          {edges_option("edges", 0.0)},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> { return std::make_unique<RandomSample>(ctx); },
          64, true};
}

}  // namespace ktune::strategy_detail
