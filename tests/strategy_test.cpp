// Every registered strategy, driven through the CostLayer against synthetic
// landscapes: budgets, validity, determinism, finding optima, options, and
// the degenerate spaces bayes_opt must survive.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <thread>

#include "search/strategy/cost.h"
#include "search/strategy/model/gp.h"
#include "search/registry.h"
#include "search/strategy/strategy.h"
#include "tests/search_landscapes.h"

namespace ktune {
namespace {

using namespace testing_landscapes;

std::vector<std::string> all_strategies() {
  std::vector<std::string> names;
  for (const StrategyInfo& s : strategy_catalog()) names.push_back(s.name);
  return names;
}

struct Outcome {
  RunResult result;
  std::vector<Config> evaluated;  // every configuration handed to evaluate, in order
};

Outcome run(const std::string& name, const SearchSpace& space, const ExhaustiveTable& table, Budget budget,
            uint64_t seed, size_t batch = 1, FeatureSource features = {}, std::vector<Observation> prior = {},
            std::map<std::string, Value, std::less<>> options = {}) {
  Outcome out;
  StrategyContext ctx{&space, seed, std::move(options), features, budget.max_fevals, std::move(prior)};
  std::unique_ptr<Strategy> s = make_strategy(name, ctx);
  auto evaluate = [&](std::span<const Config> cs) {
    out.evaluated.insert(out.evaluated.end(), cs.begin(), cs.end());
    return replay(table)(cs);
  };
  CostOptions opts;
  opts.batch_size = batch;
  CostLayer layer(space, budget, evaluate, false, opts);
  out.result = layer.run(*s);
  return out;
}

class EveryStrategy : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryStrategy, HonoursMaxFevalsCountingFailuresAndProposesOnlyValid) {
  const SearchSpace space = bowl_space();
  const ExhaustiveTable table = table_of(space, bowl, 30);  // 30% failures
  for (size_t batch : {1, 7}) {
    for (uint64_t budget : {1, 2, 37}) {
      Outcome o = run(GetParam(), space, table, Budget{budget, 0}, 3, batch);
      EXPECT_EQ(o.result.fevals, budget) << "batch " << batch;
      EXPECT_EQ(o.evaluated.size(), budget);
      EXPECT_EQ(o.result.stop, StopReason::MaxFevals);
      std::set<Config> distinct(o.evaluated.begin(), o.evaluated.end());
      EXPECT_EQ(distinct.size(), o.evaluated.size()) << "a configuration was measured twice";
      for (const Config& c : o.evaluated) EXPECT_TRUE(space.is_valid(c));
      ASSERT_EQ(o.result.trace.size(), budget);
      EXPECT_EQ(o.result.trace.back().fevals, budget);
    }
  }
}

TEST_P(EveryStrategy, StopsExactlyAtTheTimeLimitWithBatchOne) {
  const SearchSpace space = bowl_space();
  ExhaustiveTable table = table_of(space, bowl, 10);
  for (auto& [c, e] : table) e.cost_s = 1.0;
  Outcome o = run(GetParam(), space, table, Budget{0, 10.5}, 5);
  EXPECT_EQ(o.result.stop, StopReason::TimeLimit);
  EXPECT_EQ(o.result.fevals, 11u);  // the 11th starts at 10 s < 10.5 s; none starts after
  EXPECT_DOUBLE_EQ(o.result.elapsed_s, 11.0);
}

TEST_P(EveryStrategy, IsDeterministicForASeed) {
  const SearchSpace space = bowl_space();
  const ExhaustiveTable table = table_of(space, bowl, 10);
  Outcome a = run(GetParam(), space, table, Budget{60, 0}, 42, 4);
  Outcome b = run(GetParam(), space, table, Budget{60, 0}, 42, 4);
  EXPECT_EQ(a.evaluated, b.evaluated);
  if (GetParam() != "brute_force") {
    Outcome c = run(GetParam(), space, table, Budget{60, 0}, 43, 4);
    EXPECT_NE(a.evaluated, c.evaluated) << "the seed should matter";
  }
}

TEST_P(EveryStrategy, FindsTheOptimumOfTheBowlGivenTheWholeSpaceAsBudget) {
  const SearchSpace space = bowl_space();
  const ExhaustiveTable table = table_of(space, bowl, 10);
  for (uint64_t seed : {1, 2}) {
    Outcome o = run(GetParam(), space, table, Budget{space.count_valid(), 0}, seed, 3);
    ASSERT_TRUE(o.result.best_score);
    EXPECT_DOUBLE_EQ(*o.result.best_score, 1.0) << "stop: " << stop_reason_name(o.result.stop);
  }
}

TEST_P(EveryStrategy, ExhaustsASpaceSmallerThanItsBudget) {
  const SearchSpace space({int_param("x", {1, 2, 3}), int_param("y", {0, 1})}, {});
  ExhaustiveTable table;
  for (uint64_t i = 0; i < space.count_valid(); ++i) table[space.at(i)] = {double(i + 1), 0.1};
  Outcome o = run(GetParam(), space, table, Budget{100, 0}, 1, 2);
  if (o.result.stop == StopReason::SpaceExhausted) EXPECT_EQ(o.result.fevals, 6u);
  else EXPECT_EQ(o.result.stop, StopReason::StrategyDone);  // mls without restart may stop early
  EXPECT_LE(o.result.fevals, 6u);
}

INSTANTIATE_TEST_SUITE_P(Strategies, EveryStrategy, ::testing::ValuesIn(all_strategies()),
                         [](const auto& info) { return info.param; });

// Model-based and local strategies should reach the bowl's optimum well
// before exhausting it, in most seeds (random needs ~half the space on average).
TEST(Strategies, GuidedOnesFindTheBowlOptimumWithAFractionOfTheSpace) {
  const SearchSpace space = bowl_space();
  const ExhaustiveTable table = table_of(space, bowl, 10);
  for (const char* name :
       {"mls", "greedy_ils", "bayes_opt", "model_rank", "forest", "auto", "pso", "firefly", "simulated_annealing"}) {
    int found = 0;
    for (uint64_t seed = 1; seed <= 10; ++seed) {
      Outcome o = run(name, space, table, Budget{120, 0}, seed);
      found += o.result.best_score && *o.result.best_score == 1.0;
    }
    EXPECT_GE(found, 8) << name;
  }
}

TEST(Strategies, CatalogIsCompleteAndDefaultIsInIt) {
  std::set<std::string> names;
  for (const StrategyInfo& s : strategy_catalog()) names.insert(s.name);
  for (const char* n : {"brute_force", "random_sample", "simulated_annealing", "genetic_algorithm", "pso", "diff_evo",
                        "firefly", "mls", "greedy_ils", "vnd", "bayes_opt", "model_rank", "auto", "portfolio"})
    EXPECT_TRUE(names.count(n)) << n;
  EXPECT_TRUE(names.count(default_strategy_name()));
  for (const StrategyInfo& s : strategy_catalog())
    for (const auto& [opt, text] : s.options) EXPECT_NE(text.find("default"), std::string::npos) << s.name << "." << opt;
}

TEST(Strategies, RejectsUnknownNamesOptionsAndBadValues) {
  const SearchSpace space = bowl_space();
  auto make = [&](const std::string& name, std::map<std::string, Value, std::less<>> opts) {
    return make_strategy(name, StrategyContext{&space, 1, std::move(opts), {}, 0, {}});
  };
  auto message = [&](const std::string& name, std::map<std::string, Value, std::less<>> opts) -> std::string {
    try {
      make(name, std::move(opts));
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::BadInput);
      return e.message();
    }
    ADD_FAILURE() << "no error";
    return "";
  };
  EXPECT_NE(message("nope", {}).find("random_sample"), std::string::npos);
  EXPECT_NE(message("mls", {{"neighbor", Value("hamming")}}).find("neighbour"), std::string::npos);
  EXPECT_NE(message("brute_force", {{"x", Value(1)}}).find("no options"), std::string::npos);
  EXPECT_NE(message("mls", {{"neighbour", Value("diagonal")}}).find("adjacent"), std::string::npos);
  EXPECT_NE(message("genetic_algorithm", {{"popsize", Value(1.5)}}).find("integer"), std::string::npos);
  EXPECT_NE(message("genetic_algorithm", {{"popsize", Value(-3)}}).find("popsize"), std::string::npos);
  EXPECT_NE(message("mls", {{"restart", Value(1)}}).find("true or false"), std::string::npos);
  EXPECT_NE(message("pso", {{"w", Value("fast")}}).find("number"), std::string::npos);
  EXPECT_NO_THROW(make("genetic_algorithm", {{"popsize", Value(8.0)}, {"crossover", Value("two_point")}}));
  EXPECT_NO_THROW(make("bayes_opt", {{"acquisition", Value("lcb")}, {"kappa", Value(1)}}));
}

