// brute_force: every valid configuration in index order. The reference for
// exhaustive tuning and for tests; pointless on large spaces.
#include "search/strategy/support.h"

namespace ktune::strategy_detail {
namespace {

class BruteForce final : public StrategyBase {
 public:
  using StrategyBase::StrategyBase;

 private:
  std::vector<Config> next_wave(size_t max_batch) override {
    std::vector<Config> wave;
    for (; next_ < valid_count() && wave.size() < max_batch; ++next_) wave.push_back(space().at(next_));
    return wave;
  }
  std::vector<Config> upcoming(size_t n) override {
    std::vector<Config> next;
    for (uint64_t i = next_; i < valid_count() && next.size() < n; ++i) next.push_back(space().at(i));
    return next;
  }
  uint64_t next_ = 0;
};

}  // namespace

StrategyDef brute_force_def() {
  return {"brute_force", "every valid configuration in index order", {},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> { return std::make_unique<BruteForce>(ctx); },
          64, true};
}

}  // namespace ktune::strategy_detail
