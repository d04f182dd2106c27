// The compile queue's order and what it drops (tuner/compile/pool.h,
// tuner/compile/plan.h), with real NVRTC in real compile children, and the
// hint it follows (Strategy::upcoming through CostOptions::ahead). One child
// makes the order observable: a first request that hangs (killed at the
// one-second time limit) holds it while the rest are queued, and each child
// logs the defines of every request it starts (KTUNE_COMPILE_TEST_ORDER,
// tests/main.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "search/registry.h"
#include "search/strategy/cost.h"
#include "test_util.h"
#include "tests/search_landscapes.h"
#include "tuner/compile/plan.h"
#include "tuner/compile/pool.h"

namespace ktune {
namespace {

using testing::kernels_dir;
using testing::ScopedEnv;
using testing::TempDir;
using namespace testing_landscapes;

constexpr const char* kHangDefine = "KTUNE_TEST_HANG_HERE";

CompileRequest vector_add(int elems) {
  CompileRequest r;
  r.source_path = kernels_dir() / "vector_add.cu";
  r.kernel_name = "vector_add";
  r.defines = {{"ELEMS_PER_THREAD", std::to_string(elems)}};
  r.block_threads = 256;
  return r;
}

CompileRequest hanging() {
  CompileRequest r = vector_add(1);
  r.defines.emplace_back(kHangDefine, "1");
  return r;
}

class CompileOrderTest : public ::testing::Test {
 protected:
  // The ELEMS_PER_THREAD of each request the children started, in order;
  // 0 for the hanging one.
  std::vector<int> started() const {
    std::vector<int> out;
    std::ifstream in(log_.string());
    for (std::string line; std::getline(in, line);)
      out.push_back(line.find(kHangDefine) != std::string::npos ? 0 : std::stoi(line.substr(line.find('=') + 1)));
    return out;
  }
  // One child; the hanging request is killed after a second.
  CompilePoolOptions one_child() const {
    CompilePoolOptions o;
    o.workers = 1;
    o.compiler.cache_dir = cache_.path();
    o.time_limit_s = 1;
    return o;
  }