// --- vnd ----------------------------------------------------------------------

// Driven directly, without the cost layer's cache: every configuration it
// proposes is new, and it keeps proposing (neighbourhoods, then restarts)
// until it has proposed the whole space, then says it is done.
TEST(Vnd, ProposesEachConfigurationOnceAndCoversTheSpace) {
  const SearchSpace space = bowl_space();
  const ExhaustiveTable table = table_of(space, bowl, 20);
  for (const char* wide : {"adjacent2", "hamming2", "both", "none"}) {
    for (size_t batch : {1, 5}) {
      std::unique_ptr<Strategy> s = make_strategy(
          "vnd", StrategyContext{&space, 9, {{"wide", Value(std::string(wide))}}, {}, 0, {}});
      std::set<Config> seen;
      for (int step = 0; step < 100000; ++step) {
        const std::vector<Config> proposed = s->propose(batch);
        if (proposed.empty()) break;
        ASSERT_LE(proposed.size(), batch);
        std::vector<Observation> heard;
        for (const Config& c : proposed) {
          ASSERT_TRUE(space.is_valid(c));
          ASSERT_TRUE(seen.insert(c).second) << wide << ": proposed twice";
          heard.push_back({c, table.at(c).objective});
        }
        s->observe(heard);
      }
      EXPECT_EQ(seen.size(), space.count_valid()) << wide << " batch " << batch;
    }
  }
}

// In a portfolio vnd hears what the other member found: its next proposals
// are neighbours of that best, not of its own climb.
TEST(Vnd, MovesToABetterConfigurationHeardFromElsewhere) {
  const SearchSpace space = needle_space();
  const ExhaustiveTable table = table_of(space, needle, 0);
  std::unique_ptr<Strategy> s =
      make_strategy("vnd", StrategyContext{&space, 4, {{"initial_samples", Value(int64_t{0})}}, {}, 0, {}});
  std::vector<Observation> first;
  for (const Config& c : s->propose(1)) first.push_back({c, table.at(c).objective});
  s->observe(first);
  const Config optimum{11, 3, 2, 1, 0};
  const Observation told{optimum, table.at(optimum).objective};
  s->observe(std::span<const Observation>(&told, 1));
  for (const Config& c : s->propose(4)) {
    size_t differ = 0;
    for (size_t d = 0; d < c.size(); ++d) differ += c[d] != optimum[d];
    EXPECT_EQ(differ, 1u);  // a Hamming neighbour of the optimum
  }
}

// pattern=true: after a step from the centre that improved on it, the next
// proposal is the same step again (a Hooke-Jeeves pattern move), whenever that
// configuration exists and is new. On a slope rising along x the climb then
// doubles its way up instead of trying the other neighbours in random order.
TEST(Vnd, PatternMoveRepeatsTheStepThatImproved) {
  const SearchSpace space({int_param("x", range(64)), int_param("y", range(4))}, {});
  auto f = [](const Config& c) { return 100.0 - c[0] + 0.25 * c[1]; };
  size_t checked = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    std::unique_ptr<Strategy> s = make_strategy(
        "vnd", StrategyContext{&space, seed, {{"initial_samples", Value(int64_t{0})}, {"pattern", Value(true)}}, {}, 0, {}});
    std::set<Config> seen;
    std::optional<Config> best, expected;
    for (int step = 0; step < 200; ++step) {
      const std::vector<Config> proposed = s->propose(1);
      if (proposed.empty()) break;
      ASSERT_EQ(proposed.size(), 1u);
      const Config& c = proposed[0];
      if (expected) {
        EXPECT_EQ(c, *expected) << "seed " << seed << " step " << step;
        ++checked;
      }
      expected.reset();
      seen.insert(c);
      if (best && f(c) < f(*best)) {
        Config next = c;
        bool inside = true;
        for (size_t d = 0; d < c.size(); ++d) {
          const int64_t v = 2 * int64_t{c[d]} - int64_t{(*best)[d]};
          inside = inside && v >= 0 && v < static_cast<int64_t>(space.parameters()[d].values.size());
          if (inside) next[d] = static_cast<uint32_t>(v);
        }
        if (inside && !seen.count(next)) expected = next;
      }
      if (!best || f(c) < f(*best)) best = c;
      const Observation heard{c, f(c)};
      s->observe(std::span<const Observation>(&heard, 1));
    }
  }
  EXPECT_GT(checked, 10u);  // the property was exercised, not vacuously true
}

