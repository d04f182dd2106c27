// tpe: a tree-structured Parzen estimator (Bergstra et al. 2011) on value
// indices.
//
// The results heard are split into the good ones (the best `gamma` of the
// successes, at least one, at most 25) and the rest (failures included). Each
// parameter gets two distributions over its values: l from the good results,
// g from the rest, each a kernel density over value indices (numeric values
// are ordered, so a value near a good one is likely good too; strings and
// booleans are categories) plus `prior_weight` of a uniform draw. Candidates
// are drawn from l, parameter by parameter (half of them from scratch, half
// as a good result with some of its parameters redrawn, which stays valid
// where constraints leave few combinations). They are ranked by the ratio of
// two joint densities (`joint`, the default): a product of those kernels
// around each good result against one around each of the rest, so a
// candidate counts as good for being near one good result, not for sharing
// each of its values with some good result or other (a mixture of two good
// configurations is near neither), and as bad for being near the rest (a
// plateau the search has measured at length rates no better than a region
// nobody measured). With `joint: false` they are ranked by l/g parameter by
// parameter, Bergstra et al.'s independent model. Unlike a GP on the whole
// space it models only what separates the best from the rest: a parameter
// whose good value is rare in the bulk (a slow-on-average switch that every
// fast configuration sets) is found as soon as a few good results share it.
// The first configurations are random, or with a prior (the kernel measured
// on another GPU) drawn from the prior's best tenth, its best first, as
// model_rank's; with compile features the ones the compiler condemns (no
// compile, spills) are passed over.
#include <algorithm>
#include <cmath>

#include "search/strategy/model/model.h"

namespace ktune::strategy_detail {
namespace {

class ParzenEstimator final : public StrategyBase {
 public:
  explicit ParzenEstimator(const StrategyContext& ctx)
      : StrategyBase(ctx),
        initial_(static_cast<size_t>(opt_int(ctx, "initial_samples"))),
        gamma_(opt_float(ctx, "gamma")),
        candidates_(static_cast<size_t>(opt_int(ctx, "candidates"))),
        prior_weight_(opt_float(ctx, "prior_weight")),
        joint_(opt_bool(ctx, "joint")) {
    initial_ = design_size(initial_);
    for (const Parameter& p : ctx.space->parameters()) {
      sizes_.push_back(p.values.size());
      ordered_.push_back(p.type == ValueType::Int || p.type == ValueType::Float);
    }
    prior_design_ = prior_design(initial_);
    log_prior_mass_ = std::log(prior_weight_);
    for (size_t k : sizes_) log_prior_mass_ -= std::log(double(k));
  }

 private:
  using Density = std::vector<std::vector<double>>;  // per parameter, per value index

