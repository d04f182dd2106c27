#include "search/compare.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_set>

#include "search/registry.h"
#include "search/strategy/replay_clock.h"

namespace ktune {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Random search without replacement, k draws from n configurations of which
// the m best-first successful ones are ranked 1..m: calls f(i, P(the best
// drawn has rank i)) for i = 1, 2, ... (stopping once the rest is below
// 1e-300) and returns P(no success drawn). With q_i = C(n-i, k)/C(n, k), the
// probability that none of the i best was drawn, q_i = q_{i-1} (n-i+1-k)/(n-i+1)
// and P(rank i) = q_{i-1} - q_i.
template <class F>
double for_each_best_rank(uint64_t n, size_t m, uint64_t k, F&& f) {
  const uint64_t draws = std::min(k, n);
  double q_prev = 1;  // q_0
  for (size_t i = 1; i <= m; ++i) {
    const double avail = static_cast<double>(n - i + 1);
    const double q = avail > static_cast<double>(draws) ? q_prev * (avail - draws) / avail : 0.0;
    f(i, q_prev - q);
    q_prev = q;
    if (q_prev < 1e-300) break;
  }
  return q_prev;
}

// The table in minimised units, and what fractions of the optimum mean on it.
struct Landscape {
  std::vector<double> sorted;  // successful objectives, minimised, ascending
  uint64_t n = 0, failed = 0;  // n: the configurations the metrics range over
  uint64_t space_valid = 0;     // the space's valid configurations
  bool partial = false;         // the table records fewer than space_valid: n is the recorded ones
  double mean_cost = 0;
  bool ratio = true;           // fraction = optimum/best (all objectives positive)
  bool higher_is_better = false;