// guide=knn: a neighbourhood is tried best predicted first, the prediction
// being the mean rank of the nearest configurations heard. Around a centre
// whose one-parameter steps are all known and all worse, a two-parameter
// step's two nearest heard configurations are its two single steps, so with
// neighbours=2 the prediction is additive and the pair of the two least bad
// single steps comes first; unguided, the neighbourhood comes in random order.
TEST(Vnd, KnnGuideTriesThePairOfTheLeastBadSingleStepsFirst) {
  const SearchSpace space({int_param("x", range(8)), int_param("y", range(8))}, {});
  auto f = [](const Config& c) {
    if (c[0] == 0 && c[1] == 0) return 1.0;  // the centre
    if (c[1] == 0) return c[0] == 3 ? 1.5 : 3.0 + c[0];
    if (c[0] == 0) return c[1] == 5 ? 1.5 : 3.0 + c[1];
    return 10.0;
  };
  std::vector<Observation> known;
  for (uint32_t v = 0; v < 8; ++v) {
    known.push_back({Config{v, 0}, f(Config{v, 0})});
    if (v > 0) known.push_back({Config{0, v}, f(Config{0, v})});
  }
  size_t unguided_elsewhere = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    for (const char* guide : {"knn", "none"}) {
      std::unique_ptr<Strategy> s = make_strategy(
          "vnd", StrategyContext{&space,
                                 seed,
                                 {{"initial_samples", Value(int64_t{0})},
                                  {"wide", Value(std::string("hamming2"))},
                                  {"guide", Value(std::string(guide))},
                                  {"neighbours", Value(int64_t{2})}},
                                 {},
                                 0,
                                 {}});
      s->observe(known);
      const std::vector<Config> first = s->propose(1);
      ASSERT_EQ(first.size(), 1u);
      EXPECT_TRUE(first[0][0] != 0 && first[0][1] != 0) << "a two-parameter step of the centre";
      if (std::string(guide) == "knn") {
        EXPECT_EQ(first[0], (Config{3, 5})) << "seed " << seed;
      } else {
        unguided_elsewhere += first[0] != Config{3, 5};
      }
    }
  }
  EXPECT_GT(unguided_elsewhere, 5u);  // 48 of 49 pairs are not it
}

// patience: a two-parameter neighbourhood that gave nothing better after
// `patience` new configurations is given up for a restart elsewhere.
TEST(Vnd, PatienceGivesUpAWideNeighbourhood) {
  const SearchSpace space({int_param("x", range(8)), int_param("y", range(8)), int_param("z", range(8))}, {});
  // The centre is the optimum; elsewhere larger values are better, so a
  // restart's climb heads away from the centre in every parameter.
  auto f = [](const Config& c) { return c == Config{0, 0, 0} ? 1.0 : 30.0 - c[0] - c[1] - c[2]; };
  std::vector<Observation> known{{Config{0, 0, 0}, 1.0}};
  for (const Config& c : space.neighbours(Config{0, 0, 0}, NeighbourKind::Hamming)) known.push_back({c, f(c)});
  auto changed = [](const Config& c) { return size_t{c[0] != 0} + size_t{c[1] != 0} + size_t{c[2] != 0}; };
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    for (int64_t patience : {int64_t{0}, int64_t{3}}) {
      std::unique_ptr<Strategy> s = make_strategy(
          "vnd", StrategyContext{&space,
                                 seed,
                                 {{"initial_samples", Value(int64_t{0})},
                                  {"wide", Value(std::string("hamming2"))},
                                  {"patience", Value(patience)}},
                                 {},
                                 0,
                                 {}});
      s->observe(known);
      size_t all_three = 0;
      for (int step = 0; step < 13; ++step) {
        const std::vector<Config> p = s->propose(1);
        ASSERT_EQ(p.size(), 1u);
        if (step < 3) {
          EXPECT_EQ(changed(p[0]), 2u) << "seed " << seed << " step " << step;
        }
        all_three += changed(p[0]) == 3;
        const Observation heard{p[0], f(p[0])};
        s->observe(std::span<const Observation>(&heard, 1));
      }
      if (patience == 0) {
        EXPECT_EQ(all_three, 0u) << "seed " << seed << ": 147 two-parameter steps, none skipped";
      } else {
        EXPECT_GT(all_three, 0u) << "seed " << seed << ": a restart climbs elsewhere";
      }
    }
  }
}

// --- bayes_opt on degenerate spaces -----------------------------------------

// The model-based strategies (and the default, which holds two of them) on
// the degenerate spaces a model must survive.
constexpr const char* kModelBased[] = {"bayes_opt", "tpe", "portfolio"};

TEST(BayesOpt, OnePointSpace) {
  const SearchSpace space({int_param("x", {7})}, {});
  ExhaustiveTable table{{Config{0}, {3.0, 1.0}}};
  for (const char* name : kModelBased) {
    Outcome o = run(name, space, table, Budget{10, 0}, 1);
    EXPECT_EQ(o.result.fevals, 1u) << name;
    EXPECT_EQ(o.result.stop, StopReason::SpaceExhausted) << name;
    EXPECT_EQ(*o.result.best_score, 3.0) << name;
  }
}

TEST(BayesOpt, TwoValuedParametersAndBudgetLargerThanTheSpace) {
  Parameter flag{"f", {Value(false), Value(true)}, ValueType::Bool, {}};
  const SearchSpace space({int_param("x", {1, 2}), str_param("m", {"u", "v"}), flag}, {});
  ExhaustiveTable table;
  for (uint64_t i = 0; i < space.count_valid(); ++i) table[space.at(i)] = {10.0 - double(i), 1.0};
  for (const char* name : kModelBased)
    for (size_t batch : {1, 3}) {
      Outcome o = run(name, space, table, Budget{50, 0}, 2, batch);
      EXPECT_EQ(o.result.stop, StopReason::SpaceExhausted) << name;
      EXPECT_EQ(o.result.fevals, 8u) << name;
      EXPECT_EQ(*o.result.best_score, 3.0) << name;
    }
}

TEST(BayesOpt, AllObservationsFailed) {
  const SearchSpace space = bowl_space();
  ExhaustiveTable table = table_of(space, bowl);
  for (auto& [c, e] : table) e.objective.reset();
  for (const char* name : kModelBased) {
    Outcome o = run(name, space, table, Budget{40, 0}, 1, 2);
    EXPECT_EQ(o.result.fevals, 40u) << name;
    EXPECT_FALSE(o.result.best_score) << name;
  }
}

