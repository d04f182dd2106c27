// vnd: variable-neighbourhood descent around the best configuration heard.
//
// The centre is the best configuration so far; its Hamming neighbours (one
// parameter changed) are tried best predicted first (`guide: knn`: by the
// configurations heard nearest to each; `none`: in random order), `max_batch`
// at a time, and the centre moves to the best of a batch as soon as it
// improves on it (first improvement). When none of them improves, the wider
// neighbourhood follows: two parameters changed at once, each to an adjacent
// value (`wide: adjacent2`), or to any value (`hamming2`), or both in that
// order. Good configurations of a kernel often differ from their neighbours
// in two coupled parameters (a block's x and y extents): one change alone
// leaves the valid or fast region, two together do not. A two-parameter
// neighbourhood (hundreds of configurations) that gave nothing better in
// `patience` new ones is given up: guided, its best candidates came first.
// When every neighbourhood of the centre is spent, a new climb starts at a
// random new configuration (`restart: random`) or at a random walk of
// `perturbation` Hamming steps from the best (`restart: perturb`). Whenever a
// better configuration is heard than any before (from this strategy's own
// climb, or from another strategy that shares its results in a portfolio),
// the centre jumps there and the descent starts again from the narrowest
// neighbourhood. After a step that improved on the centre, the same step is
// tried again first (`pattern`). Known configurations cost nothing: they are
// judged from memory.
#include <algorithm>
#include <cmath>

#include "ktune/error.h"

#include "search/strategy/local.h"

namespace ktune::strategy_detail {
namespace {

class VariableNeighbourhoodDescent final : public StrategyBase {
 public:
  explicit VariableNeighbourhoodDescent(const StrategyContext& ctx)
      : StrategyBase(ctx),
        initial_(initial_design_size(ctx)),
        perturbation_(static_cast<int>(opt_int(ctx, "perturbation"))),
        perturb_(opt_choice(ctx, "restart") == "perturb"),
        pattern_(opt_bool(ctx, "pattern")),
        guided_(opt_choice(ctx, "guide") == "knn"),
        neighbours_(static_cast<size_t>(opt_int(ctx, "neighbours"))),
        patience_(static_cast<size_t>(opt_int(ctx, "patience"))) {
    const std::string& wide = opt_choice(ctx, "wide");
    if (wide == "adjacent2" || wide == "both") levels_.push_back(Level::Adjacent2);
    if (wide == "hamming2" || wide == "both") levels_.push_back(Level::Hamming2);
    levels_.insert(levels_.begin(), Level::Hamming1);
    for (const Parameter& p : ctx.space->parameters()) sizes_.push_back(static_cast<uint32_t>(p.values.size()));
  }

 private:
  enum class Level { Hamming1, Adjacent2, Hamming2 };

  std::vector<Config> next_wave(size_t max_batch) override {
    if (num_results() < initial_) {
      std::vector<Config> design = screened_sample(std::min(max_batch, initial_ - num_results()));
      if (!design.empty()) return design;
    }
    absorb_batch();
    // Bounded: each pass either proposes, moves the centre to a strictly
    // better configuration, widens the neighbourhood or restarts.
    for (int guard = 0; guard < 100000; ++guard) {
      if (best() && best_score() < seen_best_) {
        seen_best_ = best_score();
        if (!centre_ || *centre_ != *best()) set_centre(*best(), best_score());
      }
      if (!centre_) return screened_sample(max_batch);  // nothing has succeeded yet
      std::vector<Config> wave;
      bool moved = false;
      order_frontier();
      if (patience_ > 0 && level_ > 0 && tried_ >= patience_) frontier_.clear();  // this level gave nothing
      while (!frontier_.empty() && wave.size() < max_batch) {
        Config c = std::move(frontier_.back());
        frontier_.pop_back();
        pattern_pushed_ = false;
        if (!known(c)) {
          if (!condemned(c)) wave.push_back(std::move(c));
        } else if (double s = score(c); s < centre_score_) {  // heard from elsewhere: a free move
          const Config from = *centre_;
          set_centre(std::move(c), s);
          if (pattern_) push_pattern_move(from);
          moved = true;
          break;
        }
      }
      if (moved) continue;
      if (!wave.empty()) {
        tried_ += wave.size();
        batch_ = wave;
        return wave;
      }
      if (level_ + 1 < levels_.size()) {
        start_level(level_ + 1);
        continue;
      }
      std::optional<Config> start = restart_point();
      if (!start) return {};
      const double s = known(*start) ? score(*start) : kFailed;
      set_centre(*start, s);
      if (!known(*start)) {
        batch_ = {*start};
        return batch_;
      }
    }
    return sample_unknown(max_batch);
  }

