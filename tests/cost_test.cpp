// The CostLayer's rules, with scripted strategies: what counts as an
// evaluation, caching, seeding, truncation, stop reasons, objective direction.
#include <gtest/gtest.h>

#include "search/strategy/cost.h"
#include "tests/search_landscapes.h"

namespace ktune {
namespace {

using namespace testing_landscapes;

// Proposes a fixed script of batches, then nothing; records what it heard.
class Scripted : public Strategy {
 public:
  explicit Scripted(std::vector<std::vector<Config>> script) : script_(std::move(script)) {}
  std::vector<Config> propose(size_t) override {
    if (next_ >= script_.size()) return {};
    return script_[next_++];
  }
  void observe(std::span<const Observation> r) override { heard.insert(heard.end(), r.begin(), r.end()); }
  std::vector<Observation> heard;

 private:
  std::vector<std::vector<Config>> script_;
  size_t next_ = 0;
};

// Always proposes the same configuration.
class Stuck : public Strategy {
 public:
  std::vector<Config> propose(size_t) override { return {Config{0, 0}}; }
  void observe(std::span<const Observation>) override {}
};

SearchSpace small_space() { return SearchSpace({int_param("x", range(4)), int_param("y", range(3))}, {}); }

struct Counting {
  int calls = 0;
  std::vector<Config> seen;
  CostLayer::Evaluate fn(double cost = 1.0) {
    return [this, cost](std::span<const Config> cs) {
      ++calls;
      seen.insert(seen.end(), cs.begin(), cs.end());
      std::vector<EvalOutcome> out;
      for (const Config& c : cs)
        out.push_back({c[0] == 3 ? std::nullopt : std::optional<double>(10.0 + c[0] + 0.1 * c[1]), cost});
      return out;
    };
  }
};

TEST(CostLayer, RepeatsAreFreeAndFailuresCount) {
  const SearchSpace space = small_space();
  Counting eval;
  CostLayer layer(space, Budget{}, eval.fn(), false);
  Scripted s({{{1, 1}, {3, 0}}, {{1, 1}}, {{1, 1}, {1, 1}, {2, 2}}});
  RunResult r = layer.run(s);
  EXPECT_EQ(r.fevals, 3u);  // (1,1), failed (3,0), (2,2)
  EXPECT_EQ(eval.seen.size(), 3u);
  EXPECT_EQ(r.cache_hits, 3u);  // one repeat in the 2nd batch, two in the 3rd
  EXPECT_EQ(r.stop, StopReason::StrategyDone);
  ASSERT_EQ(s.heard.size(), 6u);  // every proposed one, in order
  EXPECT_FALSE(s.heard[1].score);
  EXPECT_DOUBLE_EQ(*s.heard[2].score, 11.1);
  EXPECT_DOUBLE_EQ(*r.best_score, 11.1);
  EXPECT_DOUBLE_EQ(r.elapsed_s, 3.0);
}

// A cancel ends the batch after the evaluation in flight, and the run with
// what finished; a Cancelled thrown by the evaluator ends it the same way.
TEST(CostLayer, ACancelStopsAfterTheEvaluationInFlight) {
  const SearchSpace space = small_space();
  Cancel cancel;
  CostOptions o;
  o.cancel = cancel.token();
  int measured = 0;
  CostLayer layer(space, Budget{}, CostLayer::EvaluateEach([&](std::span<const Config> cs, const CostLayer::Done& done) {
                    for (size_t i = 0; i < cs.size(); ++i) {
                      if (++measured == 4) cancel.request();
                      if (!done(i, {1.0, 1.0})) return;
                    }
                  }),
                  false, o);
  Scripted s({{{0, 0}, {0, 1}, {0, 2}}, {{1, 0}, {1, 1}, {1, 2}}, {{2, 0}}});
  RunResult r = layer.run(s);
  EXPECT_EQ(r.stop, StopReason::Interrupted);
  EXPECT_EQ(r.fevals, 4u);
  EXPECT_EQ(r.trace.size(), 4u);
  EXPECT_STREQ(stop_reason_name(r.stop), "interrupted");

  Cancel thrown;
  CostOptions t;
  t.cancel = thrown.token();
  CostLayer throwing(space, Budget{}, CostLayer::EvaluateEach([&](std::span<const Config>, const CostLayer::Done& done) {
                       done(0, {1.0, 1.0});
                       thrown.request();
                       throw Cancelled{};
                     }),
                     false, t);
  Scripted s2({{{0, 0}, {0, 1}}, {{1, 0}}});
  RunResult r2 = throwing.run(s2);
  EXPECT_EQ(r2.stop, StopReason::Interrupted);
  EXPECT_EQ(r2.fevals, 1u);
}

TEST(CostLayer, TruncatesABatchToTheEvaluationsLeft) {
  const SearchSpace space = small_space();
  Counting eval;
  CostLayer layer(space, Budget{5, 0}, eval.fn(), false);
  Scripted s({{{0, 0}, {0, 1}, {0, 2}}, {{0, 0}, {1, 0}, {1, 1}, {1, 2}, {2, 0}}});
  RunResult r = layer.run(s);
  EXPECT_EQ(r.fevals, 5u);
  EXPECT_EQ(r.stop, StopReason::MaxFevals);
  EXPECT_EQ(eval.seen.back(), (Config{1, 1}));
  ASSERT_EQ(s.heard.size(), 6u);  // 3 + the cached one + the two measured; the truncated are not observed
}

// Known results (a resume, another strategy's run on the database) are
// answered when proposed, free of time, and count as evaluations, as Kernel
// Tuner counts a cache hit: a run's budget is what its strategy visits.
TEST(CostLayer, SeededResultsAreReusedWhenProposedAndCount) {
  const SearchSpace space = small_space();
  Counting eval;
  CostLayer layer(space, Budget{3, 0}, eval.fn(), false);
  layer.seed({2, 2}, {5.0, 100.0});
  layer.seed({1, 2}, {4.0, 100.0});  // never proposed: neither counted nor heard
  layer.seed({9, 9}, {1.0, 1.0});    // not in this space: ignored
  Scripted s({{{0, 0}, {2, 2}}, {{0, 1}, {1, 0}}});
  RunResult r = layer.run(s);
  ASSERT_EQ(s.heard.size(), 3u);  // (0,0), the reused (2,2), (0,1): (1,0) is past the budget
  EXPECT_EQ(s.heard[1].config, (Config{2, 2}));
  EXPECT_DOUBLE_EQ(*s.heard[1].score, 5.0);
  ASSERT_EQ(r.trace.size(), 3u);  // the reused one is known first, before its batch is measured
  EXPECT_TRUE(r.trace[0].seeded);
  EXPECT_EQ(r.trace[0].config, (Config{2, 2}));
  EXPECT_FALSE(r.trace[1].seeded);
  EXPECT_EQ(r.fevals, 3u);
  EXPECT_EQ(eval.seen.size(), 2u);
  EXPECT_DOUBLE_EQ(*r.best_score, 5.0);
  EXPECT_DOUBLE_EQ(r.elapsed_s, 2.0);  // the reused result's cost is not spent again
  EXPECT_EQ(r.stop, StopReason::MaxFevals);
}

// A second strategy on a database another run filled gets its whole budget.
TEST(CostLayer, ASecondRunOnKnownResultsStillSpendsItsBudget) {
  const SearchSpace space = small_space();
  Counting eval;
  CostLayer layer(space, Budget{4, 0}, eval.fn(), false);
  for (uint32_t x = 0; x < 2; ++x)
    for (uint32_t y = 0; y < 3; ++y) layer.seed({x, y}, {1.0 + x + y, 1.0});
  Scripted s({{{2, 0}, {2, 1}}, {{0, 0}, {2, 2}}});
  RunResult r = layer.run(s);
  EXPECT_EQ(r.fevals, 4u);
  EXPECT_EQ(eval.seen.size(), 3u);  // (2,0), (2,1), (2,2); (0,0) reused
}

// A partial recording: what it does not hold is answered as failed, free and
// uncounted; the space is exhausted when the recorded part is.
TEST(CostLayer, OutsideARecordingNothingIsCountedOrSpent) {
  const SearchSpace space = small_space();
  Counting eval;
  CostOptions o;
  o.recorded = [](const Config& c) { return c[0] <= 1; };
  o.recorded_count = 6;
  CostLayer layer(space, Budget{}, eval.fn(), false, o);
  Scripted s({{{0, 0}, {2, 0}, {0, 1}}, {{2, 0}, {3, 1}}, {{0, 2}, {1, 0}, {1, 1}, {1, 2}}, {{2, 2}}});
  RunResult r = layer.run(s);
  EXPECT_EQ(r.fevals, 6u);
  EXPECT_EQ(eval.seen.size(), 6u);
  EXPECT_EQ(r.not_recorded, 2u);  // (2,0) once, (3,1)
  EXPECT_EQ(r.trace.size(), 6u);
  EXPECT_DOUBLE_EQ(r.elapsed_s, 6.0);
  EXPECT_EQ(r.stop, StopReason::SpaceExhausted);  // before the last proposal
  ASSERT_GE(s.heard.size(), 2u);
  EXPECT_EQ(s.heard[1].config, (Config{2, 0}));
  EXPECT_FALSE(s.heard[1].score);
}

TEST(CostLayer, HigherIsBetterIsNegatedForTheStrategyOnly) {
  const SearchSpace space = small_space();
  Counting eval;
  CostLayer layer(space, Budget{}, eval.fn(), true);
  Scripted s({{{0, 0}, {2, 1}}});
  RunResult r = layer.run(s);
  EXPECT_DOUBLE_EQ(*s.heard[1].score, -12.1);
  EXPECT_DOUBLE_EQ(*r.best_score, 12.1);
  EXPECT_DOUBLE_EQ(*r.trace[1].best, 12.1);
  EXPECT_EQ(r.best_config, (Config{2, 1}));
}

TEST(CostLayer, StopsAStrategyThatLoopsOnTheCache) {
  const SearchSpace space = small_space();
  Counting eval;
  CostOptions o;
  o.max_stale_proposals = 50;
  CostLayer layer(space, Budget{}, eval.fn(), false, o);
  Stuck s;
  RunResult r = layer.run(s);
  EXPECT_EQ(r.stop, StopReason::NoProgress);
  EXPECT_EQ(r.fevals, 1u);
  EXPECT_EQ(r.proposals, 51u);
}

TEST(CostLayer, StopsWhenTheSpaceIsExhausted) {
  const SearchSpace space = small_space();
  Counting eval;
  std::vector<std::vector<Config>> script;
  for (uint32_t x = 0; x < 4; ++x)
    for (uint32_t y = 0; y < 3; ++y) script.push_back({{x, y}});
  script.push_back({{0, 0}});
  CostLayer layer(space, Budget{100, 0}, eval.fn(), false);
  Scripted s(script);
  RunResult r = layer.run(s);
  EXPECT_EQ(r.stop, StopReason::SpaceExhausted);
  EXPECT_EQ(r.fevals, 12u);
  EXPECT_EQ(r.proposals, 12u);
}

TEST(CostLayer, TimeLimitStopsInsideABatch) {
  const SearchSpace space = small_space();
  Counting eval;
  CostOptions o;
  o.batch_size = 4;
  CostLayer layer(space, Budget{0, 2.5}, eval.fn(1.0), false, o);
  Scripted s({{{0, 0}, {0, 1}}, {{0, 2}, {1, 0}}, {{1, 1}}});
  RunResult r = layer.run(s);
  EXPECT_EQ(r.stop, StopReason::TimeLimit);
  // 2 s used before the second batch; its first evaluation reaches 3 s and is
  // the last: {1, 0} is never measured.
  EXPECT_EQ(r.fevals, 3u);
  EXPECT_EQ(eval.seen, (std::vector<Config>{{0, 0}, {0, 1}, {0, 2}}));
  EXPECT_EQ(s.heard.size(), 3u);
}

// An evaluator that reports each configuration as it finishes, out of order
// (a GPU run's compiles finish so), and starts no more once told to stop.
TEST(CostLayer, AStreamingEvaluatorStopsWhenTheTimeIsSpent) {
  const SearchSpace space = small_space();
  std::vector<Config> measured;
  CostLayer::EvaluateEach each = [&](std::span<const Config> cs, const CostLayer::Done& done) {
    for (size_t k = 0; k < cs.size(); ++k) {
      const size_t i = cs.size() - 1 - k;  // last first
      measured.push_back(cs[i]);
      if (!done(i, {10.0 + cs[i][0], 1.0})) return;
    }
  };
  CostOptions o;
  o.batch_size = 4;
  CostLayer layer(space, Budget{0, 2.0}, each, false, o);
  Scripted s({{{0, 0}, {0, 1}, {0, 2}, {1, 0}}, {{1, 1}}});
  RunResult r = layer.run(s);
  EXPECT_EQ(r.stop, StopReason::TimeLimit);
  EXPECT_EQ(r.fevals, 2u);
  EXPECT_EQ(measured, (std::vector<Config>{{1, 0}, {0, 2}}));
  ASSERT_EQ(r.trace.size(), 2u);
  EXPECT_EQ(r.trace[0].config, (Config{1, 0}));

  CostLayer::EvaluateEach twice = [](std::span<const Config> cs, const CostLayer::Done& done) {
    done(0, {1.0, 0.0});
    done(0, {1.0, 0.0});
    (void)cs;
  };
  CostLayer bad(space, Budget{}, twice, false, o);
  Scripted s2({{{0, 0}, {0, 1}}});
  EXPECT_THROW(bad.run(s2), Error);
}

// Wall time: each evaluation takes 0.6 s on the injected clock.
TEST(CostLayer, WallClockBudgetUsesTheInjectedClock) {
  const SearchSpace space = small_space();
  double now = 100;
  CostOptions o;
  o.clock = [&] { return now; };
  CostLayer::Evaluate slow = [&](std::span<const Config> cs) {
    now += 0.6 * static_cast<double>(cs.size());
    return std::vector<EvalOutcome>(cs.size(), EvalOutcome{1.0, 0.0});
  };
  CostLayer layer(space, Budget{0, 2.0}, slow, false, o);
  std::vector<std::vector<Config>> script;
  for (uint32_t x = 0; x < 4; ++x)
    for (uint32_t y = 0; y < 2; ++y) script.push_back({{x, y}});
  Scripted s(script);
  RunResult r = layer.run(s);
  EXPECT_EQ(r.stop, StopReason::TimeLimit);
  EXPECT_EQ(r.fevals, 4u);  // at 0.6, 1.2, 1.8 s there is time left; the 4th reaches 2.4 s
  EXPECT_NEAR(r.elapsed_s, 2.4, 1e-9);
}

// A proposal that takes the rest of the time (model_rank compiling features
// on a GPU host) leaves its batch unmeasured.
TEST(CostLayer, AProposalThatSpendsTheTimeStartsNothing) {
  const SearchSpace space = small_space();
  double now = 0;
  CostOptions o;
  o.clock = [&] { return now; };
  o.batch_size = 2;
  class SlowProposer : public Strategy {
   public:
    explicit SlowProposer(double& now) : now_(&now) {}
    std::vector<Config> propose(size_t) override {
      *now_ += 1.5;
      return {Config{next_++, 0}, Config{next_++, 1}};
    }
    void observe(std::span<const Observation>) override {}

   private:
    double* now_;
    uint32_t next_ = 0;
  } s(now);
  Counting eval;
  CostLayer layer(space, Budget{0, 2.0}, eval.fn(0.0), false, o);
  RunResult r = layer.run(s);
  EXPECT_EQ(r.stop, StopReason::TimeLimit);
  EXPECT_EQ(r.fevals, 2u);  // the first batch (proposed by 1.5 s); the second was proposed at 3.0 s
  EXPECT_EQ(eval.seen.size(), 2u);
}

// Proposes a script and names spares; records what it heard and how many
// spares it was asked for.
class Sparing : public Strategy {
 public:
  Sparing(std::vector<std::vector<Config>> script, std::vector<Config> spares)
      : script_(std::move(script)), spares_(std::move(spares)) {}
  std::vector<Config> propose(size_t) override {
    if (next_ >= script_.size()) return {};
    return script_[next_++];
  }
  void observe(std::span<const Observation> r) override { heard.insert(heard.end(), r.begin(), r.end()); }
  std::vector<Config> spare(size_t n) override {
    asked.push_back(n);
    std::vector<Config> out;
    for (const Config& c : spares_) {
      if (out.size() == n) break;
      if (std::none_of(heard.begin(), heard.end(), [&](const Observation& o) { return o.config == c; }))
        out.push_back(c);
    }
    return out;
  }
  std::vector<Observation> heard;
  std::vector<size_t> asked;