TEST(BayesOpt, OnlyOneSuccessAmongFailures) {
  const SearchSpace space({int_param("x", range(8)), str_param("m", {"u", "v", "w"}), int_param("y", range(4))}, {});
  ExhaustiveTable table;
  for (uint64_t i = 0; i < space.count_valid(); ++i)
    table[space.at(i)] = {i == 61 ? std::optional<double>(2.0) : std::nullopt, 1.0};
  for (const char* name : kModelBased) {
    Outcome o = run(name, space, table, Budget{space.count_valid(), 0}, 4);
    EXPECT_EQ(*o.result.best_score, 2.0) << name;
    EXPECT_EQ(o.result.stop, StopReason::SpaceExhausted) << name;
  }
}

// The model's targets: log run times, and on a flat landscape from
// kRankedFrom observations on normal scores of the ranks (ties averaged,
// failures with the worst), order kept.
TEST(TrainingSet, LogTimesThenNormalScoresOnFlatLandscapes) {
  using strategy_detail::kRankedFrom;
  using strategy_detail::make_training_set;
  const auto phi_inv = [](double u) {  // reference by Newton's method on erfc
    double z = 0;
    for (int i = 0; i < 100; ++i)
      z -= (0.5 * std::erfc(-z / std::sqrt(2.0)) - u) / (std::exp(-z * z / 2) / std::sqrt(2 * M_PI));
    return z;
  };
  std::vector<std::pair<Config, double>> flat;
  for (uint32_t i = 0; i < kRankedFrom - 1; ++i) flat.push_back({Config{i}, 1.0 + 0.01 * i});
  const auto few = make_training_set(flat, 200);
  EXPECT_FALSE(few.ranked);
  EXPECT_DOUBLE_EQ(few.y[3], std::log(1.03));
  // Then a 300x outlier, a tie with 1.04 and a failure: 14 observations.
  flat.push_back({Config{100}, 300.0});
  flat.push_back({Config{101}, 1.04});
  flat.push_back({Config{102}, std::numeric_limits<double>::infinity()});
  const auto many = make_training_set(flat, 200);
  ASSERT_TRUE(many.ranked);
  ASSERT_EQ(many.y.size(), 14u);
  EXPECT_NEAR(many.y[0], phi_inv(0.5 / 14), 1e-9);
  EXPECT_DOUBLE_EQ(many.best, many.y[0]);
  EXPECT_NEAR(many.y[4], phi_inv(5.0 / 14), 1e-9);  // 1.04: ranks 4 and 5, shared with its tie
  EXPECT_DOUBLE_EQ(many.y[12], many.y[4]);
  EXPECT_NEAR(many.y[11], phi_inv(13.0 / 14), 1e-9);  // the outlier and the failure tie at the top
  EXPECT_DOUBLE_EQ(many.y[13], many.y[11]);
  for (size_t i = 1; i < 11; ++i) EXPECT_LT(many.y[i - 1], many.y[i]);
  // A steep landscape (the first scores' median 4x their best) keeps log times.
  std::vector<std::pair<Config, double>> steep;
  for (uint32_t i = 0; i < 20; ++i) steep.push_back({Config{i}, 1.0 + i});
  const auto gemm = make_training_set(steep, 200);
  EXPECT_FALSE(gemm.ranked);
  EXPECT_DOUBLE_EQ(gemm.y[5], std::log(6.0));
  // Negated throughputs (higher is better): flat by magnitude too.
  std::vector<std::pair<Config, double>> gbs;
  for (uint32_t i = 0; i < 20; ++i) gbs.push_back({Config{i}, -3000.0 + 10 * i});
  EXPECT_TRUE(make_training_set(gbs, 200).ranked);
}

TEST(BayesOpt, TinyBudgets) {
  const SearchSpace space = bowl_space();
  const ExhaustiveTable table = table_of(space, bowl);
  for (const char* name : kModelBased)
    for (uint64_t b : {1, 2, 3, 5}) EXPECT_EQ(run(name, space, table, Budget{b, 0}, 1).result.fevals, b) << name;
}

// --- model_rank with static features ----------------------------------------

TEST(ModelRank, NeverSpendsBudgetOnWhatFailsToCompileOrSpills) {
  const SearchSpace space = bowl_space();
  const ExhaustiveTable table = table_of(space, bowl);
  int calls = 0;
  std::set<Config> asked;
  auto features = [&](std::span<const Config> cs) {
    ++calls;
    std::vector<StaticFeatures> out;
    for (const Config& c : cs) {
      EXPECT_TRUE(asked.insert(c).second) << "features asked twice for one configuration";
      StaticFeatures& f = out.emplace_back();
      f.compiled = c[0] != 6;              // a = 6 fails to compile
      f.spill_bytes = c[2] == 3 ? 64 : 0;  // c = 8 spills
      f.registers = 32 + 8 * static_cast<int>(c[2]);
      f.occupancy = 1.0 / (1 + c[2]);
    }
    return out;
  };
  Outcome o = run("model_rank", space, table, Budget{150, 0}, 1, 1, features);
  EXPECT_EQ(o.result.fevals, 150u);
  for (const Config& c : o.evaluated) {
    EXPECT_NE(c[0], 6u);
    EXPECT_NE(c[2], 3u);
  }
  EXPECT_EQ(*o.result.best_score, 1.0);
  EXPECT_GT(calls, 0);
  // Features cost a compile each on a GPU host: asked a chunk at a time (the
  // compiles run in parallel), and only for the short list the model picks
  // from, not for every candidate of every step (the 468-point space).
  EXPECT_GT(asked.size(), static_cast<size_t>(calls) * 2);
  EXPECT_LT(asked.size(), 3u * 150);
}

// tpe and the default (all of whose members screen) pass over what the
// compile condemns too, and ask for each configuration's features once.
TEST(ScreenedStrategies, NeverSpendBudgetOnWhatFailsToCompileOrSpills) {
  const SearchSpace space = bowl_space();
  const ExhaustiveTable table = table_of(space, bowl);
  for (const char* name : {"tpe", "forest", "portfolio"})
    for (size_t batch : {1, 8}) {
      std::set<Config> asked;
      auto features = [&](std::span<const Config> cs) {
        std::vector<StaticFeatures> out;
        for (const Config& c : cs) {
          EXPECT_TRUE(asked.insert(c).second) << name << ": features asked twice for one configuration";
          StaticFeatures& f = out.emplace_back();
          f.compiled = c[0] != 6;              // a = 6 fails to compile
          f.spill_bytes = c[2] == 3 ? 64 : 0;  // c = 8 spills
        }
        return out;
      };
      Outcome o = run(name, space, table, Budget{150, 0}, 1, batch, features);
      EXPECT_EQ(o.result.fevals, 150u) << name;
      for (const Config& c : o.evaluated) {
        EXPECT_NE(c[0], 6u) << name << " batch " << batch;
        EXPECT_NE(c[2], 3u) << name << " batch " << batch;
      }
      EXPECT_EQ(*o.result.best_score, 1.0) << name << " batch " << batch;
    }
}

