#include "search/strategy/model/gp.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace ktune::strategy_detail {

ConfigEncoder::ConfigEncoder(const SearchSpace& space, bool one_hot_strings) {
  for (const Parameter& p : space.parameters()) {
    const uint32_t n = static_cast<uint32_t>(p.values.size());
    const bool one_hot = one_hot_strings && p.type == ValueType::String && n > 2;
    columns_.push_back({n, one_hot});
    dims_ += one_hot ? n : 1;
  }
}

void ConfigEncoder::encode(const Config& c, std::vector<double>& out) const {
  // One-hot components are scaled by 1/sqrt(2) so two different categories
  // are at distance 1, like the two ends of a numeric parameter.
  constexpr double kHot = 0.7071067811865476;
  for (size_t i = 0; i < columns_.size(); ++i) {
    const Column& col = columns_[i];
    if (col.one_hot) {
      for (uint32_t v = 0; v < col.values; ++v) out.push_back(v == c[i] ? kHot : 0.0);
    } else {
      out.push_back(col.values > 1 ? c[i] / (col.values - 1.0) : 0.0);
    }
  }
}

namespace {

// z with P(Z <= z) = u for a standard normal Z, 0 < u < 1 (bisection: the
// callers need a few hundred per proposal).
double inverse_normal_cdf(double u) {
  double a = -9, b = 9;
  for (int i = 0; i < 64; ++i) {
    const double m = 0.5 * (a + b);
    (0.5 * std::erfc(-m / std::sqrt(2.0)) < u ? a : b) = m;
  }
  return 0.5 * (a + b);
}

// A flat landscape: the median of the first kFlatProbe successful scores
// within a factor kFlatRatio of their best. Those are a random design for every GP
// strategy, so this is the landscape's shape, not where the model has been.
// On the recordings the whole space's best quarter lies within 1.02-1.13 of
// the optimum on the memory-bound kernels and conv2d, 1.43-1.66 on the GEMMs.
bool looks_flat(const std::vector<std::pair<Config, double>>& history) {
  constexpr size_t kFlatProbe = 8;
  constexpr double kFlatRatio = 1.2;
  std::vector<double> first;
  for (const auto& [c, s] : history)
    if (std::isfinite(s) && first.size() < kFlatProbe) first.push_back(s);
  std::sort(first.begin(), first.end());
  if (first.size() < 2 || !(first.front() * first.back() > 0)) return false;  // one sign: a ratio means something
  // Scores are minimised: run times, or negated throughputs (GB/s, TFLOP/s).
  const double best = std::abs(first.front()), median = std::abs(first[(first.size() - 1) / 2]);
  return std::max(best, median) <= kFlatRatio * std::min(best, median);
}

}  // namespace

TrainingSet make_training_set(const std::vector<std::pair<Config, double>>& history, size_t cap) {
  std::vector<size_t> keep(history.size());
  std::iota(keep.begin(), keep.end(), 0);
  if (history.size() > cap) {
    std::vector<size_t> by_score = keep;
    std::stable_sort(by_score.begin(), by_score.end(),
                     [&](size_t a, size_t b) { return history[a].second < history[b].second; });
    std::vector<char> taken(history.size(), 0);
    keep.clear();
    for (size_t i = 0; i < cap / 2; ++i) keep.push_back(by_score[i]), taken[by_score[i]] = 1;
    for (size_t i = history.size(); i-- > 0 && keep.size() < cap;)
      if (!taken[i]) keep.push_back(i);
    std::sort(keep.begin(), keep.end());
  }
  TrainingSet t;
  t.log_scale = true;
  double worst = -std::numeric_limits<double>::infinity();
  for (size_t i : keep) {
    const double s = history[i].second;
    if (std::isfinite(s)) t.log_scale = t.log_scale && s > 0;
  }
  for (size_t i : keep) {
    t.configs.push_back(history[i].first);
    double s = history[i].second;
    if (std::isfinite(s) && t.log_scale) s = std::log(s);
    if (std::isfinite(s)) worst = std::max(worst, s);
    t.y.push_back(s);
  }
  if (!std::isfinite(worst)) worst = 0;  // nothing succeeded: a flat model
  t.best = worst;
  for (double& y : t.y) {
    if (!std::isfinite(y)) y = worst;
    t.best = std::min(t.best, y);
  }
  if (t.y.size() >= kRankedFrom && looks_flat(history)) {
    std::vector<double> sorted = t.y;
    std::sort(sorted.begin(), sorted.end());
    const double n = static_cast<double>(sorted.size());
    for (double& y : t.y) {
      const auto lo = std::lower_bound(sorted.begin(), sorted.end(), y) - sorted.begin();
      const auto hi = std::upper_bound(sorted.begin(), sorted.end(), y) - sorted.begin();
      const double rank = 0.5 * static_cast<double>(lo + hi - 1);  // the mean rank of its ties
      y = inverse_normal_cdf((rank + 0.5) / n);
    }
    t.best = *std::min_element(t.y.begin(), t.y.end());
    t.ranked = true;
  }
  return t;
}