  // Moves the centre to the best of the last wave when it improves on it (the
  // restart point of a new climb is the centre itself: its score is read).
  void absorb_batch() {
    if (centre_ && centre_score_ == kFailed) centre_score_ = score(*centre_);
    const Config* better = nullptr;
    double better_score = centre_score_;
    for (const Config& c : batch_)
      if (double s = score(c); s < better_score) better = &c, better_score = s;
    if (better) {
      const Config from = *centre_;
      set_centre(Config(*better), better_score);
      if (pattern_) push_pattern_move(from);
    }
    batch_.clear();
  }

  // A pattern move (Hooke and Jeeves): after a step from `from` to the
  // centre that improved on it, the same step once more, tried first. Value
  // indices are ordered, so a step that helped often helps again (a larger
  // block, a longer tile); a repeat that improves is repeated in turn.
  void push_pattern_move(const Config& from) {
    Config next = *centre_;
    for (size_t d = 0; d < next.size(); ++d) {
      const int64_t v = 2 * int64_t{(*centre_)[d]} - int64_t{from[d]};
      if (v < 0 || v >= int64_t{sizes_[d]}) return;
      next[d] = static_cast<uint32_t>(v);
    }
    if (space().is_valid(next)) {
      frontier_.push_back(std::move(next));
      pattern_pushed_ = true;
      ordered_at_ = kNever;
    }
  }

  void set_centre(Config c, double s) {
    centre_ = std::move(c);
    centre_score_ = s;
    start_level(0);
  }

  // The centre's neighbourhood at `level`, not yet tried nor ordered.
  void start_level(size_t level) {
    level_ = level;
    tried_ = 0;
    frontier_ = neighbourhood(*centre_, levels_[level_]);
    ordered_at_ = kNever;
    pattern_pushed_ = false;
  }

  // Orders the frontier (`guide`) so that the configuration predicted best is
  // tried first (the frontier is popped from the back). The prediction is the
  // mean rank of the `neighbours` nearest configurations heard (fewest
  // parameters differing, then the smallest index distance): in a
  // two-parameter neighbourhood whose one-parameter steps were all measured,
  // that is close to an additive model of the two steps, so the pairs whose
  // single steps did not hurt come first. Ties keep the shuffled order.
  // Re-ordered whenever something new was heard; a frontier pushed by the
  // pattern move keeps that move last, so it is still tried first.
  void order_frontier() {
    if (!guided_ || frontier_.size() < 2 || ordered_at_ == history().size()) return;
    ordered_at_ = history().size();
    std::optional<Config> last;
    if (pattern_pushed_) {
      last = std::move(frontier_.back());
      frontier_.pop_back();
    }
    const std::vector<double> predicted = predict(frontier_);
    if (!predicted.empty()) {
      std::vector<size_t> idx(frontier_.size());
      for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
      // Worst first, best last (popped first); stable, so ties keep the shuffle.
      std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return predicted[a] > predicted[b]; });
      std::vector<Config> sorted;
      sorted.reserve(frontier_.size() + 1);
      for (size_t i : idx) sorted.push_back(std::move(frontier_[i]));
      frontier_ = std::move(sorted);
    }
    if (last) frontier_.push_back(std::move(*last));
  }