  TempDir dir_, cache_;
  std::filesystem::path log_ = dir_.path() / "order.log";
  ScopedEnv in_process_{"KTUNE_COMPILE_IN_PROCESS", nullptr};
  ScopedEnv hang_{"KTUNE_COMPILE_TEST_HANG", kHangDefine};
  ScopedEnv order_{"KTUNE_COMPILE_TEST_ORDER", log_.c_str()};
};

TEST_F(CompileOrderTest, HighestPriorityFirstThenSubmissionOrder) {
  CompilePool p(one_child());
  const CompilePool::Ticket hold = p.submit(hanging(), 0);
  const CompilePool::Ticket e1 = p.submit(vector_add(1), 5);
  const CompilePool::Ticket e2 = p.submit(vector_add(2), 1);
  const CompilePool::Ticket e3 = p.submit(vector_add(3), 3);
  const CompilePool::Ticket e4 = p.submit(vector_add(4), 1);  // ties with e2: after it
  p.prioritize(e1, 0);
  EXPECT_FALSE(p.take(hold).ok);
  for (const CompilePool::Ticket t : {e1, e2, e3, e4}) EXPECT_TRUE(p.take(t).ok);
  EXPECT_EQ(started(), (std::vector<int>{0, 1, 2, 4, 3}));
}

TEST_F(CompileOrderTest, CancelledRequestsAreNeverCompiled) {
  CompilePool p(one_child());
  const CompilePool::Ticket hold = p.submit(hanging(), 0);
  const CompilePool::Ticket e1 = p.submit(vector_add(1), 0);
  const CompilePool::Ticket e2 = p.submit(vector_add(2), 1);
  const CompilePool::Ticket e3 = p.submit(vector_add(3), 2);
  const std::vector<CompilePool::Ticket> unwanted{e1, e3};
  p.cancel(unwanted);
  EXPECT_FALSE(p.take(hold).ok);
  EXPECT_TRUE(p.take(e2).ok);
  EXPECT_EQ(started(), (std::vector<int>{0, 2}));
  // Nothing of theirs reached the cache: a later request compiles them.
  CompilerOptions co;
  co.cache_dir = cache_.path();
  const Compiler compiler(co);
  EXPECT_FALSE(compiler.compile(vector_add(1)).cache_hit);
  EXPECT_TRUE(compiler.compile(vector_add(2)).cache_hit);
}

// A released request (a features request's straggler) is compiled still,
// queued or not, and its cubin reaches the cache; its result is dropped.
TEST_F(CompileOrderTest, ReleasedRequestsAreCompiledForTheCache) {
  CompilePool p(one_child());
  const CompilePool::Ticket hold = p.submit(hanging(), 0);
  const CompilePool::Ticket e1 = p.submit(vector_add(1), 0);
  const CompilePool::Ticket e2 = p.submit(vector_add(2), 1);
  const std::vector<CompilePool::Ticket> released{e1};
  p.release(released);
  EXPECT_FALSE(p.take(hold).ok);
  EXPECT_TRUE(p.take(e2).ok);
  EXPECT_EQ(started(), (std::vector<int>{0, 1, 2}));
  CompilerOptions co;
  co.cache_dir = cache_.path();
  EXPECT_TRUE(Compiler(co).compile(vector_add(1)).cache_hit);
}

CompilePlan::Keyed keyed(int elems) { return {"e" + std::to_string(elems), vector_add(elems)}; }

TEST_F(CompileOrderTest, PlanTakesOverWhatItCompiledAheadAndDropsTheRest) {
  CompilePool p(one_child());
  const CompilePool::Ticket hold = p.submit(hanging(), 0);
  CompilePlan plan(p);
  // Batch {1}, expected next {2, 3}; then the strategy changes its mind:
  // batch {3}, expected next {4}; then the run ends.
  const std::vector<CompilePool::Ticket> first = plan.submit({keyed(1)}, {keyed(2), keyed(3)});
  const std::vector<CompilePool::Ticket> second = plan.submit({keyed(3)}, {keyed(4)});
  plan.drop();
  EXPECT_EQ(plan.queued_ahead(), 3u);  // 2, 3, 4
  EXPECT_EQ(plan.taken_over(), 1u);    // 3
  EXPECT_EQ(plan.dropped(), 2u);       // 2 superseded, 4 at the end
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_FALSE(p.take(hold).ok);
  EXPECT_TRUE(p.take(first[0]).ok);
  EXPECT_TRUE(p.take(second[0]).ok);
  EXPECT_EQ(started(), (std::vector<int>{0, 1, 3}));
}

TEST_F(CompileOrderTest, TheNextBatchQueuesBehindTheCurrentOne) {
  CompilePool p(one_child());
  const CompilePool::Ticket hold = p.submit(hanging(), 0);
  CompilePlan plan(p);
  // Compiled ahead first, then the batch of another consumer of the shared
  // pool (another GPU) at priority 0: it goes before what is only expected.
  const std::vector<CompilePool::Ticket> mine = plan.submit({keyed(1)}, {keyed(2)});
  const CompilePool::Ticket other = p.submit(vector_add(5), 0);
  const std::vector<CompilePool::Ticket> next = plan.submit({keyed(2)}, {});
  EXPECT_FALSE(p.take(hold).ok);
  EXPECT_TRUE(p.take(mine[0]).ok);
  EXPECT_TRUE(p.take(other).ok);
  EXPECT_TRUE(p.take(next[0]).ok);
  EXPECT_EQ(plan.taken_over(), 1u);
  EXPECT_EQ(started(), (std::vector<int>{0, 1, 5, 2}));
}

// The hint the cost layer passes on: brute_force's next batch exactly, never
// past max_fevals, and an empty one when the run ends.
TEST(CompileAhead, CostLayerPassesTheStrategysNextBatchWithinTheBudget) {
  const SearchSpace space({int_param("x", range(5)), int_param("y", range(4))}, {});
  std::vector<std::vector<Config>> hints, batches;
  CostOptions o;
  o.batch_size = 4;
  o.ahead = [&](std::span<const Config> next) { hints.emplace_back(next.begin(), next.end()); };
  CostLayer layer(space, Budget{10, 0},
                  CostLayer::Evaluate([&](std::span<const Config> cs) {
                    batches.emplace_back(cs.begin(), cs.end());
                    return std::vector<EvalOutcome>(cs.size(), EvalOutcome{1.0, 1.0});
                  }),
                  false, o);
  std::unique_ptr<Strategy> s = make_strategy("brute_force", StrategyContext{&space, 1, {}, {}, 10, {}});
  const RunResult r = layer.run(*s);
  EXPECT_EQ(r.fevals, 10u);
  ASSERT_EQ(batches.size(), 3u);
  ASSERT_EQ(hints.size(), 4u);  // one per batch and the last, empty
  EXPECT_EQ(hints[0], batches[1]);
  EXPECT_EQ(hints[1], batches[2]);  // 2 evaluations left after the second batch
  EXPECT_EQ(hints[1].size(), 2u);
  EXPECT_TRUE(hints[2].empty());  // none left after the third
  EXPECT_TRUE(hints[3].empty());
}

TEST(CompileAhead, RandomSampleForeseesItsNextDrawsExactly) {
  const SearchSpace space = bowl_space();
  std::unique_ptr<Strategy> s = make_strategy("random_sample", StrategyContext{&space, 7, {}, {}, 0, {}});
  for (int step = 0; step < 5; ++step) {
    const std::vector<Config> expected = s->upcoming(16);
    ASSERT_EQ(expected.size(), 16u);
    const std::vector<Config> got = s->propose(16);
    EXPECT_EQ(got, expected) << "step " << step;
    std::vector<Observation> obs;
    for (const Config& c : got) obs.push_back({c, 1.0});
    s->observe(obs);
  }
}

TEST(CompileAhead, AdaptiveStrategiesPromiseNothing) {
  const SearchSpace space = bowl_space();
  for (const char* name : {"model_rank", "genetic_algorithm", "bayes_opt"}) {
    std::unique_ptr<Strategy> s = make_strategy(name, StrategyContext{&space, 1, {}, {}, 0, {}});
    (void)s->propose(8);
    EXPECT_TRUE(s->upcoming(8).empty()) << name;
  }
}

}  // namespace
}  // namespace ktune
