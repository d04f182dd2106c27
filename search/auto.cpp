// auto: model_rank for the first `switch_at` evaluations,
// where screening and a local-emphasis model pick better than a random design,
// then bayes_opt, handed every observation so far (as results of an earlier
// run, which the Strategy protocol allows before a first propose()), so its
// model starts from them instead of from a fresh random design.
#include "search/combined.h"
#include "search/registry.h"

namespace ktune::strategy_detail {
namespace {

class Auto final : public Strategy {
 public:
  explicit Auto(const StrategyContext& ctx)
      : ctx_(ctx), switch_at_(static_cast<size_t>(opt_int(ctx, "switch_at"))) {
    StrategyContext first = ctx_;
    first.options.clear();  // each part runs with its own defaults
    first_ = make_strategy("model_rank", first);
  }

  std::vector<Config> propose(size_t max_batch) override {
    if (!second_ && seen_.size() >= switch_at_) {
      StrategyContext second = ctx_;
      second.options.clear();
      second_ = make_strategy("bayes_opt", second);
      second_->observe(seen_);
    }
    if (second_) return second_->propose(max_batch);
    return first_->propose(std::min(max_batch, switch_at_ - seen_.size()));
  }

  // The hint of the strategy proposing now (the switch to bayes_opt is
  // after its own next proposal's results, which a hint cannot foresee).
  std::vector<Config> upcoming(size_t n) override { return (second_ ? second_ : first_)->upcoming(n); }
  std::vector<Config> spare(size_t n) override { return (second_ ? second_ : first_)->spare(n); }

  void observe(std::span<const Observation> results) override {
    seen_.insert(seen_.end(), results.begin(), results.end());
    (second_ ? second_ : first_)->observe(results);
  }

 private:
  StrategyContext ctx_;
  size_t switch_at_;
  std::unique_ptr<Strategy> first_, second_;
  std::vector<Observation> seen_;
};

}  // namespace

StrategyDef auto_def() {
  return {"auto",
          "model_rank for the first evaluations, then bayes_opt continuing from what they found",
          {{"switch_at", OptionKind::Int, 10, 1, 100000, {}, "evaluations before bayes_opt takes over"}},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> { return std::make_unique<Auto>(ctx); }};
}

}  // namespace ktune::strategy_detail
