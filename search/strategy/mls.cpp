// mls: multi-start local search. Hill climbing (local.h) from a
// random new configuration (or the best of an initial random design); at each local optimum it restarts from another
// random new configuration, or stops when restart is false.
#include "search/strategy/local.h"

namespace ktune::strategy_detail {
namespace {

class MultiStart final : public LocalSearch {
 public:
  explicit MultiStart(const StrategyContext& ctx)
      : LocalSearch(ctx, opt_neighbour(ctx, "neighbour"), initial_design_size(ctx)),
        restart_(opt_bool(ctx, "restart")) {}

 private:
  std::optional<Config> restart_point() override {
    if (!current()) return first_start();
    if (!restart_) return std::nullopt;
    std::vector<Config> start = sample_unknown(1);
    if (start.empty()) return std::nullopt;
    return start[0];
  }
  bool restart_;
};

}  // namespace

StrategyDef mls_def() {
  return {"mls", "multi-start local search: hill climbing from random starts",
          {neighbour_option("repaired"),
           {"restart", OptionKind::Bool, true, 0, 0, {}, "restart at a random configuration after a local optimum"},
           {"initial_samples", OptionKind::Int, 0, 0, 100000, {},
            "random configurations measured first; the first climb starts at their best (at most max_fevals/4)"}},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> { return std::make_unique<MultiStart>(ctx); }};
}

}  // namespace ktune::strategy_detail
