// forest: a random-forest surrogate with expected improvement (SMAC's model,
// Hutter et al. 2011) on value indices.
//
// Each step fits `trees` regression trees, each to a bootstrap sample of the
// results heard (log run times, or ranks on flat landscapes: the targets of
// model_rank's GP, failures at the worst successful value); a tree splits on
// the value index of one parameter at a time, wherever the squared error
// drops most. With `power_of_two`, an integer parameter whose values mix
// powers of two with others (block widths 16, 32, 48, ... 256; tiles 1 to 4)
// also gives a column saying whether its value is one: on AMD's W6600, in
// the region of the convolution's optimum, blocks 16, 32, 64, 128 and 256
// wide run some fifty to a hundred times faster than the 48, 80, 96 ...
// between them, and a tile of 4 than one of 3. A split on an ordered index
// keeps neighbours together and needs one split per value to pick out
// {16, 32, 64, 128, 256}; the column does it in one. Each node chooses
// among `split_features` of the columns (parameters and these)
// drawn at random: trees that all see every parameter split first on the
// same strongest one and agree, so their spread vanishes where nothing was
// measured and the expected improvement keeps to the first good region; on
// flat landscapes (ranked targets), where the few per cent between good
// configurations are what to follow, every parameter is tried. The forest's
// mean and the spread of its trees at a candidate give its expected
// improvement on the best result.
// Unlike a GP on the whole space (model_rank), a tree models interactions
// directly: on the A100 convolution, read-only loads are slow without shared
// memory and fast with it, so the best configurations combine two switches
// that each look poor on average; one split on shared memory and one on
// read-only under it find that corner, where a smooth model of the bulk
// steers away from it. Candidates: every new configuration when the space
// has at most `pool` of them, else `pool` random ones (a few renewed each
// step, as model_rank's) plus every new neighbour of the three best. A batch
// is picked one at a time, the forest refitted with its own mean at the picks
// before (the believer, as model_rank's), so a batch spreads. The first
// configurations are random, or with a prior drawn from its best tenth; with
// compile features what the compiler condemns (no compile, spills) is passed
// over.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "search/strategy/model/gp.h"
#include "search/strategy/model/model.h"

namespace ktune::strategy_detail {
namespace {

// A regression tree on value-index rows. Nodes are stored flat: a leaf has
// feature -1 and its mean in `value`; an inner node sends a row left when its
// index at `feature` is at most `value`. The sample is sorted once per
// parameter and each split partitions those orders stably, so a tree costs
// O(parameters x sample x depth) rather than a sort at every node.
class RegressionTree {
 public:
  // rows: n rows of d columns; y: n targets; sample: the rows to fit (with
  // repeats); features: the columns worth splitting on; tried: how many of
  // them each node chooses among, drawn with rng.
  void fit(const std::vector<double>& rows, size_t d, std::span<const double> y, const std::vector<size_t>& sample,
           const std::vector<size_t>& features, size_t tried, std::mt19937_64& rng) {
    nodes_.clear();
    tried_ = std::min(tried, features.size());
    rng_ = &rng;
    drawn_.resize(features.size());
    std::iota(drawn_.begin(), drawn_.end(), 0);
    d_ = d;
    rows_ = &rows;
    y_ = y;
    sample_ = &sample;
    features_ = &features;
    const size_t n = sample.size();
    order_.assign(features.size(), std::vector<size_t>(n));
    for (size_t k = 0; k < features.size(); ++k) {
      std::vector<size_t>& o = order_[k];
      std::iota(o.begin(), o.end(), 0);
      std::stable_sort(o.begin(), o.end(), [&](size_t a, size_t b) { return at(a, features[k]) < at(b, features[k]); });
    }
    left_.assign(n, false);
    scratch_.resize(n);
    grow(0, n);
  }

