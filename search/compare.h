// Comparing strategies on an exhaustively measured space, by replay.
//
// Given a table with the objective (or failure) and the recorded cost of every
// valid configuration, compare() runs each strategy `runs` times (seeds
// first_seed, first_seed+1, ...) through the CostLayer against a replay
// evaluate, so the time axis is recorded tuning time, and summarises:
//
//  * fraction of optimum of a best-so-far b (optimum o): o/b for a minimised
//    objective, b/o for a maximised one (both when every successful objective
//    is positive); otherwise (w - b)/(w - o) with w the worst successful
//    objective, in minimised units. 0 before anything succeeded.
//  * evals_to_fraction[f]: evaluations until the fraction first reaches f, per
//    run; median, quartiles, min, max over runs; a run that never reaches f
//    counts as +infinity, so the median is null when more than half the runs
//    never reach it (with exactly half, the lower median is reported).
//  * fraction_at_budget[b] / fraction_at_time[t]: fraction reached within b
//    evaluations / t seconds of recorded cost (quartiles over runs).
//  * p_score (Willemsen et al., "A methodology for comparing optimization
//    algorithms for auto-tuning", FGCS 2024; Kernel Tuner's comparison): with
//    B_s(k) the mean over runs of the strategy's best-so-far after k
//    evaluations and R(k) the EXACT expected best-so-far of random search
//    without replacement after k draws (random_expected_best), in minimised
//    units, and o the optimum,
//        P = mean over k in K of (R(k) - B_s(k)) / (R(k) - o),
//    K = {1..max_fevals} minus the k where R(k) = o (random is sure to have
//    the optimum). Before any success a best-so-far counts as the worst
//    successful objective w, for both sides. P = 0: as good as random search;
//    1: at the optimum from the first evaluation; < 0: worse than random.
//    A run that stops early carries its last best forward.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "search/expr/cancel.h"
#include "search/strategy/cost.h"
#include "search/strategy/replay_clock.h"
#include "search/strategy/strategy.h"