 private:
  std::vector<std::vector<Config>> script_;
  std::vector<Config> spares_;
  size_t next_ = 0;
};

// A beside hook that measures every spare it is given, and `extra` (as a
// short list's compiles), after the proposal; counts its calls.
struct MeasuringBeside {
  std::vector<Config> extra;
  int calls = 0;
  std::vector<size_t> given;
  std::function<std::vector<Config>(const CostOptions::Beside&)> fn() {
    return [this](const CostOptions::Beside& b) {
      ++calls;
      given.push_back(b.spare.size());
      std::vector<Config> proposal = b.propose();
      std::vector<Config> all = extra;
      all.insert(all.end(), b.spare.begin(), b.spare.end());
      for (const Config& c : all)
        if (b.wanted(c) && !b.report(c, {5.0 + c[0], 0.0})) break;
      extra.clear();
      return proposal;
    };
  }
};

TEST(CostLayer, SparesAreMeasuredBesideTheNextProposal) {
  const SearchSpace space = small_space();
  Counting eval;
  MeasuringBeside beside;
  CostOptions o;
  o.beside = beside.fn();
  std::vector<Config> ahead;
  o.ahead = [&](std::span<const Config> next) { ahead.assign(next.begin(), next.end()); };
  CostLayer layer(space, Budget{}, eval.fn(), false, o);
  Sparing s({{{0, 0}}, {{1, 0}, {2, 0}}}, {{1, 1}, {2, 1}, {0, 0}});
  beside.extra = {{1, 0}};  // compiled for the first proposal's short list... measured beside it
  RunResult r = layer.run(s);
  EXPECT_EQ(beside.calls, 3);                        // beside each proposal, the last (empty) included
  EXPECT_EQ(beside.given, (std::vector<size_t>{0, 2, 0}));  // spares named with the batch before, less measured
  // {1,0} measured beside the first proposal, the spares beside the second;
  // of the second batch only {2,0} is left to measure.
  EXPECT_EQ(eval.seen, (std::vector<Config>{{0, 0}, {2, 0}}));
  EXPECT_EQ(r.fevals, 5u);
  EXPECT_EQ(r.beside, 3u);
  EXPECT_EQ(r.cache_hits, 1u);
  ASSERT_GE(s.heard.size(), 5u);
  EXPECT_EQ(s.heard[0].config, (Config{1, 0}));      // told before the batch proposed meanwhile
  EXPECT_EQ(s.heard[1].config, (Config{0, 0}));
  EXPECT_EQ(s.asked.front(), 8u);                    // eight batches' worth first
}

TEST(CostLayer, SparesAskedForFollowWhatTheProposalsTimeTakes) {
  const SearchSpace space({int_param("x", range(20)), int_param("y", range(20))}, {});
  Counting eval;
  MeasuringBeside beside;
  CostOptions o;
  o.beside = beside.fn();
  CostLayer layer(space, Budget{}, eval.fn(), false, o);
  std::vector<Config> spares;
  for (uint32_t y = 1; y < 20; ++y)
    for (uint32_t x = 0; x < 20; ++x) spares.push_back({x, y});
  Sparing s({{{0, 0}}, {{1, 0}}, {{2, 0}}, {{3, 0}}}, spares);
  layer.run(s);
  // All measured each time: twice as many asked for after each proposal.
  EXPECT_EQ(s.asked, (std::vector<size_t>{8, 16, 32, 64}));
}

// With several GPUs, spares are asked for per GPU: each needs its own to
// compile and measure while the strategy proposes.
TEST(CostLayer, SparesAskedForGrowWithTheWorkers) {
  const SearchSpace space({int_param("x", range(40)), int_param("y", range(40))}, {});
  Counting eval;
  MeasuringBeside beside;
  CostOptions o;
  o.beside = beside.fn();
  o.workers = 4;
  CostLayer layer(space, Budget{}, eval.fn(), false, o);
  std::vector<Config> spares;
  for (uint32_t y = 1; y < 40; ++y)
    for (uint32_t x = 0; x < 40; ++x) spares.push_back({x, y});
  Sparing s({{{0, 0}}, {{1, 0}}, {{2, 0}}, {{3, 0}}}, spares);
  layer.run(s);
  EXPECT_EQ(s.asked, (std::vector<size_t>{32, 64, 128, 256}));  // eight batches' worth per GPU, then doubled, up to kMaxSpare
}

TEST(CostLayer, AnEvaluationBudgetGoesToTheStrategysOwnPicks) {
  const SearchSpace space = small_space();
  Counting eval;
  MeasuringBeside beside;
  CostOptions o;
  o.beside = beside.fn();
  CostLayer layer(space, Budget{3, 0}, eval.fn(), false, o);
  Sparing s({{{0, 0}}, {{1, 0}}, {{2, 0}}}, {{1, 1}, {2, 1}});
  RunResult r = layer.run(s);
  EXPECT_EQ(beside.calls, 0);
  EXPECT_TRUE(s.asked.empty());
  EXPECT_EQ(r.fevals, 3u);
}

TEST(CostLayer, AnInvalidProposalIsABug) {
  const SearchSpace space({int_param("x", range(4)), int_param("y", range(3))}, {expr::Expression::parse("x < y")});
  Counting eval;
  CostLayer layer(space, Budget{}, eval.fn(), false);
  Scripted s({{{2, 1}}});
  EXPECT_THROW(layer.run(s), Error);
  EXPECT_EQ(eval.calls, 0);
}

TEST(CostLayer, ProgressHearsEveryTraceEntry) {
  const SearchSpace space = small_space();
  Counting eval;
  CostLayer layer(space, Budget{}, eval.fn(0.5), false);
  Scripted s({{{0, 0}, {3, 1}}, {{1, 2}}});
  std::vector<TraceEntry> heard;
  RunResult r = layer.run(s, [&](const TraceEntry& e) { heard.push_back(e); });
  ASSERT_EQ(heard.size(), 3u);
  EXPECT_EQ(heard[2].fevals, 3u);
  EXPECT_DOUBLE_EQ(heard[2].elapsed_s, 1.5);
  EXPECT_DOUBLE_EQ(*heard[1].best, 10.0);  // the failure keeps the best
  EXPECT_EQ(r.trace.size(), 3u);
}

}  // namespace
}  // namespace ktune