// An answer of `pending` (the straggler rule stopped waiting for that
// compile: search/strategy/straggler.h) is no failure to compile: the
// configuration's features are asked for again later, and only a pending
// one is asked twice.
TEST(ScreenedStrategies, APendingAnswerIsAskedForAgain) {
  const SearchSpace space = bowl_space();
  const ExhaustiveTable table = table_of(space, bowl);
  for (const char* name : {"model_rank", "portfolio"}) {
    std::map<Config, int> asked;
    auto features = [&](std::span<const Config> cs) {
      std::vector<StaticFeatures> out;
      for (const Config& c : cs) {
        StaticFeatures& f = out.emplace_back();
        f.pending = ++asked[c] == 1 && c[1] % 2 == 0;
        if (f.pending) continue;
        f.compiled = c[0] != 6;              // a = 6 fails to compile
        f.spill_bytes = c[2] == 3 ? 64 : 0;  // c = 8 spills
      }
      return out;
    };
    Outcome o = run(name, space, table, Budget{150, 0}, 1, 8, features);
    EXPECT_EQ(o.result.fevals, 150u) << name;
    EXPECT_EQ(*o.result.best_score, 1.0) << name;
    size_t again = 0;
    for (const auto& [c, times] : asked) {
      if (times < 2) continue;
      ++again;
      EXPECT_EQ(c[1] % 2, 0u) << name << ": asked twice though answered the first time";
    }
    EXPECT_GT(again, 0u) << name;
    for (const Config& c : o.evaluated)
      if (c[1] % 2 != 0) {
        EXPECT_NE(c[0], 6u) << name;
        EXPECT_NE(c[2], 3u) << name;
      }
  }
}

// The default's members propose a batch at the same time: their compile
// features go out together (one request where each asked in turn, a compile
// round each on a GPU host), always from the thread that called propose(),
// and the run is the same whichever member's thread comes first.
TEST(Portfolio, MembersAskForCompileFeaturesTogetherFromTheCallingThread) {
  const SearchSpace space = bowl_space();
  const ExhaustiveTable table = table_of(space, bowl, 10);
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<std::vector<Config>> runs;
  size_t calls = 0, largest = 0, off_thread = 0;
  for (int repeat = 0; repeat < 3; ++repeat) {
    auto features = [&](std::span<const Config> cs) {
      ++calls;
      largest = std::max(largest, cs.size());
      if (std::this_thread::get_id() != caller) ++off_thread;
      std::vector<StaticFeatures> out;
      for (const Config& c : cs) out.emplace_back().compiled = c[0] != 6;  // a = 6 fails to compile
      return out;
    };
    runs.push_back(run("portfolio", space, table, Budget{120, 0}, 7, 32, features).evaluated);
  }
  EXPECT_EQ(off_thread, 0u);
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(runs[0], runs[2]);
  // Alone, no member asks for more than kFeatureChunk at a time (batches of
  // 32: a share of about 10, a short list of 20 asked for in chunks); together they do.
  EXPECT_GT(largest, 16u) << calls << " requests";
}

// forest's nodes choose among split_features of the parameters, drawn at
// random, where the landscape is steep (the targets are log times); on a
// flat one (the targets are ranks) every node tries every parameter. With a
// design of kRankedFrom results the model only ever sees ranks on the flat
// bowl, so the share changes nothing there, where it changes the run on the
// steep bowl.
TEST(Forest, DrawsTheParametersANodeSplitsOnOnlyWhereTheLandscapeIsSteep) {
  const SearchSpace space = bowl_space();
  const auto forest_run = [&](const ExhaustiveTable& table, double share) {
    StrategyContext ctx{&space, 5, {}, {}, 120, {}};
    ctx.options["split_features"] = Value(share);
    ctx.options["initial_samples"] = Value(int64_t(strategy_detail::kRankedFrom));
    std::vector<Config> evaluated;
    auto evaluate = [&](std::span<const Config> cs) {
      evaluated.insert(evaluated.end(), cs.begin(), cs.end());
      return replay(table)(cs);
    };
    CostLayer layer(space, Budget{120, 0}, evaluate, false, CostOptions{});
    std::unique_ptr<Strategy> s = make_strategy("forest", ctx);
    const RunResult r = layer.run(*s);
    return std::make_pair(evaluated, r);
  };
  const ExhaustiveTable steep = table_of(space, bowl, 0);  // 1 to 36.5
  const ExhaustiveTable flat = table_of(
      space, [](const SearchSpace& sp, const Config& c) { return 100.0 + bowl(sp, c); }, 0);  // 101 to 136.5
  const auto [steep_all, steep_all_result] = forest_run(steep, 1.0);
  const auto [steep_drawn, steep_drawn_result] = forest_run(steep, 0.3);
  EXPECT_NE(steep_all, steep_drawn);
  EXPECT_EQ(steep_drawn_result.best_score, 1.0);
  const auto [flat_all, flat_all_result] = forest_run(flat, 1.0);
  const auto [flat_drawn, flat_drawn_result] = forest_run(flat, 0.3);
  EXPECT_EQ(flat_all, flat_drawn);
  EXPECT_EQ(flat_drawn_result.best_score, 101.0);
}

// Where every combination of values is valid, forest's and tpe's first
// design is a Latin hypercube: of its 10 points, the k-th smallest value
// index of each parameter lies in the k-th tenth of its values (u has 3
// values, t 11, b 32, m 4), which a random design almost never does.
TEST(FirstDesign, IsALatinHypercubeOnAWholeProduct) {
  const SearchSpace space = trap_space();
  const ExhaustiveTable table = table_of(space, trap, 0);
  const std::vector<double> sizes = {3, 11, 32, 4};
  for (const std::string name : {"forest", "tpe"})
    for (uint64_t seed : {1, 2, 3}) {
      const Outcome o = run(name, space, table, Budget{80, 0}, seed);  // a design of 10 (max_fevals / 8)
      ASSERT_GE(o.evaluated.size(), 10u);
      for (size_t d = 0; d < sizes.size(); ++d) {
        std::vector<double> v;
        for (const Config& c : std::span(o.evaluated).first(10)) v.push_back(c[d]);
        std::sort(v.begin(), v.end());
        for (size_t k = 0; k < 10; ++k) {
          EXPECT_GE(v[k], std::floor(double(k) * sizes[d] / 10)) << name << " seed " << seed << " parameter " << d;
          EXPECT_LE(v[k], std::ceil(double(k + 1) * sizes[d] / 10) - 1) << name << " seed " << seed << " parameter " << d;
        }
      }
    }
}

