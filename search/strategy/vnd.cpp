// vnd: variable-neighbourhood descent around the best configuration heard.
//
// The centre is the best configuration so far; its Hamming neighbours (one
// parameter changed) are tried in random order, `max_batch` at a time, and
// the centre moves to the best of a batch as soon as it improves on it (first
// improvement). When none of them improves, the wider neighbourhood follows:
// two parameters changed at once, each to an adjacent value (`wide:
// adjacent2`), or to any value (`hamming2`), or both in that order. Good
// configurations of a kernel often differ from their neighbours in two
// coupled parameters (a block's x and y extents): one change alone leaves the
// valid or fast region, two together do not. When every neighbourhood of the
// centre is spent, a new climb starts at a random new configuration
// (`restart: random`) or at a random walk of `perturbation` Hamming steps from
// the best (`restart: perturb`). Whenever a better configuration is heard than
// any before (from this strategy's own climb, or from another strategy that
// shares its results in a portfolio), the centre jumps there and the descent
// starts again from the narrowest neighbourhood. After a step that improved
// on the centre, the same step is tried again first (`pattern`). Known
// configurations cost nothing: they are judged from memory.
#include <algorithm>

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
        pattern_(opt_bool(ctx, "pattern")) {
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
      while (!frontier_.empty() && wave.size() < max_batch) {
        Config c = std::move(frontier_.back());
        frontier_.pop_back();
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
        batch_ = wave;
        return wave;
      }
      if (level_ + 1 < levels_.size()) {
        ++level_;
        frontier_ = neighbourhood(*centre_, levels_[level_]);
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
    if (space().is_valid(next)) frontier_.push_back(std::move(next));
  }

  void set_centre(Config c, double s) {
    centre_ = std::move(c);
    centre_score_ = s;
    level_ = 0;
    frontier_ = neighbourhood(*centre_, levels_[0]);
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
  // compiler condemns. Features are asked for a chunk of the frontier at a
  // time, so that the compiles run in parallel. Without features nothing is.
  bool condemned(const Config& c) {
    if (!context().features) return false;
    if (!features_.count(c)) {
      std::vector<Config> ask{c};
      for (auto it = frontier_.rbegin(); it != frontier_.rend() && ask.size() < kFeatureChunk; ++it)
        if (!known(*it) && !features_.count(*it)) ask.push_back(*it);
      learn_features(ask);
    }
    const StaticFeatures& f = features_.at(c);
    return !f.compiled || f.spill_bytes > 0;
  }

  // Asks for the features of those of `configs` not asked for before, in one batch.
  void learn_features(std::vector<Config> configs) {
    std::erase_if(configs, [&](const Config& c) { return features_.count(c) > 0; });
    std::sort(configs.begin(), configs.end());
    configs.erase(std::unique(configs.begin(), configs.end()), configs.end());
    if (configs.empty()) return;
    const std::vector<StaticFeatures> got = context().features(configs);
    if (got.size() != configs.size())
      throw Error::failed("vnd: the feature source answered " + std::to_string(got.size()) + " of " +
                          std::to_string(configs.size()) + " configurations");
    for (size_t i = 0; i < configs.size(); ++i) features_.emplace(std::move(configs[i]), got[i]);
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
    std::vector<Config> drawn = sample_unknown(std::max(n, kFeatureChunk));
    if (drawn.empty()) return drawn;
    learn_features(drawn);
    std::vector<Config> clean;
    for (const Config& c : drawn) {
      const StaticFeatures& f = features_.at(c);
      if (f.compiled && f.spill_bytes == 0 && clean.size() < n) clean.push_back(c);
    }
    if (clean.empty()) drawn.resize(std::min(n, drawn.size()));
    return clean.empty() ? drawn : clean;
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
  size_t level_ = 0;
  std::vector<Config> frontier_, batch_;
  static constexpr size_t kFeatureChunk = 16;  // one round of a 16-process compile pool
  std::unordered_map<Config, StaticFeatures, ConfigHash> features_;
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
           {"initial_samples", OptionKind::Int, 8, 0, 100000, {},
            "random configurations measured first; the descent starts at their best (at most max_fevals/4)"}},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> {
            return std::make_unique<VariableNeighbourhoodDescent>(ctx);
          }};
}

}  // namespace ktune::strategy_detail