double GaussianProcess::kernel(double r2) const {
  const double r = std::sqrt(5.0 * r2) / ls_;
  return (1.0 + r + r * r / 3.0) * std::exp(-r);
}

double GaussianProcess::factor(double ls, std::span<const double> y) {
  ls_ = ls;
  const size_t n = n_;
  for (double jitter = 1e-6; jitter <= 0.1; jitter *= 10) {
    l_.assign(n * n, 0.0);
    bool ok = true;
    for (size_t i = 0; i < n && ok; ++i) {
      for (size_t j = 0; j <= i; ++j) {
        double s = kernel(d2_[i * n + j]) + (i == j ? jitter : 0.0);
        const double* li = &l_[i * n];
        const double* lj = &l_[j * n];
        for (size_t k = 0; k < j; ++k) s -= li[k] * lj[k];
        if (i == j) {
          if (!(s > 0)) {
            ok = false;
            break;
          }
          l_[i * n + i] = std::sqrt(s);
        } else {
          l_[i * n + j] = s / lj[j];
        }
      }
    }
    if (!ok) continue;
    // alpha = K^-1 y by two triangular solves.
    alpha_.assign(y.begin(), y.end());
    for (size_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < i; ++k) alpha_[i] -= l_[i * n + k] * alpha_[k];
      alpha_[i] /= l_[i * n + i];
    }
    double fit = 0, logdet = 0;
    for (size_t i = 0; i < n; ++i) fit += alpha_[i] * alpha_[i], logdet += std::log(l_[i * n + i]);
    for (size_t i = n; i-- > 0;) {
      for (size_t k = i + 1; k < n; ++k) alpha_[i] -= l_[k * n + i] * alpha_[k];
      alpha_[i] /= l_[i * n + i];
    }
    return -0.5 * fit - logdet;
  }
  return -std::numeric_limits<double>::infinity();
}

void GaussianProcess::fit(std::vector<double> x, size_t d, std::span<const double> y,
                          std::span<const double> lengthscales) {
  n_ = y.size();
  d_ = d;
  x_ = std::move(x);
  y_mean_ = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(n_);
  double var = 0;
  for (double v : y) var += (v - y_mean_) * (v - y_mean_);
  y_scale_ = std::sqrt(var / static_cast<double>(n_));
  if (!(y_scale_ > 1e-12)) y_scale_ = 1;
  std::vector<double> ys(n_);
  for (size_t i = 0; i < n_; ++i) ys[i] = (y[i] - y_mean_) / y_scale_;
  d2_.assign(n_ * n_, 0.0);
  for (size_t i = 0; i < n_; ++i)
    for (size_t j = 0; j < i; ++j) {
      double s = 0;
      for (size_t k = 0; k < d_; ++k) s += (x_[i * d_ + k] - x_[j * d_ + k]) * (x_[i * d_ + k] - x_[j * d_ + k]);
      d2_[i * n_ + j] = d2_[j * n_ + i] = s;
    }
  double best_ls = lengthscales.empty() ? 0.3 : lengthscales[0];
  double best_lml = -std::numeric_limits<double>::infinity();
  for (double ls : lengthscales)
    if (double lml = factor(ls, ys); lml > best_lml) best_lml = lml, best_ls = ls;
  factor(best_ls, ys);
}

void GaussianProcess::predict(std::span<const double> xs, size_t m, std::vector<double>& mean,
                              std::vector<double>& sd) const {
  mean.assign(m, y_mean_);
  sd.assign(m, y_scale_);
  if (n_ == 0 || l_.empty()) return;
  std::vector<double> k(n_);
  for (size_t c = 0; c < m; ++c) {
    const double* p = &xs[c * d_];
    double mu = 0;
    for (size_t i = 0; i < n_; ++i) {
      double s = 0;
      for (size_t j = 0; j < d_; ++j) s += (p[j] - x_[i * d_ + j]) * (p[j] - x_[i * d_ + j]);
      k[i] = kernel(s);
      mu += k[i] * alpha_[i];
    }
    double vv = 0;  // |L^-1 k|^2, by forward substitution in place
    for (size_t i = 0; i < n_; ++i) {
      const double* li = &l_[i * n_];
      double s = k[i];
      for (size_t j = 0; j < i; ++j) s -= li[j] * k[j];
      k[i] = s / li[i];
      vv += k[i] * k[i];
    }
    mean[c] = y_mean_ + y_scale_ * mu;
    sd[c] = y_scale_ * std::sqrt(std::max(1.0 - vv, 1e-12));
  }
}

double expected_improvement(double mean, double sd, double best, double xi) {
  const double gain = best - mean - xi;
  if (!(sd > 0)) return std::max(gain, 0.0);
  const double z = gain / sd;
  const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
  const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
  return gain * cdf + sd * pdf;
}

}  // namespace ktune::strategy_detail