  std::vector<Config> next_wave(size_t max_batch) override {
    if (num_results() < initial_ || num_successes() == 0)  // the design: the prior's picks, then random ones
      return design_wave(max_batch, initial_, prior_design_);
    std::vector<std::pair<double, Config>> ranked;  // (score, config)
    for (const auto& [c, s] : history()) ranked.emplace_back(s, c);
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    const size_t n_good = std::clamp<size_t>(static_cast<size_t>(std::ceil(gamma_ * double(num_successes()))), 1,
                                             std::min<size_t>(25, num_successes()));
    std::vector<const Config*> good, bad;
    for (size_t i = 0; i < ranked.size(); ++i) (i < n_good ? good : bad).push_back(&ranked[i].second);
    const Density l = density(good);
    Density g;  // per parameter (joint: false)
    LogKernels lk_good, lk_bad;
    if (joint_)
      lk_good = log_kernels(good.size()), lk_bad = log_kernels(bad.size());
    else
      g = density(bad);

    // Higher is better; the batch below updates g / lk_bad as picks join the rest.
    auto value = [&](const Config& c) {
      return joint_ ? log_joint(good, lk_good, c) - log_joint(bad, lk_bad, c) : ratio(l, g, c);
    };
    ConfigSet seen;
    std::vector<std::pair<double, Config>> scored;
    const size_t tries = candidates_ * 8;
    for (size_t t = 0; t < tries && scored.size() < candidates_; ++t) {
      Config c = t % 2 == 0 ? draw(l) : redraw(*good[below(rng(), good.size())], l);
      if (known(c) || !space().is_valid(c) || !seen.insert(c).second) continue;
      const double r = value(c);
      scored.emplace_back(r, std::move(c));
    }
    if (scored.empty()) return sample_unknown(max_batch);
    std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<Config> order;
    for (auto& [r, c] : scored) order.push_back(std::move(c));
    if (max_batch == 1) return screened(std::move(order), 1);
    // A batch (a GPU run proposes 8): from a short list of the first, each
    // pick counted among the rest before the next (a constant liar), so that
    // the batch spreads instead of being 8 variations of one mode.
    std::vector<Config> shortlist = screened(std::move(order), 2 * max_batch), wave;
    wave.reserve(shortlist.size());  // `bad` points into it
    while (wave.size() < max_batch && !shortlist.empty()) {
      if (!wave.empty()) {  // the last pick is among the rest now
        if (joint_)
          lk_bad = log_kernels(bad.size());
        else
          g = density(bad);
      }
      size_t pick = 0;
      double best = value(shortlist[0]);
      for (size_t i = 1; i < shortlist.size(); ++i)
        if (const double r = value(shortlist[i]); r > best) pick = i, best = r;
      wave.push_back(std::move(shortlist[pick]));
      shortlist.erase(shortlist.begin() + static_cast<std::ptrdiff_t>(pick));
      bad.push_back(&wave.back());
    }
    keep_spare(shortlist);
    return wave;
  }

  // Per parameter, the log kernel between a result's value index x and a
  // candidate's c (at x * k + c), for a density over n results: an ordered
  // parameter's is density()'s Gaussian; a category keeps kCategoryMass on
  // its own value and spreads the rest evenly, so that a candidate differing
  // in one category from a good result is still near it.
  using LogKernels = std::vector<std::vector<double>>;
  LogKernels log_kernels(size_t n) const {
    LogKernels out(sizes_.size());
    for (size_t d = 0; d < sizes_.size(); ++d) {
      const size_t k = sizes_[d];
      out[d].assign(k * k, 0.0);
      if (k < 2) continue;
      const double width = kernel_width(d, n);
      for (size_t x = 0; x < k; ++x) {
        double* row = &out[d][x * k];
        if (width == 0) {
          const double rest = (1 - kCategoryMass) / double(k);
          for (size_t c = 0; c < k; ++c) row[c] = std::log((x == c ? kCategoryMass : 0.0) + rest);
          continue;
        }
        auto log_weight = [&](size_t c) { return -0.5 * std::pow((double(c) - double(x)) / width, 2); };
        double total = 0;
        for (size_t j = 0; j < k; ++j) total += std::exp(log_weight(j));
        for (size_t c = 0; c < k; ++c) row[c] = log_weight(c) - std::log(total);
      }
    }
    return out;
  }

  // The log of the joint density at c: a product kernel around each of
  // `configs`, plus prior_weight of the uniform distribution. Unlike the
  // per-parameter densities it tells a candidate near one result in every
  // parameter from one that mixes the values of several.
  double log_joint(const std::vector<const Config*>& configs, const LogKernels& lk, const Config& c) {
    std::vector<double>& terms = terms_;  // reused: called per candidate
    terms.clear();
    terms.push_back(log_prior_mass_);
    for (const Config* x : configs) {
      double lp = 0;
      for (size_t d = 0; d < c.size(); ++d) lp += lk[d][(*x)[d] * sizes_[d] + c[d]];
      terms.push_back(lp);
    }
    const double top = *std::max_element(terms.begin(), terms.end());
    double sum = 0;
    for (double t : terms) sum += std::exp(t - top);
    return top + std::log(sum) - std::log(prior_weight_ + double(configs.size()));
  }

  static double ratio(const Density& l, const Density& g, const Config& c) {
    double r = 0;
    for (size_t d = 0; d < c.size(); ++d) r += std::log(l[d][c[d]]) - std::log(g[d][c[d]]);
    return r;
  }

