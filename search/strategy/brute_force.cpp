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
  uint64_t next_ = 0;
};

}  // namespace

StrategyDef brute_force_def() {
  return {"brute_force", "every valid configuration in index order", {},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> { return std::make_unique<BruteForce>(ctx); },
          64, true};
}

}  // namespace ktune::strategy_detail