  // The kNN prediction of each candidate (lower is better; empty while
  // nothing has succeeded): the mean, over the `neighbours` nearest heard
  // configurations, of their score's quantile among the successes (a failure
  // counts 1.5). Distance: the parameters that differ, each plus a tenth of
  // its index distance over its range, so that among equally many
  // differences the nearer values count first.
  std::vector<double> predict(const std::vector<Config>& candidates) const {
    std::vector<double> ranked;
    for (const auto& [c, s] : history())
      if (s != kFailed) ranked.push_back(s);
    if (ranked.empty()) return {};
    std::sort(ranked.begin(), ranked.end());
    std::vector<std::pair<double, const Config*>> heard;
    heard.reserve(history().size());
    for (const auto& [c, s] : history()) {
      const double q =
          s == kFailed ? 1.5
                       : static_cast<double>(std::lower_bound(ranked.begin(), ranked.end(), s) - ranked.begin()) /
                             static_cast<double>(std::max<size_t>(1, ranked.size() - 1));
      heard.emplace_back(q, &c);
    }
    std::vector<std::pair<double, double>> nearest;  // (distance, quantile)
    std::vector<double> predicted(candidates.size());
    for (size_t i = 0; i < candidates.size(); ++i) {
      const Config& f = candidates[i];
      nearest.clear();
      for (const auto& [q, c] : heard) {
        double d = 0;
        for (size_t k = 0; k < f.size(); ++k)
          if (f[k] != (*c)[k])
            d += 1.0 + 0.1 * std::abs(double(f[k]) - double((*c)[k])) / std::max<uint32_t>(1, sizes_[k] - 1);
        nearest.emplace_back(d, q);
      }
      const size_t k = std::min(neighbours_, nearest.size());
      std::partial_sort(nearest.begin(), nearest.begin() + static_cast<std::ptrdiff_t>(k), nearest.end());
      double sum = 0;
      for (size_t j = 0; j < k; ++j) sum += nearest[j].second;
      predicted[i] = sum / static_cast<double>(k);
    }
    return predicted;
  }

  // The valid configurations of one neighbourhood of c, shuffled.
  std::vector<Config> neighbourhood(const Config& c, Level level) {
    std::vector<Config> out;
    if (level == Level::Hamming1) {
      out = space().neighbours(c, NeighbourKind::Hamming);
    } else {
      for (size_t a = 0; a < c.size(); ++a)
        for (size_t b = a + 1; b < c.size(); ++b) {
          if (sizes_[a] < 2 || sizes_[b] < 2) continue;
          Config n = c;
          for (uint32_t va = 0; va < sizes_[a]; ++va) {
            if (va == c[a] || (level == Level::Adjacent2 && va + 1 != c[a] && va != c[a] + 1)) continue;
            for (uint32_t vb = 0; vb < sizes_[b]; ++vb) {
              if (vb == c[b] || (level == Level::Adjacent2 && vb + 1 != c[b] && vb != c[b] + 1)) continue;
              n[a] = va, n[b] = vb;
              if (space().is_valid(n)) out.push_back(n);
            }
          }
        }
    }
    shuffle(out, rng());
    return out;
  }

  // With compile features (StrategyContext::features; a compile each on a
  // GPU host), a configuration that fails to compile or spills registers is
  // passed over, as model_rank passes it over: no GPU time on what the
  // compiler condemns. Features are asked for a few of the frontier at a
  // time (kFrontierAsk), so that the compiles run in parallel without making
  // the proposal wait for many it will not measure soon. Without features
  // nothing is.
  static constexpr size_t kFrontierAsk = 4;
  bool condemned(const Config& c) {
    if (!context().features) return false;
    if (!features_known(c)) {
      std::vector<Config> ask{c};
      for (auto it = frontier_.rbegin(); it != frontier_.rend() && ask.size() < kFrontierAsk; ++it)
        if (!known(*it) && !features_known(*it)) ask.push_back(*it);
      learn_features(ask);
    }
    const StaticFeatures& f = features(c);
    return !f.pending && (!f.compiled || f.spill_bytes > 0);  // pending: not known yet, measured as it comes
  }