  double predict(std::span<const double> row) const {
    size_t i = 0;
    while (nodes_[i].feature >= 0) i = row[size_t(nodes_[i].feature)] <= nodes_[i].value ? nodes_[i].left : nodes_[i].right;
    return nodes_[i].value;
  }

 private:
  struct Node {
    int feature = -1;
    double value = 0;
    size_t left = 0, right = 0;
  };

  // Value of column f of the row drawn in sample slot s, and its target.
  double at(size_t s, size_t f) const { return (*rows_)[(*sample_)[s] * d_ + f]; }
  double target(size_t s) const { return y_[(*sample_)[s]]; }

  // Grows the node for positions [lo, hi) of every order and returns its index.
  size_t grow(size_t lo, size_t hi) {
    const size_t here = nodes_.size();
    nodes_.emplace_back();
    double sum = 0;
    for (size_t i = lo; i < hi; ++i) sum += target(order_[0][i]);
    const double n = double(hi - lo);
    nodes_[here].value = sum / n;
    // The split that leaves the least squared error: maximise sum_l^2/n_l + sum_r^2/n_r.
    double best_gain = sum * sum / n + 1e-12;
    size_t best_k = 0, best_at = 0;
    bool found = false;
    // The best split over `tried_` columns drawn at random (all of them, in
    // order, when tried_ covers every column). When none of those drawn
    // varies within the node it stays a leaf: the trees stop at different
    // depths and average similar configurations, which ranked the A100
    // convolution's corner higher than trees grown to single results.
    const bool draw = tried_ < drawn_.size();
    for (size_t j = 0; j < tried_; ++j) {
      if (draw) std::swap(drawn_[j], drawn_[j + below(*rng_, drawn_.size() - j)]);
      const size_t k = drawn_[j];
      const std::vector<size_t>& o = order_[k];
      const size_t f = (*features_)[k];
      double left = 0;
      for (size_t i = lo; i + 1 < hi; ++i) {
        left += target(o[i]);
        if (at(o[i], f) == at(o[i + 1], f)) continue;
        const double nl = double(i + 1 - lo), nr = n - nl, right = sum - left;
        const double gain = left * left / nl + right * right / nr;
        if (gain > best_gain) {
          best_gain = gain;
          best_k = k;
          best_at = i;
          found = true;
        }
      }
    }
    if (!found) return here;  // every row alike, or one row
    const size_t f = (*features_)[best_k];
    const double threshold = 0.5 * (at(order_[best_k][best_at], f) + at(order_[best_k][best_at + 1], f));
    for (size_t i = lo; i < hi; ++i) left_[order_[0][i]] = at(order_[0][i], f) <= threshold;
    const size_t mid = best_at + 1;
    for (std::vector<size_t>& o : order_) {  // stable partition of [lo, hi): left ones first, each in order
      size_t l = lo, r = 0;
      for (size_t i = lo; i < hi; ++i) (left_[o[i]] ? o[l++] : scratch_[r++]) = o[i];
      std::copy(scratch_.begin(), scratch_.begin() + long(r), o.begin() + long(l));
    }
    nodes_[here].feature = int(f);
    nodes_[here].value = threshold;
    const size_t l = grow(lo, mid);
    nodes_[here].left = l;
    const size_t r = grow(mid, hi);
    nodes_[here].right = r;
    return here;
  }