  double opt() const { return sorted.front(); }
  double worst() const { return sorted.back(); }
  double fraction(double best) const {  // best in minimised units; worst() before a success
    if (!std::isfinite(best)) return 0;
    if (ratio) return higher_is_better ? best / opt() : opt() / best;
    return worst() == opt() ? 1.0 : (worst() - best) / (worst() - opt());
  }
};

Landscape analyse(const SearchSpace& space, const ExhaustiveTable& table, bool hib) {
  Landscape l;
  l.higher_is_better = hib;
  l.space_valid = space.count_valid();
  uint64_t recorded = 0;
  double cost = 0;
  for (const auto& [c, e] : table) {
    if (!space.is_valid(c)) continue;
    ++recorded;
    cost += e.cost_s;
    if (e.objective && std::isfinite(*e.objective)) l.sorted.push_back(hib ? -*e.objective : *e.objective);
  }
  if (l.sorted.empty()) throw Error::failed("compare: no configuration of the table succeeded");
  // A recording of part of the space (an interrupted run) stands for that
  // part: what it never measured is not known to have failed.
  l.partial = recorded < l.space_valid;
  l.n = l.partial ? recorded : l.space_valid;
  l.failed = l.n - l.sorted.size();
  l.mean_cost = recorded == 0 ? 0 : cost / static_cast<double>(recorded);
  std::sort(l.sorted.begin(), l.sorted.end());
  for (double v : l.sorted) l.ratio = l.ratio && (hib ? -v : v) > 0;
  return l;
}

// One run seen through the metrics: best (minimised) after k = 1..K evaluations.
struct RunCurve {
  std::vector<double> best;
  std::vector<std::pair<double, double>> by_time;  // (elapsed_s, best) per evaluation
  uint64_t fevals = 0;
  double elapsed_s = 0;
  double gpu_busy_s = 0;
};

// What replaying each configuration costs on the clock: its recorded compile
// and GPU times and sampling, or the table's mean where it is not recorded.
std::vector<std::pair<Config, ReplayCost>> recorded_costs(const ExhaustiveTable& table, const Landscape& l,
                                                          std::span<const Config> configs) {
  std::vector<std::pair<Config, ReplayCost>> batch;
  for (const Config& c : configs) {
    auto it = table.find(c);
    batch.emplace_back(c, it == table.end()
                              ? ReplayCost{0, l.mean_cost, {}}
                              : ReplayCost{it->second.compile_s, it->second.cost_s - it->second.compile_s,
                                           it->second.sampling});
  }
  return batch;
}

// A finished run's curve: its best (minimised) after each evaluation and at
// each time on `clock`.
RunCurve curve_of(const RunResult& r, const ReplayClock& clock, Budget budget, bool higher_is_better) {
  RunCurve curve;
  curve.fevals = r.fevals;
  curve.elapsed_s = clock.now();
  curve.gpu_busy_s = clock.gpu_busy_s();
  double best = kInf;  // nothing succeeded yet
  for (const TraceEntry& e : r.trace) {
    if (e.best) best = higher_is_better ? -*e.best : *e.best;
    curve.best.push_back(best);
    curve.by_time.emplace_back(e.elapsed_s, best);
  }
  if (budget.max_fevals) curve.best.resize(budget.max_fevals, best);  // a run that stopped early keeps its last best
  return curve;
}

// One replayed run on the clock of CompareOptions::clock. `budget`: the
// evaluations (the eval-budget runs) or the seconds (the time-budget runs).
RunCurve replay(const SearchSpace& space, const ExhaustiveTable& table, const Landscape& l, const StrategyRun& s,
                uint64_t seed, Budget budget, const CompareOptions& o) {
  ReplayClock clock(o.clock);
  auto compile_s = [&](const Config& c) {
    auto it = table.find(c);
    return it == table.end() ? 0.0 : it->second.compile_s;
  };
  FeatureSource features;
  std::optional<std::vector<Config>> compiled_clean;  // while a proposal is made beside measurements
  double deadline = kInf;                             // on the clock, meanwhile: the run's time is up
  if (o.features)
    features = [&](std::span<const Config> configs) {
      std::vector<std::pair<Config, double>> compiles;
      for (const Config& c : configs) compiles.emplace_back(c, compile_s(c));
      const std::vector<bool> pending = clock.features(compiles, deadline);
      std::vector<StaticFeatures> out = o.features(configs);
      for (size_t i = 0; i < configs.size() && i < out.size(); ++i)
        if (pending[i]) {
          out[i] = StaticFeatures{};
          out[i].pending = true;
        }
      if (compiled_clean)
        for (size_t i = 0; i < configs.size() && i < out.size(); ++i)
          if (out[i].compiled && out[i].spill_bytes == 0) compiled_clean->push_back(configs[i]);
      return out;
    };
  StrategyContext ctx{&space, seed, s.options, features, budget.max_fevals, o.prior};
  std::unique_ptr<Strategy> strategy = make_strategy(s.name, ctx);
  auto costs = [&](std::span<const Config> configs) { return recorded_costs(table, l, configs); };
  auto outcome = [&](const Config& c, const ReplayClock::Finish& f) {
    auto it = table.find(c);
    return EvalOutcome{it == table.end() ? std::nullopt : it->second.objective, f.gpu_s};
  };
  auto evaluate = [&](std::span<const Config> configs, const CostLayer::Done& done) {
    clock.play(costs(configs),
               [&](const ReplayClock::Finish& f) { return done(f.index, outcome(configs[f.index], f)); });
  };
  CostOptions copts;
  copts.batch_size = budget.time_limit_s > 0 ? (o.time_batch_size ? o.time_batch_size : strategy_info(s.name).preferred_batch)
                                             : o.batch_size;
  copts.clock = [&clock] { return clock.now(); };
  copts.ahead = [&](std::span<const Config> next) {
    std::vector<std::pair<Config, double>> compiles;
    for (const Config& c : next) compiles.emplace_back(c, compile_s(c));
    clock.ahead(std::move(compiles));
  };
  if (o.spares)
    copts.beside = [&](const CostOptions::Beside& b) {
      const double from = clock.now();
      compiled_clean.emplace();
      deadline = from + b.time_left();
      std::vector<Config> proposal;
      try {
        proposal = b.propose();
      } catch (...) {
        compiled_clean.reset();
        deadline = kInf;
        throw;
      }
      deadline = kInf;
      std::vector<Config> candidates;
      std::unordered_set<Config, ConfigHash> seen;
      for (const Config& c : *compiled_clean)
        if (b.wanted(c) && seen.insert(c).second) candidates.push_back(c);
      for (const Config& c : b.spare)
        if (b.wanted(c) && seen.insert(c).second) candidates.push_back(c);
      compiled_clean.reset();
      clock.fill(costs(candidates), from, [&](const ReplayClock::Finish& f) {
        return b.report(candidates[f.index], outcome(candidates[f.index], f));
      });
      return proposal;
    };
  if (l.partial) {
    copts.recorded = [&table](const Config& c) { return table.count(c) > 0; };
    copts.recorded_count = l.n;
  }
  CostLayer layer(space, budget, evaluate, o.higher_is_better, copts);
  return curve_of(layer.run(*strategy), clock, budget, o.higher_is_better);
}

// The best (minimised, +inf before a success) a run had at time t.
double best_at(const RunCurve& r, double t) {
  double best = kInf;
  for (const auto& [elapsed, b] : r.by_time)
    if (elapsed <= t * (1 + 1e-12)) best = b;
  return best;
}

// The times the score over time averages over: `kTimePoints` evenly from
// the largest time budget's 1/kTimePoints to it.
constexpr size_t kTimePoints = 50;
std::vector<double> time_points(const std::vector<double>& budgets) {
  std::vector<double> out;
  const double t_max = budgets.empty() ? 0 : *std::max_element(budgets.begin(), budgets.end());
  for (size_t i = 1; i <= kTimePoints && t_max > 0; ++i) out.push_back(t_max * double(i) / double(kTimePoints));
  return out;
}

// Mean over runs of the best at each time point (the worst before a success).
std::vector<double> mean_best_at(const std::vector<RunCurve>& runs, const std::vector<double>& points, const Landscape& l) {
  std::vector<double> out;
  for (double t : points) {
    double sum = 0;
    for (const RunCurve& r : runs) {
      const double b = best_at(r, t);
      sum += std::isfinite(b) ? b : l.worst();
    }
    out.push_back(runs.empty() ? l.worst() : sum / double(runs.size()));
  }
  return out;
}

double run_p_score(const RunCurve& c, const std::vector<double>& random, const Landscape& l) {
  double sum = 0;
  size_t terms = 0;
  for (size_t k = 0; k < random.size(); ++k) {
    const double denom = random[k] - l.opt();
    if (!(denom > 1e-12 * std::max(1.0, std::abs(l.opt())))) continue;
    const double b = std::isfinite(c.best[k]) ? c.best[k] : l.worst();
    sum += (random[k] - b) / denom, ++terms;
  }
  return terms ? sum / static_cast<double>(terms) : 0.0;
}

StrategyComparison summarise(const std::string& name, const std::vector<RunCurve>& runs, const std::vector<RunCurve>& timed,
                             const Landscape& l, const std::vector<double>& random, const std::vector<double>& random_at_points,
                             const std::vector<RandomAtBudget>& random_at_budget, uint64_t k_max, const CompareOptions& o) {
  StrategyComparison s;
  s.name = name;
  s.runs = runs.size();
  for (double f : o.fractions) {
    std::vector<std::optional<double>> evals;
    for (const RunCurve& r : runs) {
      std::optional<double> first;
      for (size_t k = 0; k < r.best.size() && !first; ++k)
        if (l.fraction(r.best[k]) >= f - 1e-12) first = static_cast<double>(k + 1);
      evals.push_back(first);
    }
    s.evals_to_fraction.emplace_back(f, spread_of(std::move(evals)));
  }
  for (uint64_t b : o.budgets) {
    if (b == 0 || b > k_max) continue;
    std::vector<std::optional<double>> at;
    for (const RunCurve& r : runs) at.push_back(l.fraction(r.best[b - 1]));
    for (const RandomAtBudget& ra : random_at_budget) {
      if (ra.budget != b) continue;
      size_t reached = 0;
      for (const auto& f : at) reached += f && *f >= ra.median_fraction - kLevelTolerance ? 1 : 0;
      s.runs_at_random_median.emplace_back(b, reached);
    }
    s.fraction_at_budget.emplace_back(b, spread_of(std::move(at)));
  }
  // At time budgets, the runs made to the largest of them; without any, the
  // evaluation-budget runs at the mean recorded cost times each budget.
  std::vector<double> times = o.time_budgets;
  if (times.empty())
    for (uint64_t b : o.budgets)
      if (b <= k_max) times.push_back(l.mean_cost * static_cast<double>(b));
  const std::vector<RunCurve>& by_time = o.time_budgets.empty() ? runs : timed;
  for (double t : times) {
    std::vector<std::optional<double>> at;
    for (const RunCurve& r : by_time) at.push_back(l.fraction(best_at(r, t)));
    s.fraction_at_time.emplace_back(t, spread_of(std::move(at)));
  }
  if (!timed.empty()) {
    const std::vector<double> points = time_points(o.time_budgets);
    const std::vector<double> mine = mean_best_at(timed, points, l);
    double sum = 0;
    size_t terms = 0;
    for (size_t i = 0; i < points.size(); ++i) {
      const double denom = random_at_points[i] - l.opt();
      if (!(denom > 1e-12 * std::max(1.0, std::abs(l.opt())))) continue;
      sum += (random_at_points[i] - mine[i]) / denom, ++terms;
    }
    s.p_score_time = terms ? sum / double(terms) : 0.0;
    double busy = 0, wall = 0, evals = 0;
    for (const RunCurve& r : timed) busy += r.gpu_busy_s, wall += r.elapsed_s, evals += double(r.fevals);
    s.gpu_busy_share = wall > 0 ? busy / wall : 0;
    s.mean_timed_evals = evals / double(timed.size());
  }
  std::vector<std::optional<double>> ps;
  for (const RunCurve& r : runs) {
    s.max_evals_used = std::max(s.max_evals_used, r.fevals);
    s.mean_time_s += r.elapsed_s / static_cast<double>(runs.size());
    ps.push_back(run_p_score(r, random, l));
    s.p_score += *ps.back() / static_cast<double>(runs.size());
  }
  s.p_score_runs = spread_of(std::move(ps));
  for (uint64_t k = 0; k < k_max; ++k) {
    std::vector<std::optional<double>> at;
    for (const RunCurve& r : runs) at.push_back(l.fraction(r.best[k]));
    s.median_curve.push_back(spread_of(std::move(at)).median.value_or(0.0));
  }
  return s;
}

// No success drawn counts as fraction 0.
RandomAtBudget random_at(const Landscape& l, uint64_t k) {
  RandomAtBudget r;
  r.budget = k;
  double at_most_rank = 0;  // P(the best drawn is among the i best)
  bool have_median = false;
  for_each_best_rank(l.n, l.sorted.size(), k, [&](size_t i, double p) {
    const double f = l.fraction(l.sorted[i - 1]);
    r.mean_fraction += f * p;
    at_most_rank += p;
    if (!have_median && at_most_rank >= 0.5 - 1e-12) r.median_fraction = f, have_median = true;
  });
  return r;
}

RandomToFraction random_to(const Landscape& l, double f) {
  RandomToFraction r;
  r.fraction = f;
  for (double v : l.sorted) r.qualifying += l.fraction(v) >= f - 1e-12 ? 1 : 0;  // as a strategy's run is judged
  const uint64_t n = l.n, m = r.qualifying;  // m >= 1: the optimum itself
  r.mean = static_cast<double>(n + 1) / static_cast<double>(m + 1);
  double q = 1;  // q(k): none of the m drawn in k draws
  for (uint64_t k = 1; k <= n - m + 1; ++k) {
    q *= static_cast<double>(n - m - (k - 1)) / static_cast<double>(n - (k - 1));
    if (q <= 0.5 + 1e-12) {
      r.median = k;
      break;
    }
  }
  return r;
}

std::optional<double> quantile(const std::vector<double>& v, double q) {
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos)), hi = static_cast<size_t>(std::ceil(pos));
  if (!std::isfinite(v[hi])) {
    if (q == 0.5 && std::isfinite(v[lo])) return v[lo];  // exactly half reached: the lower median
    return std::nullopt;
  }
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