  // The frontier's next ones already compiled clean (condemned() asked
  // ahead for them), then the short lists' leftovers.
  std::vector<Config> spare(size_t n) override {
    std::vector<Config> out;
    for (auto it = frontier_.rbegin(); it != frontier_.rend() && out.size() < n; ++it)
      if (!known(*it) && features_known(*it) && features(*it).compiled && features(*it).spill_bytes == 0)
        out.push_back(*it);
    for (Config& c : StrategyBase::spare(n))
      if (out.size() < n && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(std::move(c));
    return out;
  }

  std::optional<Config> restart_point() {
    if (perturb_ && best()) {
      Config walk = *best();
      for (int step = 0; step < perturbation_; ++step) {
        std::vector<Config> nb = space().neighbours(walk, NeighbourKind::Hamming);
        if (nb.empty()) break;
        walk = nb[below(rng(), nb.size())];
      }
      if (!known(walk)) return walk;
    }
    std::vector<Config> start = screened_sample(1);
    if (start.empty()) return std::nullopt;
    return start[0];
  }

  // Up to n random new configurations; with features, those of a larger draw
  // that the compiler does not condemn (the draw itself when none passes).
  std::vector<Config> screened_sample(size_t n) {
    if (!context().features) return sample_unknown(n);
    return screened(sample_unknown(std::max(n, kFeatureChunk)), n);
  }

  size_t initial_;
  int perturbation_;
  bool perturb_;
  bool pattern_;
  std::vector<Level> levels_;
  std::vector<uint32_t> sizes_;
  std::optional<Config> centre_;
  double centre_score_ = kFailed;
  double seen_best_ = kFailed;
  bool guided_;  // guide: knn
  size_t neighbours_;
  size_t patience_;
  size_t tried_ = 0;  // configurations proposed from the current neighbourhood
  static constexpr size_t kNever = static_cast<size_t>(-1);
  size_t ordered_at_ = kNever;  // history().size() when the frontier was last ordered
  bool pattern_pushed_ = false;  // the frontier's last entry is a pattern move
  size_t level_ = 0;
  std::vector<Config> frontier_, batch_;
};

}  // namespace

StrategyDef vnd_def() {
  return {"vnd",
          "variable-neighbourhood descent: first improvement over one-parameter changes of the best, then "
          "two-parameter changes, then a restart",
          {{"wide", OptionKind::Choice, "both", 0, 0, {"adjacent2", "hamming2", "both", "none"},
            "the neighbourhood after the Hamming one: two parameters to adjacent values, to any values, both "
            "in that order, or none"},
           {"restart", OptionKind::Choice, "random", 0, 0, {"random", "perturb"},
            "where a climb starts when every neighbourhood is spent: a random new configuration, or a random "
            "walk from the best"},
           {"perturbation", OptionKind::Int, 3, 1, 1000, {}, "Hamming steps of a perturb restart"},
           {"pattern", OptionKind::Bool, true, 0, 0, {},
            "after a step that improved on the centre, the same step once more, tried first (a Hooke-Jeeves "
            "pattern move)"},
           {"guide", OptionKind::Choice, "knn", 0, 0, {"none", "knn"},
            "the order a neighbourhood is tried in: shuffled, or best predicted first (the mean rank of the "
            "`neighbours` nearest configurations heard)"},
           {"neighbours", OptionKind::Int, 5, 1, 1000, {}, "how many heard configurations predict one (guide: knn)"},
           {"patience", OptionKind::Int, 12, 0, 1000000, {},
            "new configurations tried in a two-parameter neighbourhood before it is given up (0: all of them)"},
           {"initial_samples", OptionKind::Int, 8, 0, 100000, {},
            "random configurations measured first; the descent starts at their best (at most max_fevals/4)"}},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> {
            return std::make_unique<VariableNeighbourhoodDescent>(ctx);
          }};
}

}  // namespace ktune::strategy_detail