  std::vector<Node> nodes_;
  size_t d_ = 0;
  const std::vector<double>* rows_ = nullptr;
  std::span<const double> y_;
  const std::vector<size_t>* sample_ = nullptr;
  const std::vector<size_t>* features_ = nullptr;
  std::vector<std::vector<size_t>> order_;  // per feature, sample slots sorted by it
  std::vector<bool> left_;
  std::vector<size_t> scratch_;
  size_t tried_ = 0;  // columns a node chooses its split among
  std::mt19937_64* rng_ = nullptr;
  std::vector<size_t> drawn_;  // positions in features, in the order a node tries them
};

class RandomForest final : public StrategyBase {
 public:
  explicit RandomForest(const StrategyContext& ctx)
      : StrategyBase(ctx),
        initial_(static_cast<size_t>(opt_int(ctx, "initial_samples"))),
        trees_(static_cast<size_t>(opt_int(ctx, "trees"))),
        pool_(static_cast<size_t>(opt_int(ctx, "pool"))),
        cap_(static_cast<size_t>(opt_int(ctx, "max_observations"))),
        xi_(opt_float(ctx, "xi")) {
    initial_ = design_size(initial_);
    prior_design_ = prior_design(initial_);
    const std::vector<Parameter>& ps = ctx.space->parameters();
    for (size_t f = 0; f < ps.size(); ++f)
      if (ps[f].values.size() > 1) columns_.push_back(f);
    if (opt_bool(ctx, "power_of_two"))
      for (size_t f = 0; f < ps.size(); ++f)
        if (mixes_powers_of_two(ps[f].values)) {
          columns_.push_back(ps.size() + power_columns_.size());
          power_columns_.push_back(f);
        }
    tried_ = std::max<size_t>(1, size_t(std::ceil(opt_float(ctx, "split_features") * double(columns_.size()))));
  }

 private:
  std::vector<Config> next_wave(size_t max_batch) override {
    if (num_results() < initial_ || num_successes() == 0)  // the design: the prior's picks, then random ones
      return design_wave(max_batch, initial_, prior_design_);
    std::vector<Config> pool = candidate_pool();
    if (pool.empty()) return {};
    TrainingSet t = make_training_set(history(), cap_);
    std::vector<double> candidates;
    for (const Config& c : pool) append_row(c, candidates);
    // A short list of twice the batch, best first, screened by the compile
    // features; the batch is then picked from it one at a time.
    std::vector<size_t> order = ranked(t, candidates, pool.size());
    std::vector<Config> by_ei;
    for (size_t i : order) by_ei.push_back(pool[i]);
    std::vector<Config> shortlist = screened(std::move(by_ei), max_batch == 1 ? 1 : 2 * max_batch);
    if (shortlist.size() <= max_batch) return shortlist;
    std::vector<double> rows;
    for (const Config& c : shortlist) append_row(c, rows);
    std::vector<Config> wave;
    std::vector<bool> taken(shortlist.size(), false);
    while (wave.size() < max_batch) {
      std::vector<double> mean;
      const std::vector<size_t> o = ranked(t, rows, shortlist.size(), &mean);
      const size_t pick = *std::find_if(o.begin(), o.end(), [&](size_t i) { return !taken[i]; });
      taken[pick] = true;
      wave.push_back(shortlist[pick]);
      t.configs.push_back(shortlist[pick]);
      t.y.push_back(mean[pick]);
    }
    std::vector<Config> rest;
    for (size_t i = 0; i < shortlist.size(); ++i)
      if (!taken[i]) rest.push_back(shortlist[i]);
    keep_spare(rest);
    return wave;
  }

  // Indices of the m candidate rows, highest expected improvement first
  // (ties in the pool's shuffled order); `mean_out` gets the forest's means.
  std::vector<size_t> ranked(const TrainingSet& t, const std::vector<double>& candidates, size_t m,
                             std::vector<double>* mean_out = nullptr) {
    std::vector<double> rows;
    for (const Config& c : t.configs) append_row(c, rows);
    const size_t n = t.configs.size(), d = space().parameters().size() + power_columns_.size();
    std::vector<double> sum(m, 0), sum2(m, 0);
    RegressionTree tree;
    std::vector<size_t> sample(n);
    const size_t tried = t.ranked ? columns_.size() : tried_;
    for (size_t k = 0; k < trees_; ++k) {
      for (size_t& s : sample) s = below(rng(), n);
      tree.fit(rows, d, t.y, sample, columns_, tried, rng());
      for (size_t i = 0; i < m; ++i) {
        const double v = tree.predict(std::span<const double>(candidates.data() + i * d, d));
        sum[i] += v;
        sum2[i] += v * v;
      }
    }
    const double best = *std::min_element(t.y.begin(), t.y.end());
    std::vector<double> ei(m), mean(m);
    for (size_t i = 0; i < m; ++i) {
      mean[i] = sum[i] / double(trees_);
      const double var = std::max(0.0, sum2[i] / double(trees_) - mean[i] * mean[i]);
      ei[i] = expected_improvement(mean[i], std::sqrt(var), best, xi_);
    }
    std::vector<size_t> order(m);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ei[a] > ei[b]; });
    if (mean_out) *mean_out = std::move(mean);
    return order;
  }

