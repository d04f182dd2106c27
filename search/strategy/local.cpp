#include "search/strategy/local.h"

#include <algorithm>

namespace ktune::strategy_detail {

void LocalSearch::move_to(const Config& c, double s) {
  cur_ = c;
  cur_score_ = s;
  frontier_ = space().neighbours(c, kind_);
  shuffle(frontier_, rng());
}

void LocalSearch::absorb_batch() {
  if (awaiting_start_) {
    awaiting_start_ = false;
    move_to(*cur_, score(*cur_));
  }
  const Config* best = nullptr;
  double best_score = cur_score_;
  for (const Config& c : batch_)
    if (double s = score(c); s < best_score) best = &c, best_score = s;
  if (best) move_to(Config(*best), best_score);
  batch_.clear();
}

size_t initial_design_size(const StrategyContext& ctx) {
  const size_t opt = static_cast<size_t>(opt_int(ctx, "initial_samples"));
  return ctx.max_fevals ? std::min<size_t>(opt, std::max<uint64_t>(1, ctx.max_fevals / 4)) : opt;
}

std::optional<Config> LocalSearch::first_start() {
  if (best()) return best();
  std::vector<Config> start = sample_unknown(1);
  if (start.empty()) return std::nullopt;
  return start[0];
}

std::vector<Config> LocalSearch::next_wave(size_t max_batch) {
  if (!cur_ && num_results() < initial_) {
    std::vector<Config> design = sample_unknown(std::min(max_batch, initial_ - num_results()));
    if (!design.empty()) return design;
  }
  // Known neighbours are judged here without a round trip; the bound only
  // protects against a restart_point() that keeps returning known ground.
  for (int guard = 0; guard < 100000; ++guard) {
    absorb_batch();
    if (!cur_ || frontier_.empty()) {
      std::optional<Config> start = restart_point();
      if (!start) return {};
      cur_ = *start;
      frontier_.clear();
      if (!known(*start)) {
        awaiting_start_ = true;
        return {*start};
      }
      move_to(*start, score(*start));
      continue;
    }
    bool any_new = false;
    while (!frontier_.empty() && batch_.size() < max_batch) {
      any_new = any_new || !known(frontier_.back());
      batch_.push_back(std::move(frontier_.back()));
      frontier_.pop_back();
    }
    if (any_new) return batch_;
  }
  return sample_unknown(max_batch);
}

}  // namespace ktune::strategy_detail
