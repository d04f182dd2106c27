// Gaussian-process regression for the model-based strategies (bayes_opt,
// model_rank), private to search/.
//
// Inputs are encoded configurations (ConfigEncoder: value index scaled to
// [0, 1] per parameter; string parameters one-hot or as an index). Targets are
// standardised inside fit(); the kernel is an isotropic Matérn 5/2 with unit
// signal variance whose lengthscale is picked from a small grid by log
// marginal likelihood. The Cholesky factorisation adds jitter (growing tenfold
// up to 0.1) until it succeeds, so duplicate or near-identical points never
// break it. Cost: O(n^3) per grid value to fit, O(n^2) per prediction; the
// callers cap n (TrainingSet) to keep proposals fast.
#pragma once

#include <span>
#include <utility>
#include <vector>

#include "search/space/space.h"

namespace ktune::strategy_detail {

class ConfigEncoder {
 public:
  ConfigEncoder(const SearchSpace& space, bool one_hot_strings);
  size_t dims() const { return dims_; }
  // Appends dims() coordinates of c to out.
  void encode(const Config& c, std::vector<double>& out) const;

 private:
  struct Column {
    uint32_t values;
    bool one_hot;
  };
  std::vector<Column> columns_;
  size_t dims_ = 0;
};

// The observations a model is fitted to, already transformed: log of the
// score when every successful score is positive (run times), failures set to
// the worst successful value (a penalty that keeps the model off them without
// wrecking its scale). On a flat landscape (the first 8 successful scores'
// median within 20% of their best) and from kRankedFrom observations on, the
// targets are instead normal scores of their ranks (ties averaged): there the
// good half differs by a few percent while a few configurations run 3x
// slower, and on log times those few set the model's scale and hide the
// differences that matter. On steep (GEMM-like) landscapes ranks hid how far
// the few best stand out: model_rank needed a median of 102-107 evaluations to
// 95% of gemm_bf16_10k's optimum instead of 82. Over `cap` observations,
// keeps the cap/2 best and fills up with the most recent.
struct TrainingSet {
  std::vector<Config> configs;
  std::vector<double> y;
  double best = 0;  // lowest y
  bool log_scale = false;
  bool ranked = false;
};
// Below it, the first model picks stay on log scores. Measured on the flat
// recordings (400 seeds): from 8 instead, reduce_sum_h100 after 10
// evaluations did not get ahead of random search and conv2d_h200 fell behind.
inline constexpr size_t kRankedFrom = 12;
TrainingSet make_training_set(const std::vector<std::pair<Config, double>>& history, size_t cap);

class GaussianProcess {
 public:
  // x: n rows of d coordinates (row-major). REQUIRES n >= 1, y.size() == n.
  void fit(std::vector<double> x, size_t d, std::span<const double> y, std::span<const double> lengthscales);
  // Posterior mean and standard deviation at each of m rows of xs, in y's units.
  void predict(std::span<const double> xs, size_t m, std::vector<double>& mean, std::vector<double>& sd) const;
  double lengthscale() const { return ls_; }

 private:
  double kernel(double r2) const;
  // Cholesky of K(ls) + noise into l_; returns the log marginal likelihood.
  double factor(double ls, std::span<const double> y_std);

  size_t n_ = 0, d_ = 0;
  std::vector<double> x_, d2_, l_, alpha_;
  double ls_ = 0.3, y_mean_ = 0, y_scale_ = 1;
};

// Expected improvement below `best` (minimisation) with exploration margin xi.
double expected_improvement(double mean, double sd, double best, double xi);

}  // namespace ktune::strategy_detail
