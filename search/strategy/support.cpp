#include "search/strategy/support.h"

#include "ktune/error.h"

#include <algorithm>
#include <cmath>

namespace ktune::strategy_detail {

double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

uint64_t below(std::mt19937_64& rng, uint64_t n) {
  if (n <= 1) return 0;
  // Rejection keeps it exactly uniform and identical on every standard library.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t r;
  do r = rng();
  while (r >= limit);
  return r % n;
}

static const Value& option(const StrategyContext& ctx, std::string_view name) {
  auto it = ctx.options.find(name);
  if (it == ctx.options.end())
    throw Error::failed("internal: strategy option '" + std::string(name) + "' was not defaulted");
  return it->second;
}

int64_t opt_int(const StrategyContext& ctx, std::string_view name) { return option(ctx, name).as_int(); }
double opt_float(const StrategyContext& ctx, std::string_view name) { return option(ctx, name).as_float(); }
bool opt_bool(const StrategyContext& ctx, std::string_view name) { return option(ctx, name).truthy(); }
const std::string& opt_choice(const StrategyContext& ctx, std::string_view name) {
  return option(ctx, name).as_string();
}
NeighbourKind opt_neighbour(const StrategyContext& ctx, std::string_view name) {
  const std::string& kind = opt_choice(ctx, name);
  return kind == "adjacent" ? NeighbourKind::Adjacent
         : kind == "repaired" ? NeighbourKind::HammingRepaired
                              : NeighbourKind::Hamming;
}
OptionSpec neighbour_option(const std::string& default_kind) {
  return {"neighbour", OptionKind::Choice, default_kind, 0, 0, {"repaired", "hamming", "adjacent"},
          "neighbourhood: one parameter changed to any value (hamming), to an adjacent value (adjacent), or hamming "
          "plus each change the restrictions forbid made valid by the nearest value of one other parameter "
          "(repaired: x 16 -> 32 under x*y <= 1024 takes y 64 -> 32)"};
}

OptionSpec edges_option(const std::string& name, double default_edge) {
  return {name, OptionKind::Float, default_edge, 0, 1, {},
          "the chance that a random draw puts a parameter of more than two values at the first or last value of its "
          "list (either, evenly), each parameter drawn apart; uniform draws where every such corner is measured or "
          "invalid (0: uniform draws)"};
}

// ---------------------------------------------------------------- StrategyBase

StrategyBase::StrategyBase(const StrategyContext& ctx)
    : ctx_(ctx), space_(ctx.space), rng_(ctx.seed), valid_count_(ctx.space->count_valid()) {}

std::vector<Config> StrategyBase::propose(size_t max_batch) {
  max_batch = std::max<size_t>(max_batch, 1);
  std::vector<Config> out;
  // A wave made only of known configurations costs nothing but CPU; after many
  // in a row the strategy is looping, so a random new configuration breaks it.
  constexpr int kMaxEmptyWaves = 200;
  int empty_waves = 0;
  while (out.empty()) {
    if (queue_.empty()) {
      std::vector<Config> wave = next_wave(max_batch);
      if (wave.empty()) return {};
      ConfigSet in_wave;
      for (Config& c : wave)
        if (!known(c) && in_wave.insert(c).second) queue_.push_back(std::move(c));
      if (queue_.empty() && ++empty_waves >= kMaxEmptyWaves) {
        for (Config& c : sample_unknown(max_batch)) queue_.push_back(std::move(c));
        if (queue_.empty()) return {};
      }
    }
    while (!queue_.empty() && out.size() < max_batch) {
      Config c = std::move(queue_.front());
      queue_.pop_front();
      if (known(c)) continue;
      pending_.insert(c);
      out.push_back(std::move(c));
    }
  }
  return out;
}

void StrategyBase::observe(std::span<const Observation> results) {
  for (const Observation& o : results) {
    pending_.erase(o.config);
    const double s = ranking_score(o);
    auto [it, inserted] = results_.emplace(o.config, s);
    if (!inserted) continue;
    history_.emplace_back(o.config, s);
    if (s == kFailed) continue;
    ++successes_;
    if (s < best_score_) {
      best_score_ = s;
      best_ = o.config;
    }
  }
}

void StrategyBase::keep_spare(std::span<const Config> configs) {
  constexpr size_t kMaxSpare = 256;
  for (auto it = configs.rbegin(); it != configs.rend(); ++it)
    if (!known(*it)) spare_.push_front(*it);
  while (spare_.size() > kMaxSpare) spare_.pop_back();
}

std::vector<Config> StrategyBase::spare(size_t n) {
  std::erase_if(spare_, [&](const Config& c) { return known(c); });
  std::vector<Config> out;
  ConfigSet seen;
  for (const Config& c : spare_) {
    if (out.size() >= n) break;
    if (seen.insert(c).second) out.push_back(c);
  }
  return out;
}

double StrategyBase::score(const Config& c) const {
  auto it = results_.find(c);
  return it == results_.end() ? kFailed : it->second;
}

std::vector<Config> StrategyBase::sample_unknown(size_t n) {
  const uint64_t known_count = results_.size() + pending_.size();
  if (n == 0 || known_count >= valid_count_) return {};
  const uint64_t remaining = valid_count_ - known_count;
  ConfigSet exclude;
  if (indexable() && (remaining <= 4 * n || 2 * known_count > valid_count_)) return scan_unknown(n, exclude);
  std::vector<Config> out;
  for (int attempt = 0; attempt < 8 && out.size() < n; ++attempt) {
    for (Config& c : space_->sample(2 * (n - out.size()) + 8, rng_, true)) {
      if (out.size() == n) break;
      if (!known(c) && exclude.insert(c).second) out.push_back(std::move(c));
    }
  }
  if (out.size() < n && indexable())
    for (Config& c : scan_unknown(n - out.size(), exclude)) out.push_back(std::move(c));
  return out;
}

std::vector<Config> StrategyBase::sample_edges(size_t n, double edge) {
  std::vector<Config> out;
  if (n == 0 || results_.size() + pending_.size() >= valid_count_) return out;
  ConfigSet drawn;
  const std::vector<Parameter>& params = space_->parameters();
  // A draw that is known or invalid is drawn again; where the ends are all
  // measured or ruled out, 64 misses a configuration wanted is enough to
  // say so, and uniform draws fill the rest.
  for (size_t miss = 0; miss < 64 * n && out.size() < n;) {
    Config c(params.size());
    for (size_t d = 0; d < params.size(); ++d) {
      const uint64_t m = params[d].values.size();
      c[d] = static_cast<uint32_t>(m > 2 && unit(rng_) < edge ? (unit(rng_) < 0.5 ? 0 : m - 1) : below(rng_, m));
    }
    if (known(c) || drawn.count(c) || !space_->is_valid(c)) {
      ++miss;
      continue;
    }
    drawn.insert(c);
    out.push_back(std::move(c));
  }
  if (out.size() < n)
    for (Config& c : sample_unknown(n - out.size()))
      if (drawn.insert(c).second) out.push_back(std::move(c));
  return out;
}

std::vector<Config> StrategyBase::scan_unknown(size_t n, const ConfigSet& exclude) {
  std::vector<Config> all;
  for (uint64_t i = 0; i < valid_count_; ++i) {
    Config c = space_->at(i);
    if (!known(c) && !exclude.count(c)) all.push_back(std::move(c));
  }
  n = std::min(n, all.size());
  for (size_t i = 0; i < n; ++i) std::swap(all[i], all[i + below(rng_, all.size() - i)]);
  all.resize(n);
  return all;
}

std::vector<Config> StrategyBase::unknown_neighbours(const Config& c, NeighbourKind kind) {
  std::vector<Config> out;
  for (Config& n : space_->neighbours(c, kind))
    if (!known(n)) out.push_back(std::move(n));
  shuffle(out, rng_);
  return out;
}

void StrategyBase::learn_features(std::span<const Config> configs) {
  std::vector<Config> ask;
  for (const Config& c : configs)
    if (auto it = features_.find(c); it == features_.end() || it->second.pending) ask.push_back(c);
  std::sort(ask.begin(), ask.end());
  ask.erase(std::unique(ask.begin(), ask.end()), ask.end());
  if (ask.empty()) return;
  const std::vector<StaticFeatures> got = ctx_.features(ask);
  if (got.size() != ask.size())
    throw Error::failed("the feature source answered " + std::to_string(got.size()) + " of " +
                        std::to_string(ask.size()) + " configurations");
  for (size_t i = 0; i < ask.size(); ++i) features_[std::move(ask[i])] = got[i];
}

const StaticFeatures& StrategyBase::features(const Config& c) {
  if (!features_.count(c)) learn_features(std::span<const Config>(&c, 1));
  return features_.at(c);
}

std::vector<Config> StrategyBase::screened(std::vector<Config> ordered, size_t n) {
  std::vector<Config> clean, left;
  for (size_t i = 0, chunk = first_feature_ask(n); ctx_.features && i < ordered.size() && clean.size() < n;
       i += chunk, chunk = kFeatureChunk) {
    const size_t end = std::min(ordered.size(), i + chunk);
    learn_features(std::span<const Config>(ordered.data() + i, end - i));
    for (size_t k = i; k < end; ++k) {
      const StaticFeatures& f = features(ordered[k]);
      if (f.pending) left.push_back(ordered[k]);  // not known yet: a spare, compiled meanwhile
      if (!f.compiled || f.spill_bytes != 0) continue;
      (clean.size() < n ? clean : left).push_back(ordered[k]);
    }
  }
  // The model's order kept: the best of what is left comes out first.
  keep_spare(left);
  if (!clean.empty()) return clean;
  if (ordered.size() > n) ordered.resize(n);
  return ordered;
}

// Configurations that rank well on one GPU mostly rank well on another; on
// the recorded H100/H200 pairs such a design beat a random one after 10
// evaluations on all 22 (docs/benchmarks.md), where the prior's single best
// alone did not (on reduce_sum the H100's best five reach 0.87-0.96 of the
// H200's optimum).
std::vector<Config> StrategyBase::prior_design(size_t n) {
  std::vector<std::pair<double, Config>> ok;
  for (const Observation& o : ctx_.prior)
    if (o.score && space_->is_valid(o.config)) ok.emplace_back(*o.score, o.config);
  std::stable_sort(ok.begin(), ok.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  ConfigSet seen;  // a configuration listed twice keeps its better score
  std::erase_if(ok, [&](const auto& e) { return !seen.insert(e.second).second; });
  if (ok.empty()) return {};
  const size_t top = std::min(ok.size(), std::max(n, (ok.size() + 9) / 10));
  std::vector<Config> rest;
  for (size_t i = 1; i < top; ++i) rest.push_back(ok[i].second);
  shuffle(rest, rng_);
  std::vector<Config> design{ok[0].second};
  design.insert(design.end(), rest.begin(), rest.end());
  return design;
}

size_t StrategyBase::design_size(size_t requested) const {
  if (ctx_.max_fevals > 0) requested = std::min<size_t>(requested, std::max<uint64_t>(2, ctx_.max_fevals / 8));
  return std::max<size_t>(std::min<size_t>(requested, std::max<uint64_t>(2, valid_count_ / 15)), 1);
}

bool StrategyBase::whole_product() const {
  uint64_t product = 1;
  for (const Parameter& p : space_->parameters()) {
    if (p.values.empty() || product > valid_count_ / p.values.size()) return false;
    product *= p.values.size();
  }
  return product == valid_count_;
}

std::vector<Config> StrategyBase::latin_hypercube(size_t n) {
  const std::vector<Parameter>& params = space_->parameters();
  std::vector<std::vector<uint32_t>> column(params.size());
  for (size_t d = 0; d < params.size(); ++d) {
    const double values = static_cast<double>(params[d].values.size());
    for (size_t k = 0; k < n; ++k) {
      const double at = std::floor((static_cast<double>(k) + unit(rng_)) / static_cast<double>(n) * values);
      column[d].push_back(static_cast<uint32_t>(std::min(at, values - 1)));
    }
    shuffle(column[d], rng_);
  }
  std::vector<Config> out;
  ConfigSet in_design;
  for (size_t k = 0; k < n; ++k) {
    Config c(params.size());
    for (size_t d = 0; d < params.size(); ++d) c[d] = column[d][k];
    if (!known(c) && in_design.insert(c).second) out.push_back(std::move(c));
  }
  return out;
}

std::vector<Config> StrategyBase::design_wave(size_t max_batch, size_t size, std::vector<Config>& prior) {
  const size_t want = num_results() < size ? std::min(max_batch, size - num_results()) : max_batch;
  if (!design_planned_) {
    design_planned_ = true;
    // A random design of 10 on a flat space can miss the one combination
    // that wins (Kernel Tuner's pnpoly: one method at the two longest tiles
    // of eleven); spread evenly, each value is tried (docs/strategies.md,
    // "The default: portfolio").
    if (prior.empty() && num_results() < size && whole_product()) prior = latin_hypercube(size - num_results());
  }
  std::erase_if(prior, [&](const Config& c) { return known(c); });
  std::vector<Config> design = prior;
  // With features, a chunk's worth: the screen passes over what is condemned.
  const size_t random = std::max<size_t>(want, ctx_.features ? kFeatureChunk : 0);
  if (design.size() < random) {
    std::vector<Config> more = sample_unknown(random);
    design.insert(design.end(), more.begin(), more.end());
  }
  return screened(std::move(design), want);
}

std::vector<Config> StrategyBase::drifting_sample(std::vector<Config>& reserve, size_t size) {
  std::erase_if(reserve, [&](const Config& c) { return known(c); });
  constexpr size_t kRenew = 16;
  if (reserve.size() + kRenew > size) reserve.erase(reserve.begin(), reserve.begin() + std::min(kRenew, reserve.size()));
  ConfigSet have(reserve.begin(), reserve.end());
  for (Config& c : sample_unknown(size - reserve.size()))
    if (have.insert(c).second) reserve.push_back(std::move(c));
  std::vector<Config> sample = reserve;
  shuffle(sample, rng_);
  return sample;
}

void StrategyBase::add_neighbours_of_best(std::vector<Config>& pool, size_t k) {
  ConfigSet in_pool(pool.begin(), pool.end());
  std::vector<std::pair<double, const Config*>> ranked;
  for (const auto& [c, s] : history())
    if (s != kFailed) ranked.emplace_back(s, &c);
  const size_t top = std::min(k, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + top, ranked.end());
  for (size_t i = 0; i < top; ++i)
    for (Config& n : unknown_neighbours(*ranked[i].second, NeighbourKind::Hamming))
      if (in_pool.insert(n).second) pool.push_back(std::move(n));
}

// -------------------------------------------------------------------- Geometry

Geometry::Geometry(const SearchSpace& space) : space_(&space) {
  for (const Parameter& p : space.parameters()) sizes_.push_back(static_cast<uint32_t>(p.values.size()));
  // Up to this many configurations an exact nearest-valid scan is cheaper than
  // anything clever (a few microseconds per thousand points).
  constexpr uint64_t kScanLimit = uint64_t{1} << 17;
  const uint64_t n = space.count_valid();
  if (n <= kScanLimit) {
    table_.reserve(n * sizes_.size());
    for (uint64_t i = 0; i < n; ++i) {
      Config c = space.at(i);
      table_.insert(table_.end(), c.begin(), c.end());
    }
  }
}

std::vector<double> Geometry::point(const Config& c) const { return std::vector<double>(c.begin(), c.end()); }

double Geometry::distance2(const Config& c, std::span<const double> x) const {
  double d2 = 0;
  for (size_t d = 0; d < c.size(); ++d) d2 += (c[d] - x[d]) * (c[d] - x[d]);
  return d2;
}

Config Geometry::snap(std::span<const double> x, std::mt19937_64& rng) const {
  std::vector<double> box(dims());
  Config rounded(dims());
  for (size_t d = 0; d < dims(); ++d) {
    const double hi = sizes_[d] - 1.0;
    box[d] = std::isfinite(x[d]) ? std::clamp(x[d], 0.0, hi) : hi / 2;
    rounded[d] = static_cast<uint32_t>(std::lround(box[d]));
  }
  if (space_->is_valid(rounded)) return rounded;
  return table_.empty() ? snap_by_descent(box, rng) : snap_by_scan(box, rng);
}

Config Geometry::snap_by_scan(std::span<const double> x, std::mt19937_64& rng) const {
  const size_t dim = dims();
  const size_t n = dim == 0 ? 0 : table_.size() / dim;
  double best = std::numeric_limits<double>::infinity();
  size_t best_i = 0, ties = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t* c = &table_[i * dim];
    double d2 = 0;
    for (size_t d = 0; d < dim && d2 <= best; ++d) d2 += (c[d] - x[d]) * (c[d] - x[d]);
    if (d2 < best) {
      best = d2, best_i = i, ties = 1;
    } else if (d2 == best && below(rng, ++ties) == 0) {
      best_i = i;  // reservoir choice among equally near ones
    }
  }
  return Config(table_.begin() + best_i * dim, table_.begin() + (best_i + 1) * dim);
}

Config Geometry::snap_by_descent(std::span<const double> x, std::mt19937_64& rng) const {
  std::vector<Config> starts = space_->sample(64, rng, true);
  if (starts.empty()) throw Error::failed("the search space has no valid configuration");
  Config cur = starts[0];
  double cur_d = distance2(cur, x);
  for (const Config& s : starts)
    if (double d = distance2(s, x); d < cur_d) cur = s, cur_d = d;
  for (int step = 0; step < 200; ++step) {
    bool moved = false;
    for (const Config& nb : space_->neighbours(cur, NeighbourKind::Hamming))
      if (double d = distance2(nb, x); d < cur_d) cur = nb, cur_d = d, moved = true;
    if (!moved) break;
  }
  return cur;
}

}  // namespace ktune::strategy_detail