std::vector<double> random_expected_best(const std::vector<double>& sorted, uint64_t n, uint64_t max_k) {
  std::vector<double> out;
  if (sorted.empty()) return std::vector<double>(max_k, kInf);
  for (uint64_t k = 1; k <= max_k; ++k) {
    double e = 0;
    const double none = for_each_best_rank(n, sorted.size(), k, [&](size_t i, double p) { e += sorted[i - 1] * p; });
    out.push_back(e + sorted.back() * none);
  }
  return out;
}

Spread spread_of(std::vector<std::optional<double>> values) {
  Spread s;
  if (values.empty()) return s;
  std::vector<double> v;
  for (const auto& x : values) v.push_back(x ? *x : kInf);
  std::sort(v.begin(), v.end());
  for (double x : v) s.reached += std::isfinite(x) ? 1 : 0;
  s.median = quantile(v, 0.5), s.q25 = quantile(v, 0.25), s.q75 = quantile(v, 0.75);
  if (std::isfinite(v.front())) s.min = v.front();
  if (std::isfinite(v.back())) s.max = v.back();
  return s;
}

CompareResult compare(const SearchSpace& space, const ExhaustiveTable& table, const std::vector<StrategyRun>& strategies,
                      const CompareOptions& o) {
  const Landscape l = analyse(space, table, o.higher_is_better);
  const uint64_t k_max = o.max_fevals ? std::min(o.max_fevals, l.n) : l.n;
  const std::vector<double> random = random_expected_best(l.sorted, l.n, k_max);
  CompareResult result;
  result.optimum = o.higher_is_better ? -l.opt() : l.opt();
  result.valid = l.space_valid, result.recorded = l.n, result.partial = l.partial;
  result.failed = l.failed, result.max_fevals = k_max;
  result.higher_is_better = o.higher_is_better;
  for (uint64_t b : o.budgets)
    if (b > 0 && b <= k_max) result.random_exact.push_back(random_at(l, b));
  for (double f : o.fractions) result.random_exact_to_fraction.push_back(random_to(l, f));
  // Every strategy and option is checked before the first replay: a typo in
  // the last of several names would otherwise surface after the others ran.
  for (const StrategyRun& s : strategies)
    make_strategy(s.name, StrategyContext{&space, o.first_seed, s.options, {}, k_max, o.prior});
  const size_t per = std::max<size_t>(o.runs, 1);
  size_t runs_done = 0;
  auto stopped = [&] { return o.cancel.requested(); };
  // With time budgets, random search's runs to the largest one: the
  // baseline of the score over time.
  const double t_max = o.time_budgets.empty() ? 0 : *std::max_element(o.time_budgets.begin(), o.time_budgets.end());
  const size_t jobs = strategies.size() + (t_max > 0 ? 1 : 0);
  std::vector<double> random_at_points;
  if (t_max > 0) {
    std::vector<RunCurve> baseline;
    for (size_t i = 0; i < per && !stopped(); ++i)
      baseline.push_back(replay(space, table, l, StrategyRun{"random_sample", {}, ""}, o.first_seed + i, Budget{0, t_max}, o));
    if (o.progress) o.progress(runs_done += per, per * jobs, "random search over time", 0.0);
    random_at_points = mean_best_at(baseline, time_points(o.time_budgets), l);
    for (double t : o.time_budgets) {
      std::vector<std::optional<double>> at;
      for (const RunCurve& r : baseline) at.push_back(l.fraction(best_at(r, t)));
      result.random_at_time.emplace_back(t, spread_of(std::move(at)));
    }
  }
  // Run i of every strategy, then run i + 1: the time left is weighed by
  // what each strategy has cost so far, known after the first round.
  const size_t n = strategies.size();
  std::vector<std::vector<RunCurve>> runs(n), timed(n);
  std::vector<double> elapsed(n, 0.0);
  std::vector<size_t> done(n, 0), left(n, per);
  for (size_t i = 0; i < per && !stopped(); ++i)
    for (size_t k = 0; k < n && !stopped(); ++k) {
      const StrategyRun& s = strategies[k];
      const auto start = std::chrono::steady_clock::now();
      runs[k].push_back(replay(space, table, l, s, o.first_seed + i, Budget{k_max, 0}, o));
      if (t_max > 0) timed[k].push_back(replay(space, table, l, s, o.first_seed + i, Budget{0, t_max}, o));
      elapsed[k] += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      ++done[k];
      --left[k];
      if (o.progress)
        o.progress(++runs_done, per * jobs, s.label.empty() ? s.name : s.label, seconds_left(elapsed, done, left));
    }
  for (size_t k = 0; k < n; ++k)
    if (!runs[k].empty())
      result.strategies.push_back(summarise(strategies[k].label.empty() ? strategies[k].name : strategies[k].label,
                                            runs[k], timed[k], l, random, random_at_points, result.random_exact,
                                            k_max, o));
  result.interrupted = stopped();
  return result;
}

double seconds_left(const std::vector<double>& elapsed_s, const std::vector<size_t>& done,
                    const std::vector<size_t>& left) {
  double all = 0;
  size_t runs = 0;
  for (size_t k = 0; k < elapsed_s.size() && k < done.size(); ++k) {
    all += elapsed_s[k];
    runs += done[k];
  }
  double s = 0;
  for (size_t k = 0; k < left.size(); ++k) {
    const bool known = k < done.size() && done[k] > 0 && k < elapsed_s.size();
    const double per_run = known ? elapsed_s[k] / double(done[k]) : runs > 0 ? all / double(runs) : 0.0;
    s += per_run * double(left[k]);
  }
  return s;
}

}  // namespace ktune