namespace ktune {

struct TableEntry {
  std::optional<double> objective;  // nullopt: the configuration failed
  double cost_s = 0;                // recorded time to evaluate it
  double compile_s = 0;             // the part of cost_s that compiled it (what a features request costs)
  RecordedSampling sampling{};      // what racing needs (ClockOptions::racing)
};
// The recorded configurations of the space. Where it holds fewer than the
// space's valid configurations (an interrupted recording), the comparison is
// of the recorded part: strategies keep to it (CostOptions::recorded), and the
// optimum, the fractions and random search are computed over it.
using ExhaustiveTable = std::map<Config, TableEntry>;

struct StrategyRun {
  std::string name;  // make_strategy name
  std::map<std::string, Value, std::less<>> options;
  std::string label;  // shown in results; "" = name
};

struct CompareOptions {
  size_t runs = 20;
  uint64_t first_seed = 1;
  uint64_t max_fevals = 500;  // per run, also the P-score's budget range; 0 = the whole space
  bool higher_is_better = false;
  size_t batch_size = 1;
  // The batch of the time-budget runs (0: each strategy's preferred batch,
  // as `ktune tune` proposes, so that compiles run ahead as live).
  size_t time_batch_size = 0;
  std::vector<double> fractions = {0.9, 0.95, 0.98};
  std::vector<uint64_t> budgets = {10, 20, 50, 100, 200, 500};  // those above max_fevals are left out
  // Seconds of predicted wall time (ReplayClock). Each run is then made
  // again with these as its only budget, up to the largest, and random
  // search too, for the score over time. Empty: fraction_at_time is read
  // off the evaluation-budget runs at the mean recorded cost x each budget.
  std::vector<double> time_budgets;
  // The live run a replay's time stands for: compile processes, GPUs, the
  // strategy's own time.
  ClockOptions clock{1, 1, false};
  // The strategies' spares measured while they propose, on the clock, as
  // `ktune tune` measures them (CostOptions::beside).
  bool spares = true;
  // Given to the strategies. A configuration whose features are asked for is
  // compiled then, on the clock, and not again when measured.
  FeatureSource features;
  std::vector<Observation> prior;  // given to the strategies (StrategyContext::prior)
  // Told after each replayed run: (runs done, runs in all, the strategy's
  // label, the seconds left by seconds_left). The strategies take turns,
  // one run each, so that each one's cost is known from the first round.
  std::function<void(size_t, size_t, const std::string&, double)> progress;
  // Requested (Ctrl-C): stop after the run in progress; strategies with runs
  // done are summarised over those, the rest left out (CompareResult::interrupted).
  Cancel::Token cancel;
};

struct Spread {
  std::optional<double> median, q25, q75, min, max;  // nullopt where it is infinite (not reached)
  size_t reached = 0;  // runs with a finite value
};

struct StrategyComparison {
  std::string name;
  std::vector<std::pair<double, Spread>> evals_to_fraction;
  std::vector<std::pair<uint64_t, Spread>> fraction_at_budget;
  // At each budget of fraction_at_budget, the runs whose fraction reached
  // exact random search's median there: a strategy no worse than random
  // search reaches it in at least half of its runs (the sign test of
  // AggregateRow::behind_p). `runs` is how many runs there were.
  std::vector<std::pair<uint64_t, size_t>> runs_at_random_median;
  size_t runs = 0;
  std::vector<std::pair<double, Spread>> fraction_at_time;
  uint64_t max_evals_used = 0;
  double mean_time_s = 0;  // predicted wall time of an evaluation-budget run, mean over runs
  // With time budgets, over the runs to the largest: the score over time
  // (as p_score, with best-so-far at 50 evenly spaced times up to the largest
  // budget against random search's runs on the same clock), the GPU's busy
  // share of the wall time, and the evaluations made.
  std::optional<double> p_score_time;
  double gpu_busy_share = 0;
  double mean_timed_evals = 0;
  double p_score = 0;
  Spread p_score_runs;              // the per-run P-scores (their mean is p_score)
  std::vector<double> median_curve;  // median fraction of optimum after k = 1..max evaluations
};

// Random search without replacement after `budget` draws, computed exactly
// (not sampled): the fraction of the optimum it reaches, as a distribution.
// median_fraction is the largest m with P(fraction >= m) >= 1/2, the same
// statistic as a strategy's fraction_at_budget median, without seed noise.
struct RandomAtBudget {
  uint64_t budget = 0;
  double median_fraction = 0;
  double mean_fraction = 0;
};

// Random search without replacement until its best first reaches `fraction`
// of the optimum, computed exactly: with m of the n configurations that good,
// the k-th draw is the first such one with probability q(k-1) - q(k), where
// q(k) = C(n-m, k)/C(n, k). median: the smallest k with P(reached by k) >= 1/2;
// mean: (n+1)/(m+1). Not cut at max_fevals: it says what random search needs.
struct RandomToFraction {
  double fraction = 0;
  uint64_t median = 0;
  double mean = 0;
  uint64_t qualifying = 0;  // m
};

struct CompareResult {
  double optimum = 0;   // user units
  uint64_t valid = 0;     // configurations in the space
  uint64_t recorded = 0;  // of which the table holds (all of them unless partial)
  bool partial = false;   // a partial recording: optimum, fractions and random search are the recorded part's
  uint64_t failed = 0;    // of the recorded, failed
  uint64_t max_fevals = 0;
  bool higher_is_better = false;
  std::vector<RandomAtBudget> random_exact;  // at each of CompareOptions::budgets up to max_fevals
  std::vector<RandomToFraction> random_exact_to_fraction;  // for each of CompareOptions::fractions
  // With time budgets: random search's runs on the same clock, the fraction
  // they reached at each (quartiles over runs).
  std::vector<std::pair<double, Spread>> random_at_time;
  std::vector<StrategyComparison> strategies;
  bool interrupted = false;  // CompareOptions::cancel stopped it: fewer runs or strategies than asked
};

// Throws Error::bad_input for an unknown strategy or option, Error::failed
// when no configuration of the table succeeded.
CompareResult compare(const SearchSpace& space, const ExhaustiveTable& table, const std::vector<StrategyRun>& strategies,
                      const CompareOptions& options);

// Exact E[best-so-far] of random search without replacement after k = 1..max_k
// draws from n configurations of which the successful ones have the minimised
// values `sorted` (ascending); before a success the best counts as
// sorted.back(). With q_i(k) = C(n-i, k)/C(n, k), the probability that none of
// the i best was drawn: E_k = sum_j sorted[j-1] (q_{j-1} - q_j) + sorted.back() q_M.
std::vector<double> random_expected_best(const std::vector<double>& sorted, uint64_t n, uint64_t max_k);

// Order statistics of values (nullopt = +infinity), as described above.
Spread spread_of(std::vector<std::optional<double>> values);

// Strategies over many spaces (a held-out set): per strategy, the mean and the
// lowest P-score, at each budget the median over spaces of the median fraction
// of the optimum, and the (space, budget) points where its median fraction is
// ahead of, level with (within `tolerance`) or behind exact random search.
// A median over 20 runs falls behind random search's by chance; so each
// point behind carries a one-sided sign test: the probability, were the
// strategy no worse than random search there, of as few runs reaching
// random search's median as it had (P(Binomial(runs, 1/2) <= reached)).
// Strategies are matched by name; one missing from a space is left out there.
struct AggregateRow {
  std::string name;
  size_t spaces = 0;
  double mean_p_score = 0, min_p_score = 0;
  std::vector<std::pair<uint64_t, double>> median_fraction_at_budget;  // over spaces
  // With time budgets: the same at each, the mean score over time, and the
  // (space, time budget) points against random search's runs on the clock
  // (its median fraction there; "LABEL@10s" for each point behind).
  std::vector<std::pair<double, double>> median_fraction_at_time;
  std::optional<double> mean_p_score_time;
  size_t time_ahead = 0, time_level = 0, time_behind = 0;
  std::vector<std::string> time_behind_at;
  size_t ahead = 0, level = 0, behind = 0;
  std::vector<std::string> behind_at;  // "LABEL@BUDGET" for each point behind
  std::vector<double> behind_p;        // the sign test's p for each of behind_at
  size_t behind_significant = 0;       // of them, those with p < 0.05
};
struct LabelledResult {
  std::string label;
  CompareResult result;
};
// Fractions this close count as equal: a median level with random search's,
// a run that reached random search's median (runs_at_random_median).
inline constexpr double kLevelTolerance = 1e-9;
// The seconds a comparison has left: each job's runs left at that job's own
// mean seconds per run so far (strategies differ in cost by orders of
// magnitude), a job with no run done yet at the mean of every run so far.
double seconds_left(const std::vector<double>& elapsed_s, const std::vector<size_t>& done,
                    const std::vector<size_t>& left);

std::vector<AggregateRow> aggregate(const std::vector<LabelledResult>& spaces, double tolerance = kLevelTolerance);

// P(Binomial(n, 1/2) <= k): the one-sided sign test's p-value.
double sign_test_p(size_t k, size_t n);

}  // namespace ktune
