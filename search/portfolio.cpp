// portfolio: two strategies taking turns, each told every result. Most
// proposals come from `first` (model_rank); every `every`-th from `second`
// (vnd by default: variable-neighbourhood descent around the best so far),
// which also sees what the first found, so its descent starts from the best
// so far. A model that fits the space leads; where it does not (a rugged
// space whose good configurations are isolated, a needle whose neighbours are
// 0.7 of it), the local search still walks there. Each member runs with its
// own defaults. With the defaults (model_rank and vnd in turn) it is ktune's
// default strategy (search/registry.cpp).
#include "search/strategy/support.h"

namespace ktune::strategy_detail {
namespace {

class Portfolio final : public Strategy {
 public:
  explicit Portfolio(const StrategyContext& ctx) : every_(static_cast<size_t>(opt_int(ctx, "every"))) {
    StrategyContext a = ctx, b = ctx;
    a.options.clear();
    b.options.clear();
    b.seed = ctx.seed * 0x9E3779B97F4A7C15ULL + 1;
    first_ = make_strategy(opt_choice(ctx, "first"), a);
    second_ = make_strategy(opt_choice(ctx, "second"), b);
  }

  std::vector<Config> propose(size_t max_batch) override {
    ++turn_;
    const bool second = every_ > 0 && turn_ % every_ == 0;
    std::vector<Config> out = (second ? second_ : first_)->propose(max_batch);
    if (out.empty()) out = (second ? first_ : second_)->propose(max_batch);
    return out;
  }

  // The hint of the member whose turn comes next.
  std::vector<Config> upcoming(size_t n) override {
    const bool second = every_ > 0 && (turn_ + 1) % every_ == 0;
    return (second ? second_ : first_)->upcoming(n);
  }

  void observe(std::span<const Observation> results) override {
    first_->observe(results);
    second_->observe(results);
  }

 private:
  size_t every_;
  size_t turn_ = 0;
  std::unique_ptr<Strategy> first_, second_;
};

}  // namespace

StrategyDef portfolio_def() {
  return {"portfolio",
          "two strategies taking turns, each told every result: `first` proposes, and every `every`-th proposal "
          "comes from `second`",
          {{"first", OptionKind::Choice, "model_rank", 0, 0, {"model_rank", "bayes_opt", "pso", "mls", "greedy_ils", "vnd"},
            "the leading strategy"},
           {"second", OptionKind::Choice, "vnd", 0, 0,
            {"mls", "greedy_ils", "vnd", "pso", "random_sample", "simulated_annealing", "genetic_algorithm", "model_rank"},
            "the strategy taking every `every`-th turn"},
           {"every", OptionKind::Int, 2, 0, 1000, {}, "every how many proposals `second` takes (0: never)"}},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> { return std::make_unique<Portfolio>(ctx); }};
}

}  // namespace ktune::strategy_detail
