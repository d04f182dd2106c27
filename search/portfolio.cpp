// portfolio: two strategies taking turns, each told every result: `first`
// (model_rank) and `second` (vnd by default: variable-neighbourhood descent
// around the best so far, which also sees what the first found, so its
// descent starts from the best so far). A model that fits the space leads;
// where it does not (a rugged space whose good configurations are isolated, a
// needle whose neighbours are 0.7 of it), the local search still walks there.
// With `share: fixed` every `every`-th proposal is the second's; with `share:
// adaptive` (the default) each member's share follows how often its proposals
// improved on the best, so the member making progress on this kernel gets
// more of the budget. Each member runs with its own defaults, but for a
// shared `initial_samples`. With the defaults it is ktune's default strategy
// (search/registry.cpp).
#include <algorithm>
#include <unordered_map>

#include "search/strategy/support.h"

namespace ktune::strategy_detail {
namespace {

class Portfolio final : public Strategy {
 public:
  explicit Portfolio(const StrategyContext& ctx)
      : every_(static_cast<size_t>(opt_int(ctx, "every"))), adaptive_(opt_choice(ctx, "share") == "adaptive") {
    StrategyContext a = ctx, b = ctx;
    a.options.clear();
    b.options.clear();
    b.seed = ctx.seed * 0x9E3779B97F4A7C15ULL + 1;
    const std::string &first = opt_choice(ctx, "first"), &second = opt_choice(ctx, "second");
    // One initial design for both: each member counts every result heard, so
    // the design ends when the results of both reach it.
    if (const int64_t n = opt_int(ctx, "initial_samples"); n > 0) {
      if (has_option(first, "initial_samples")) a.options["initial_samples"] = Value(n);
      if (has_option(second, "initial_samples")) b.options["initial_samples"] = Value(n);
    }
    first_ = make_strategy(first, a);
    second_ = make_strategy(second, b);
  }

  static bool has_option(const std::string& strategy, const std::string& option) {
    for (const auto& [name, what] : strategy_info(strategy).options)
      if (name == option) return true;
    return false;
  }

  std::vector<Config> propose(size_t max_batch) override {
    ++turn_;
    const bool second = second_turn(turn_);
    std::vector<Config> out = (second ? second_ : first_)->propose(max_batch);
    size_t by = second ? 1 : 0;
    if (out.empty()) {
      out = (second ? first_ : second_)->propose(max_batch);
      by = 1 - by;
    }
    given_[by] += static_cast<double>(out.size());
    for (const Config& c : out) owner_[c] = by;
    return out;
  }

  // The hint of the member whose turn comes next.
  std::vector<Config> upcoming(size_t n) override {
    return (second_turn(turn_ + 1) ? second_ : first_)->upcoming(n);
  }

  void observe(std::span<const Observation> results) override {
    for (const Observation& o : results) {
      const double s = ranking_score(o);
      auto it = owner_.find(o.config);
      if (it != owner_.end()) {
        // Credit: the member whose proposal improved on the best so far.
        if (s < best_) credit_[it->second] += 1;
        owner_.erase(it);
      }
      best_ = std::min(best_, s);
    }
    first_->observe(results);
    second_->observe(results);
  }

 private:
  // Fixed shares: every `every`-th turn is the second member's. Adaptive
  // shares: the second member's share of the proposals follows its share of
  // the improvements on the best so far (each member starting with one), held
  // between a quarter and three quarters so that neither member starves; the
  // turn goes to the member furthest below its share.
  bool second_turn(size_t turn) const {
    if (every_ == 0) return false;
    if (!adaptive_) return turn % every_ == 0;
    const double rate0 = (credit_[0] + 1) / (given_[0] + 2), rate1 = (credit_[1] + 1) / (given_[1] + 2);
    const double share = std::clamp(rate1 / (rate0 + rate1), 0.25, 0.75);
    return given_[1] < share * (given_[0] + given_[1]);  // the first member opens (a prior's picks)
  }

  size_t every_;
  bool adaptive_;
  size_t turn_ = 0;
  std::unique_ptr<Strategy> first_, second_;
  double given_[2] = {0, 0};   // configurations proposed by each member
  double credit_[2] = {0, 0};  // of those, how many improved on the best so far
  double best_ = kFailed;
  std::unordered_map<Config, size_t, ConfigHash> owner_;  // proposals awaiting their result
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
           {"every", OptionKind::Int, 2, 0, 1000, {}, "every how many proposals `second` takes (0: never)"},
           {"initial_samples", OptionKind::Int, 0, 0, 100000, {},
            "random configurations measured first, for both members (0: each member's own default)"},
           {"share", OptionKind::Choice, "adaptive", 0, 0, {"fixed", "adaptive"},
            "fixed: `every` sets the turns; adaptive: each member's share follows how often its proposals improved "
            "on the best so far (between a quarter and three quarters; `every` 0 still means never)"}},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> { return std::make_unique<Portfolio>(ctx); }};
}

}  // namespace ktune::strategy_detail