  // The width in value indices of parameter d's Gaussian kernel in a density
  // over n points (narrower as points accumulate); 0 for a category (a
  // string, a boolean, two values), which gets no spread.
  double kernel_width(size_t d, size_t n) const {
    const size_t k = sizes_[d];
    return ordered_[d] && k > 2 ? std::max(0.5, double(k) / (2.0 + double(n))) : 0.0;
  }

  // Kernel density over each parameter's value indices of `configs`, with
  // prior_weight of the uniform distribution mixed in. Ordered parameters
  // spread each point over neighbouring indices (a Gaussian of a width that
  // shrinks as points accumulate); categories do not.
  Density density(const std::vector<const Config*>& configs) const {
    Density out(sizes_.size());
    const double n = static_cast<double>(configs.size());
    for (size_t d = 0; d < sizes_.size(); ++d) {
      const size_t k = sizes_[d];
      std::vector<double>& p = out[d];
      p.assign(k, prior_weight_ / double(k));
      const double width = kernel_width(d, configs.size());
      for (const Config* c : configs) {
        const size_t at = (*c)[d];
        if (width == 0) {
          p[at] += 1;
          continue;
        }
        double total = 0;
        std::vector<double> w(k);
        for (size_t j = 0; j < k; ++j) total += w[j] = std::exp(-0.5 * std::pow((double(j) - double(at)) / width, 2));
        for (size_t j = 0; j < k; ++j) p[j] += w[j] / total;
      }
      const double sum = prior_weight_ + n;
      for (double& x : p) x /= sum;
    }
    return out;
  }

  uint32_t pick(const std::vector<double>& p) {
    double u = unit(rng());
    for (size_t j = 0; j < p.size(); ++j)
      if ((u -= p[j]) < 0) return static_cast<uint32_t>(j);
    return static_cast<uint32_t>(p.size() - 1);
  }

  Config draw(const Density& l) {
    Config c(sizes_.size());
    for (size_t d = 0; d < c.size(); ++d) c[d] = pick(l[d]);
    return c;
  }

  // A good configuration with each parameter redrawn from l with probability
  // 2/dims (about two of them): valid more often than a draw from scratch.
  Config redraw(Config c, const Density& l) {
    const double p = std::min(1.0, 2.0 / double(c.size()));
    for (size_t d = 0; d < c.size(); ++d)
      if (unit(rng()) < p) c[d] = pick(l[d]);
    return c;
  }

  size_t initial_;
  double gamma_;
  size_t candidates_;
  double prior_weight_;
  bool joint_;
  double log_prior_mass_ = 0;  // log of prior_weight x the uniform density on the grid of value indices
  std::vector<double> terms_;  // log_joint's scratch
  static constexpr double kCategoryMass = 0.8;  // of a category's kernel on its own value
  std::vector<size_t> sizes_;
  std::vector<bool> ordered_;
  std::vector<Config> prior_design_;  // what is left of it
};

}  // namespace

StrategyDef tpe_def() {
  return {"tpe",
          "tree-structured Parzen estimator: the candidates most likely among the best results rather than the rest",
          {{"initial_samples", OptionKind::Int, 10, 1, 100000, {},
            "random configurations measured first (at most max_fevals/8 and 1/15 of the space)"},
           {"gamma", OptionKind::Float, 0.15, 0.01, 0.5, {}, "share of the successes that counts as good (1 to 25 of them)"},
           {"candidates", OptionKind::Int, 64, 1, 100000, {}, "candidates drawn from the good density per proposal"},
           {"prior_weight", OptionKind::Float, 1.0, 0.01, 1000, {}, "weight of a uniform draw mixed into each density (more: more exploration)"},
           {"joint", OptionKind::Bool, true, 0, 0, {},
            "rank candidates by joint densities (a product kernel around each result: near one good result rather "
            "than sharing each value with some) instead of parameter by parameter"}},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> { return std::make_unique<ParzenEstimator>(ctx); }};
}

}  // namespace ktune::strategy_detail