// One climb (restart: false) from a random start on the thread limit's
// corner (search_landscapes.h): with one-parameter changes it ends on the
// diagonal of 1,024 threads unless it starts at a height of 32, from where
// the width alone gets there; with repaired changes a wider block takes a
// lower height along ((16, 64) -> (32, 32)) and every climb ends at the
// corner. Repaired is the default.
TEST(Mls, ARepairedStepTakesTheCornerARestrictionHidesFromOneParameterSteps) {
  const SearchSpace space = corner_space();
  const ExhaustiveTable table = table_of(space, corner, 0);
  int by_default = 0, repaired = 0, hamming = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const auto ends_at_corner = [&](std::optional<std::string> neighbour) {
      std::map<std::string, Value, std::less<>> options{{"restart", Value(false)}};
      if (neighbour) options["neighbour"] = Value(*neighbour);
      Outcome o = run("mls", space, table, Budget{100, 0}, seed, 1, {}, {}, options);
      EXPECT_EQ(o.result.stop, StopReason::StrategyDone) << neighbour.value_or("default") << " seed " << seed;
      return o.result.best_score && *o.result.best_score == 1.0;
    };
    by_default += ends_at_corner(std::nullopt);
    repaired += ends_at_corner("repaired");
    hamming += ends_at_corner("hamming");
  }
  EXPECT_EQ(by_default, 20);
  EXPECT_EQ(repaired, 20);
  EXPECT_LE(hamming, 12);
  EXPECT_GE(hamming, 1);  // the starts at height 32
}

// random_sample with `edges: 1` draws every parameter of more than two
// values at an end of its list: on the bowl (a 0..6, b 0..5, c 4 values, s
// 3; a + b <= 9) the 16 such corners less (6, 5, ...) make 12, drawn first,
// each once; then, every corner measured, uniform draws fill the budget
// without repeating one. Without the option nothing draws the corners
// first.
TEST(RandomSample, EdgesDrawsTheEndsOfEachValueListFirst) {
  const SearchSpace space = bowl_space();
  const ExhaustiveTable table = table_of(space, bowl, 0);
  const auto corner = [&](const Config& c) {
    for (size_t d = 0; d < c.size(); ++d)
      if (c[d] != 0 && c[d] + 1 != space.parameters()[d].values.size()) return false;
    return true;
  };
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const Outcome o = run("random_sample", space, table, Budget{40, 0}, seed, 1, {}, {}, {{"edges", Value(1.0)}});
    ASSERT_EQ(o.evaluated.size(), 40u) << seed;
    EXPECT_EQ(std::set<Config>(o.evaluated.begin(), o.evaluated.end()).size(), 40u) << seed;
    for (size_t i = 0; i < 12; ++i) EXPECT_TRUE(corner(o.evaluated[i])) << "seed " << seed << " draw " << i;
    for (const Config& c : o.evaluated) EXPECT_TRUE(space.is_valid(c));
    const Outcome uniform = run("random_sample", space, table, Budget{12, 0}, seed);
    EXPECT_LT(std::count_if(uniform.evaluated.begin(), uniform.evaluated.end(), corner), 6) << seed;
  }
}

// MEMBER.OPTION gives a member of the portfolio one of its own options, for
// every member of that name, checked by the member; a name that is not a
// member is refused. forest's own default changes nothing; another value
// changes the run (on the steep bowl, where forest draws its split features).
// What the default offers to measure while it proposes: its short lists'
// compiled leftovers first, then random picks; nothing it proposed or heard.
TEST(Portfolio, SparesAreTheShortListsLeftoversThenRandomPicks) {
  const SearchSpace space = bowl_space();
  const ExhaustiveTable table = table_of(space, bowl);
  std::set<Config> asked;
  auto features = [&](std::span<const Config> cs) {
    std::vector<StaticFeatures> out;
    for (const Config& c : cs) {
      asked.insert(c);
      out.emplace_back().compiled = c[0] != 6;  // a = 6 fails to compile
    }
    return out;
  };
  StrategyContext ctx{&space, 5, {}, features, 0, {}};
  std::unique_ptr<Strategy> s = make_strategy("portfolio", ctx);
  std::set<Config> known;
  for (int round = 0; round < 4; ++round) {
    std::vector<Config> batch = s->propose(8);
    std::vector<Observation> obs;
    const std::vector<EvalOutcome> out = replay(table)(batch);
    for (size_t i = 0; i < batch.size(); ++i) {
      obs.push_back({batch[i], out[i].score});
      known.insert(batch[i]);
    }
    s->observe(obs);
  }
  const std::vector<Config> spare = s->spare(60);
  ASSERT_EQ(spare.size(), 60u);
  EXPECT_EQ(std::set<Config>(spare.begin(), spare.end()).size(), spare.size());
  for (const Config& c : spare) {
    EXPECT_TRUE(space.is_valid(c));
    EXPECT_FALSE(known.count(c)) << "a spare was measured already";
  }
  // The leftovers (compiled, clean) come first, the random picks after them.
  size_t leftovers = 0;
  while (leftovers < spare.size() && asked.count(spare[leftovers])) ++leftovers;
  EXPECT_GT(leftovers, 0u);
  for (size_t i = 0; i < leftovers; ++i) EXPECT_NE(spare[i][0], 6u) << "a leftover the compiler condemned";
  // Measured now, they are results like any other: none is offered again.
  std::vector<Observation> obs;
  for (const Config& c : spare) obs.push_back({c, 1.0});
  s->observe(obs);
  for (const Config& c : s->spare(60)) EXPECT_FALSE(std::count(spare.begin(), spare.end(), c));
}