  // Every new configuration of a small space; else a drifting random sample
  // (drifting_sample, as model_rank's) plus the new neighbours of the three best.
  std::vector<Config> candidate_pool() {
    std::vector<Config> pool = valid_count() <= pool_ + num_results() ? sample_unknown(size_t(valid_count()))
                                                                       : drifting_sample(reserve_, pool_);
    add_neighbours_of_best(pool, 3);
    return pool;
  }

  // The value indices, then a 0/1 column per power_columns_ parameter.
  void append_row(const Config& c, std::vector<double>& out) const {
    for (uint32_t v : c) out.push_back(double(v));
    for (size_t f : power_columns_) out.push_back(is_power_of_two(space().parameters()[f].values[c[f]]) ? 1.0 : 0.0);
  }

  static bool is_power_of_two(const Value& v) {
    return v.is_int() && v.as_int() > 0 && (v.as_int() & (v.as_int() - 1)) == 0;
  }
  // Integer values, at least two of them powers of two and one not.
  static bool mixes_powers_of_two(const std::vector<Value>& values) {
    size_t powers = 0;
    for (const Value& v : values) {
      if (!v.is_int() || v.as_int() <= 0) return false;
      powers += is_power_of_two(v);
    }
    return powers >= 2 && powers < values.size();
  }

  size_t initial_, trees_, pool_, cap_;
  size_t tried_ = 0;  // columns a node chooses among (split_features of columns_)
  double xi_;
  // Columns to split on: the index of each parameter with more than one
  // value, then the power-of-two columns (row positions).
  std::vector<size_t> columns_;
  std::vector<size_t> power_columns_;  // the parameters with a power-of-two column, in column order
  std::vector<Config> reserve_;
  std::vector<Config> prior_design_;  // what is left of it
};

}  // namespace

StrategyDef forest_def() {
  return {"forest",
          "random-forest surrogate with expected improvement (SMAC's model): trees split on one parameter at a time, "
          "so switches that only pay off together are found",
          {{"initial_samples", OptionKind::Int, 10, 1, 100000, {},
            "random configurations before the model is used (at most max_fevals/8 and 1/15 of the space, at least 1)"},
           {"trees", OptionKind::Int, 30, 1, 1000, {}, "regression trees, each on a bootstrap sample of the results"},
           {"pool", OptionKind::Int, 2000, 1, 1000000, {},
            "candidates ranked per step (every new configuration of a smaller space), plus the best's neighbours"},
           {"max_observations", OptionKind::Int, 200, 2, 100000, {},
            "results the forest is fitted to (over it, the best half and the most recent)"},
           {"xi", OptionKind::Float, 0.0, 0, 10, {}, "expected improvement's margin, in the targets' units"},
           {"split_features", OptionKind::Float, 0.5, 0.01, 1, {},
            "share of the columns (parameters, power-of-two columns) each node chooses its split among, drawn at "
            "random (at least one; all on flat landscapes)"},
           {"power_of_two", OptionKind::Bool, true, 0, 0, {},
            "an integer parameter whose values mix powers of two with others also gives a column: is it one"}},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> { return std::make_unique<RandomForest>(ctx); }};
}

}  // namespace ktune::strategy_detail