TEST(Portfolio, GivesAMemberItsOwnOption) {
  const SearchSpace space = bowl_space();
  const ExhaustiveTable table = table_of(space, bowl, 0);
  const auto with = [&](std::map<std::string, Value, std::less<>> options) {
    return run("portfolio", space, table, Budget{100, 0}, 5, 1, {}, {}, std::move(options)).evaluated;
  };
  const std::vector<Config> plain = with({});
  EXPECT_EQ(with({{"forest.split_features", Value(0.5)}}), plain);
  EXPECT_NE(with({{"forest.split_features", Value(1.0)}}), plain);
  EXPECT_NE(with({{"vnd.restart", Value("perturb")}, {"tpe.gamma", Value(0.4)}}), plain);
  const auto message = [&](std::map<std::string, Value, std::less<>> options) -> std::string {
    try {
      with(std::move(options));
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::BadInput);
      return e.message();
    }
    ADD_FAILURE() << "no error";
    return "";
  };
  EXPECT_NE(message({{"forest.split_features", Value(7)}}).find("'split_features' must be a number in range"),
            std::string::npos);
  EXPECT_NE(message({{"forest.splits", Value(1)}}).find("strategy 'forest' has no option 'splits'"),
            std::string::npos);
  EXPECT_NE(message({{"forest.", Value(1)}}).find("strategy 'forest' has no option ''"), std::string::npos);
  EXPECT_NE(message({{"mls.restart", Value(true)}}).find("'mls.restart' names no member (its members: forest, tpe, vnd)"),
            std::string::npos);
  // Only a strategy with members takes dotted options.
  EXPECT_THROW(make_strategy("forest", StrategyContext{&space, 1, {{"tpe.gamma", Value(0.4)}}, {}, 0, {}}), Error);
}

// A batch spreads: with the picks counted among the rest (tpe), or believed
// at the forest's mean (forest), the 8 of a batch are not all one mode's
// neighbours.
TEST(BatchedModels, ABatchIsNotEightCopiesOfOneMode) {
  const SearchSpace space = bowl_space();
  const ExhaustiveTable table = table_of(space, bowl);
  for (const char* name : {"tpe", "forest"}) {
    Outcome o = run(name, space, table, Budget{40, 0}, 3, 8);
    ASSERT_EQ(o.evaluated.size(), 40u) << name;
    // After the design (10), batches of 8: each batch holds several values of
    // the first parameter, not one.
    for (size_t start = 16; start + 8 <= 40; start += 8) {
      std::set<uint32_t> firsts;
      for (size_t i = start; i < start + 8; ++i) firsts.insert(o.evaluated[i][0]);
      EXPECT_GE(firsts.size(), 2u) << name << ": batch at " << start;
    }
  }
}

// Two good results far apart, (0,0,0,0) and (3,3,3,3), and the 16 slow
// ones made of the middle values. Per parameter, 0 and 3 are each some good
// result's value, so a density per parameter rates a mixture such as
// (0,3,0,3) as high as anything: every one of its values is good. Such a mixture lies near no
// good result. The joint density (a product kernel around each result,
// tpe's default) rates a candidate by its nearness to one good result
// against its nearness to the rest, so it proposes a step from one of them.
TEST(Tpe, TheJointDensityStepsFromAGoodResultRatherThanMixingTwo) {
  std::vector<Parameter> params;
  for (const char* n : {"a", "b", "c", "d"}) params.push_back(int_param(n, range(4)));
  const SearchSpace space(params, {});
  auto distance = [](const Config& c, uint32_t centre) {
    uint32_t d = 0;
    for (uint32_t v : c) d += v > centre ? v - centre : centre - v;
    return d;
  };
  std::vector<Observation> heard = {{Config{0, 0, 0, 0}, 1.0}, {Config{3, 3, 3, 3}, 1.0}};
  for (uint64_t i = 0; i < space.count_valid(); ++i) {
    const Config c = space.at(i);
    bool middle = true;  // slow results use only the middle values
    for (uint32_t v : c) middle = middle && (v == 1 || v == 2);
    if (middle) heard.push_back({c, 3.0});
  }
  int near[2] = {0, 0};
  for (int joint = 0; joint < 2; ++joint)
    for (uint64_t seed = 1; seed <= 10; ++seed) {
      const std::map<std::string, Value, std::less<>> options = {
          {"joint", Value(joint == 1)}, {"initial_samples", Value(int64_t{1})}, {"gamma", Value(0.09)}};
      StrategyContext ctx{&space, seed, options, {}, 100, {}};
      std::unique_ptr<Strategy> s = make_strategy("tpe", ctx);
      s->observe(heard);
      const std::vector<Config> next = s->propose(1);
      ASSERT_EQ(next.size(), 1u);
      if (std::min(distance(next[0], 0), distance(next[0], 3)) <= 1) ++near[joint];
    }
  EXPECT_EQ(near[1], 10) << "joint: proposals within one step of a good result";
  EXPECT_LE(near[0], 5) << "per parameter: proposals within one step of a good result";
}

TEST(ModelRank, ABatchLargerThanTheDesignHoldsOnlyTheDesign) {
  const SearchSpace space = bowl_space();
  const ExhaustiveTable table = table_of(space, bowl);
  StrategyContext ctx{&space, 5, {}, {}, 100, {}};
  std::unique_ptr<Strategy> s = make_strategy("model_rank", ctx);
  const std::vector<Config> first = s->propose(16);  // a GPU run's batch is 8; the design here is 8
  EXPECT_EQ(first.size(), 8u);
  std::vector<Observation> heard;
  for (const Config& c : first) heard.push_back({c, table.at(c).objective});
  s->observe(heard);
  const std::vector<Config> second = s->propose(16);  // the model's: a full batch of distinct new ones
  EXPECT_EQ(second.size(), 16u);
  std::set<Config> all(first.begin(), first.end());
  all.insert(second.begin(), second.end());
  EXPECT_EQ(all.size(), 24u);
}

// --- model_rank with a prior (the same kernel measured on another GPU) -------

// The bowl as another GPU measured it: the same shape with its optimum moved
// one step in b, every 5th configuration failed there, and one configuration
// listed twice and one outside the space, as real data may have them.
std::vector<Observation> other_gpu(const SearchSpace& space) {
  std::vector<Observation> prior;
  for (uint64_t i = 0; i < space.count_valid(); ++i) {
    const Config c = space.at(i);
    const std::vector<Value> v = space.values(c);
    const double shifted = bowl(space, c) + 0.5 * (v[1].as_float() - 2) - 0.01 * static_cast<double>(i % 3);
    prior.push_back({c, i % 5 == 4 ? std::nullopt : std::optional<double>(shifted)});
  }
  prior.push_back(prior.front());
  prior.push_back({Config{6, 5, 0, 0}, 0.0});  // a + b > 9: not in this space, and "best" there
  return prior;
}

TEST(ModelRank, DrawsItsFirstDesignFromThePriorsBestTenth) {
  const SearchSpace space = bowl_space();
  const ExhaustiveTable table = table_of(space, bowl);
  const std::vector<Observation> prior = other_gpu(space);
  std::vector<std::pair<double, Config>> ok;
  for (const Observation& o : prior)
    if (o.score && space.is_valid(o.config)) ok.emplace_back(*o.score, o.config);
  std::sort(ok.begin(), ok.end());
  const size_t distinct_successes = ok.size() - 1;  // one listed twice
  const size_t tenth = (distinct_successes + 9) / 10;
  std::set<Config> best_tenth;
  for (const auto& [score, c] : ok)
    if (best_tenth.size() < tenth) best_tenth.insert(c);

  for (uint64_t seed : {1, 2, 3}) {
    Outcome o = run("model_rank", space, table, Budget{100, 0}, seed, 1, {}, prior);
    ASSERT_EQ(o.result.fevals, 100u);
    EXPECT_EQ(o.evaluated[0], ok[0].second) << "the prior's best comes first";
    for (size_t i = 0; i < 8; ++i)  // the design: initial_samples = 8
      EXPECT_TRUE(best_tenth.count(o.evaluated[i])) << "design pick " << i << " is outside the prior's best tenth";
    EXPECT_EQ(*o.result.best_score, 1.0);
    Outcome again = run("model_rank", space, table, Budget{100, 0}, seed, 1, {}, prior);
    EXPECT_EQ(again.evaluated, o.evaluated) << "not deterministic with a prior";
  }
  // The design's random part differs between seeds.
  EXPECT_NE(run("model_rank", space, table, Budget{20, 0}, 1, 1, {}, prior).evaluated,
            run("model_rank", space, table, Budget{20, 0}, 2, 1, {}, prior).evaluated);
}

TEST(ModelRank, APriorWithoutSuccessesChangesNothing) {
  const SearchSpace space = bowl_space();
  const ExhaustiveTable table = table_of(space, bowl, 20);
  std::vector<Observation> failed_everywhere = other_gpu(space);
  for (Observation& o : failed_everywhere) o.score = std::nullopt;
  const Outcome none = run("model_rank", space, table, Budget{60, 0}, 9, 3);
  EXPECT_EQ(run("model_rank", space, table, Budget{60, 0}, 9, 3, {}, failed_everywhere).evaluated, none.evaluated);
  EXPECT_EQ(run("model_rank", space, table, Budget{60, 0}, 9, 3, {}, {}).evaluated, none.evaluated);
}

TEST(ModelRank, APriorSmallerThanTheDesignIsFollowedByRandomPicks) {
  const SearchSpace space = bowl_space();
  const ExhaustiveTable table = table_of(space, bowl);
  const std::vector<Observation> two = {{space.at(100), 2.0}, {space.at(7), 1.0}};
  Outcome o = run("model_rank", space, table, Budget{30, 0}, 4, 1, {}, two);
  ASSERT_EQ(o.result.fevals, 30u);
  EXPECT_EQ(o.evaluated[0], space.at(7));
  EXPECT_EQ(o.evaluated[1], space.at(100));
  std::set<Config> distinct(o.evaluated.begin(), o.evaluated.end());
  EXPECT_EQ(distinct.size(), 30u);
}

}  // namespace
}  // namespace ktune

namespace ktune {
namespace {

using namespace testing_landscapes;

// Kernel Tuner's users name its strategies and options; ktune reads them as
// its own, says so, and refuses clearly where it has no counterpart.
TEST(KernelTunerStrategies, NamesAndOptionsResolveToKtunes) {
  ResolvedStrategy r = resolve_strategy("firefly_algorithm", {{"popsize", Value(10)}, {"maxiter", Value(50)}});
  EXPECT_EQ(r.name, "firefly");
  EXPECT_EQ(r.options.size(), 1u);
  EXPECT_EQ(r.options.at("popsize"), Value(10));
  EXPECT_EQ(r.notes.size(), 2u);  // the name, and maxiter dropped
  r = resolve_strategy("pso", {{"popsize", Value(30)}, {"w", Value(0.4)}});
  EXPECT_EQ(r.options.at("swarm_size"), Value(30));
  EXPECT_EQ(r.options.at("w"), Value(0.4));
  r = resolve_strategy("genetic_algorithm", {{"mutation_chance", Value(20)}, {"method", Value("two_point")}});
  EXPECT_DOUBLE_EQ(r.options.at("mutation_rate").as_float(), 0.05);
  EXPECT_EQ(r.options.at("crossover"), Value("two_point"));
  r = resolve_strategy("ordered_greedy_mls", {{"neighbor", Value("Hamming")}});
  EXPECT_EQ(r.name, "mls");
  EXPECT_EQ(r.options.at("neighbour"), Value("hamming"));
  EXPECT_EQ(resolve_strategy("ordered_greedy_mls", {}).options.at("neighbour"), Value("adjacent"));
  r = resolve_strategy("simulated_annealing", {{"T", Value(2.0)}});
  EXPECT_EQ(r.options.at("T_start"), Value(2.0));
  r = resolve_strategy("model_rank", {});  // ktune's own: unchanged, no notes
  EXPECT_EQ(r.name, "model_rank");
  EXPECT_TRUE(r.notes.empty());
  // Every resolved strategy is one make_strategy builds with those options.
  const SearchSpace space({int_param("x", range(8)), int_param("y", range(8))}, {});
  for (const char* kt : {"firefly_algorithm", "greedy_mls", "ordered_greedy_mls"}) {
    r = resolve_strategy(kt, {{"maxiter", Value(5)}});
    StrategyContext ctx;
    ctx.space = &space;
    ctx.options = r.options;
    EXPECT_NO_THROW(make_strategy(r.name, ctx)) << kt;
  }
}

TEST(KernelTunerStrategies, NoCounterpartNamesTheClosest) {
  for (const auto& [kt, closest] : std::vector<std::pair<std::string, std::string>>{
           {"dual_annealing", "simulated_annealing"},
           {"basinhopping", "greedy_ils"},
           {"minimize", "mls"},
           {"hybrid_vndx", "vnd"},  // neighbourhood descent screened by a kNN model, as vnd's guide
           {"adaptive_tabu_greywolf", "model_rank"}}) {
    try {
      resolve_strategy(kt, {});
      ADD_FAILURE() << kt;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::BadInput);
      EXPECT_NE(e.message().find("closest is '" + closest + "'"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(resolve_strategy("genetic_algorithm", {{"mutation_chance", Value(0.5)}}), Error);
  EXPECT_THROW(resolve_strategy("pso", {{"popsize", Value(3)}, {"swarm_size", Value(4)}}), Error);
}

}  // namespace
}  // namespace ktune
