// PoolEvaluator: a batch spread over several workers. Simulated workers over
// a recorded dataset (the virtual clock, the whole tuning loop, the time
// budget), and live workers on threads (one result reported at a time, each
// configuration once, members used only from their own thread).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "db/store.h"
#include "ktune/error.h"
#include "test_util.h"
#include "tuner/spec/spec.h"
#include "tuner/tune/pool_evaluator.h"
#include "tuner/tune/replay_evaluator.h"
#include "tuner/tune/run.h"

#ifndef KTUNE_EXAMPLES_DIR
#define KTUNE_EXAMPLES_DIR "examples"
#endif
#ifndef KTUNE_TEMPLATES_DIR
#define KTUNE_TEMPLATES_DIR "templates"
#endif

namespace ktune {
namespace {

using testing::TempDir;

const std::string kSpec = std::string(KTUNE_TEMPLATES_DIR) + "/sgemm/sgemm.yaml";
const std::string kData = std::string(KTUNE_EXAMPLES_DIR) + "/data/sgemm_h100.json";

struct Recorder : tune::RunObserver {
  tune::RunStart start;
  std::vector<Measured> measured_now;
  void started(const tune::RunStart& s) override { start = s; }
  void measured(const Measured& m) override { measured_now.push_back(m); }
};

// A replay whose every configuration costs the same, `cost_s`.
class UniformCost : public ReplayEvaluator {
 public:
  UniformCost(const Spec& spec, const std::string& data, double cost_s) : ReplayEvaluator(spec, data), cost_(cost_s) {}
  void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on) override {
    ReplayEvaluator::evaluate(configs, [&](size_t i, const Measured& m) {
      Measured u = m;
      u.cost_s = cost_;
      u.eval.compile_ms = 0;  // all of it the GPU's
      return on(i, u);
    });
  }
  double compile_s(const Config&) const override { return 0; }

 private:
  double cost_;
};

tune::RunOptions brute_force() {
  tune::RunOptions o;
  o.strategy = "brute_force";
  o.no_prior = true;
  return o;
}

std::map<std::string, int> stored_per_config(db::Store& store, const Spec& spec) {
  db::Filter all;
  all.kernel = spec.kernel.name;
  std::map<std::string, int> n;
  for (const auto& r : store.results(all)) ++n[r.config_key];
  return n;
}

TEST(PoolEvaluator, SimulatedWorkersStoreEveryConfigurationOnceAndFindTheSameOptimum) {
  TempDir dir;
  const Spec spec = load_spec(kSpec);
  ReplayEvaluator one(spec, kData);
  db::Store store1(dir.file("one.db"));
  Recorder seen1;
  const tune::RunOutcome out1 = tune::run(spec, one, store1, brute_force(), seen1);
  ASSERT_TRUE(out1.result.best_score);

  for (size_t workers : {1, 3, 8}) {
    PoolEvaluator pool(std::make_unique<ReplayEvaluator>(spec, kData), ClockOptions{1, workers, false});
    db::Store store(dir.file("pool" + std::to_string(workers) + ".db"));
    Recorder seen;
    const tune::RunOutcome out = tune::run(spec, pool, store, brute_force(), seen);
    EXPECT_EQ(seen.start.workers, workers);
    EXPECT_TRUE(seen.start.replay);
    EXPECT_EQ(out.result.best_score, out1.result.best_score) << workers;
    EXPECT_EQ(out.result.best_config, out1.result.best_config) << workers;
    EXPECT_EQ(out.result.fevals, out1.result.fevals) << workers;
    const auto per_config = stored_per_config(store, spec);
    EXPECT_EQ(per_config.size(), stored_per_config(store1, spec).size());
    for (const auto& [key, n] : per_config) EXPECT_EQ(n, 1) << key;

    // The work is the recorded work (the GPUs' part and the compiles'); only
    // its layout over the GPUs and the one compile process changes.
    const PoolStats& s = pool.stats();
    EXPECT_EQ(s.workers, workers);
    EXPECT_NEAR(s.busy_s + s.compile_s, out1.result.elapsed_s, 1e-6 * out1.result.elapsed_s);
    EXPECT_DOUBLE_EQ(out.result.elapsed_s, s.wall_s);  // the budget's clock is the virtual one
    // No faster than the GPUs' share or the one compile process, no slower
    // than everything one after another.
    EXPECT_GE(s.wall_s, s.busy_s / double(workers) * (1 - 1e-12));
    EXPECT_GE(s.wall_s, s.compile_s * (1 - 1e-12));
    EXPECT_LE(s.wall_s, out1.result.elapsed_s * (1 + 1e-12));
    EXPECT_GT(s.efficiency(), 0);
    EXPECT_LE(s.efficiency(), 1 + 1e-9);
  }
}

TEST(PoolEvaluator, UniformCostsOnNWorkersTakeTheTotalOverN) {
  TempDir dir;
  const Spec spec = load_spec(kSpec);
  const uint64_t valid = spec.space().count_valid();
  for (size_t workers : {1, 2, 4, 8}) {
    PoolEvaluator pool(std::make_unique<UniformCost>(spec, kData, 0.5), ClockOptions{1, workers, false});
    db::Store store(dir.file("u" + std::to_string(workers) + ".db"));
    Recorder seen;
    const tune::RunOutcome out = tune::run(spec, pool, store, brute_force(), seen);
    ASSERT_EQ(out.result.fevals, valid);
    // Batches of 64 per worker: each takes ceil(size / workers) rounds of 0.5 s.
    const uint64_t batch = 64 * workers;
    double expected = 0;
    for (uint64_t left = valid; left > 0; left -= std::min<uint64_t>(left, batch))
      expected += 0.5 * double((std::min<uint64_t>(left, batch) + workers - 1) / workers);
    EXPECT_DOUBLE_EQ(pool.stats().wall_s, expected) << workers;
    EXPECT_NEAR(pool.stats().wall_s, 0.5 * double(valid) / double(workers), 0.5 * double(valid) / 64 + 0.5)
        << workers;
    EXPECT_DOUBLE_EQ(pool.stats().busy_s, 0.5 * double(valid));
  }
}

TEST(PoolEvaluator, TheTimeLimitIsVirtualWallTime) {
  TempDir dir;
  const Spec spec = load_spec(kSpec);
  PoolEvaluator full(std::make_unique<UniformCost>(spec, kData, 0.5), ClockOptions{1, 4, false});
  db::Store store_full(dir.file("full.db"));
  Recorder seen_full;
  const double wall = tune::run(spec, full, store_full, brute_force(), seen_full).result.elapsed_s;

  PoolEvaluator pool(std::make_unique<UniformCost>(spec, kData, 0.5), ClockOptions{1, 4, false});
  db::Store store(dir.file("t.db"));
  tune::RunOptions o = brute_force();
  o.budget.time_limit_s = wall / 2;
  Recorder seen;
  const tune::RunOutcome out = tune::run(spec, pool, store, o, seen);
  EXPECT_EQ(out.result.stop, StopReason::TimeLimit);
  EXPECT_GE(out.result.elapsed_s, wall / 2);
  EXPECT_LE(out.result.elapsed_s, wall / 2 + 0.5);  // what was in flight finishes
  // Four workers get through about four times what one would in that time.
  EXPECT_NEAR(double(out.result.fevals), 4 * (wall / 2) / 0.5, 4);
}

// A member with a cost per configuration given by its first value, for the
// simulated dispatch; or, live, a stand-in GPU that notes the thread it runs on.
class Scripted : public ConfigEvaluator {
 public:
  explicit Scripted(std::string name = "Scripted GPU") : name_(std::move(name)), made_on_(std::this_thread::get_id()) {}
  db::DeviceInfo device() const override {
    db::DeviceInfo d;
    d.name = name_;
    return d;
  }
  void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on) override {
    if (std::this_thread::get_id() != made_on_) wrong_thread = true;
    for (size_t i = 0; i < configs.size(); ++i) {
      Measured m;
      m.eval.config = configs[i];
      m.eval.time_ms = configs[i][0].as_float();
      m.cost_s = configs[i][0].as_float();
      if (!on(i, m)) return;
    }
  }
  bool replay() const override { return false; }
  std::string source() const override { return name_; }
  std::vector<StaticFeatures> features(std::span<const Config> configs) override {
    if (std::this_thread::get_id() != made_on_) wrong_thread = true;
    return std::vector<StaticFeatures>(configs.size());
  }
  static inline std::atomic<bool> wrong_thread{false};

 private:
  std::string name_;
  std::thread::id made_on_;
};

std::vector<std::vector<Value>> configs_costing(std::initializer_list<double> costs) {
  std::vector<std::vector<Value>> out;
  for (double c : costs) out.push_back({Value(c)});
  return out;
}

// A false starts nothing more; what another GPU has in flight is still reported.
TEST(PoolEvaluator, SimulatedGpusFinishWhatTheyHoldAfterAStop) {
  const Spec spec = load_spec(kSpec);
  PoolEvaluator pool(std::make_unique<UniformCost>(spec, kData, 1.0), ClockOptions{1, 2, false});
  std::vector<std::vector<Value>> batch;
  for (uint64_t i = 0; i < 6; ++i) batch.push_back(spec.space().values(spec.space().at(i)));
  std::vector<std::pair<size_t, double>> seen;  // index, virtual time when reported
  pool.evaluate(batch, [&](size_t i, const Measured&) {
    seen.emplace_back(i, *pool.virtual_time());
    return false;
  });
  const std::vector<std::pair<size_t, double>> expected{{0, 1.0}, {1, 1.0}};
  EXPECT_EQ(seen, expected);
  EXPECT_DOUBLE_EQ(pool.stats().busy_s, 2.0);
}

TEST(PoolEvaluator, LiveMembersReportEachConfigurationOnceOneAtATime) {
  Scripted::wrong_thread = false;
  std::vector<PoolEvaluator::MakeMember> makers;
  for (int i = 0; i < 4; ++i) makers.push_back([] { return std::make_unique<Scripted>(); });
  PoolEvaluator pool(std::move(makers));
  EXPECT_EQ(pool.workers(), 4u);
  EXPECT_FALSE(pool.virtual_time());
  EXPECT_EQ(pool.device().name, "Scripted GPU");

  std::vector<std::vector<Value>> batch;
  for (int i = 0; i < 200; ++i) batch.push_back({Value(1e-4 * (i % 7))});
  std::atomic<int> inside{0};
  bool overlapped = false;
  std::vector<int> times(batch.size(), 0);
  pool.evaluate(batch, [&](size_t i, const Measured& m) {
    if (inside.fetch_add(1) != 0) overlapped = true;
    std::this_thread::sleep_for(std::chrono::microseconds(50));  // a store commit
    ++times.at(i);
    EXPECT_EQ(m.eval.config, batch[i]);
    inside.fetch_sub(1);
    return true;
  });
  EXPECT_FALSE(overlapped);
  for (size_t i = 0; i < times.size(); ++i) EXPECT_EQ(times[i], 1) << i;
  EXPECT_EQ(pool.features(std::vector<Config>(3)).size(), 3u);
  EXPECT_FALSE(Scripted::wrong_thread);

  // A false: no member starts another chunk; nothing is reported twice.
  std::fill(times.begin(), times.end(), 0);
  int calls = 0;
  pool.evaluate(batch, [&](size_t i, const Measured&) {
    ++times.at(i);
    return ++calls < 10;
  });
  EXPECT_GE(calls, 10);
  EXPECT_LT(calls, 10 + 4 * int(Dispatch::guided_chunk(batch.size(), 4)));
  for (int t : times) EXPECT_LE(t, 1);
}

TEST(PoolEvaluator, LiveMembersOfDifferentModelsOrAFailedOneAreRefused) {
  std::vector<PoolEvaluator::MakeMember> mixed;
  mixed.push_back([] { return std::make_unique<Scripted>("GPU A"); });
  mixed.push_back([] { return std::make_unique<Scripted>("GPU B"); });
  try {
    PoolEvaluator pool(std::move(mixed));
    FAIL() << "mixed models accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::BadInput);
    EXPECT_NE(std::string(e.what()).find("one model"), std::string::npos) << e.what();
  }
  std::vector<PoolEvaluator::MakeMember> failing;
  failing.push_back([] { return std::make_unique<Scripted>(); });
  failing.push_back([]() -> std::unique_ptr<ConfigEvaluator> { throw Error::failed("cannot tune on a GPU: none"); });
  EXPECT_THROW(PoolEvaluator pool(std::move(failing)), Error);
}

TEST(PoolEvaluator, AMembersErrorEndsTheBatchAndReachesTheCaller) {
  struct Breaking : Scripted {
    void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on) override {
      if (configs[0][0].as_float() > 0.5) throw Error::failed("a member broke");
      Scripted::evaluate(configs, on);
    }
  };
  std::vector<PoolEvaluator::MakeMember> makers;
  for (int i = 0; i < 3; ++i) makers.push_back([] { return std::make_unique<Breaking>(); });
  PoolEvaluator pool(std::move(makers), 1);
  std::vector<std::vector<Value>> batch = configs_costing({0, 0, 0, 1, 0, 0, 0, 0, 0, 0});
  EXPECT_THROW(pool.evaluate(batch, [](size_t, const Measured&) { return true; }), Error);
  // The pool still works afterwards.
  int n = 0;
  pool.evaluate(configs_costing({0, 0}), [&](size_t, const Measured&) { return ++n > 0; });
  EXPECT_EQ(n, 2);
}

// A live member compiles ahead the chunk it takes next, and at a batch's end
// part of what the strategy expects next, which it then takes first; the
// run's end (an empty compile_ahead) reaches it.
TEST(PoolEvaluator, LiveMembersCompileAheadWhatTheyTakeNext) {
  using Configs = std::vector<std::vector<Value>>;
  struct Event {
    bool ahead;
    Configs configs;
  };
  struct Noting : Scripted {
    std::vector<Event>* events;
    void compile_ahead(std::span<const std::vector<Value>> next) override {
      events->push_back({true, Configs(next.begin(), next.end())});
    }
    void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on) override {
      events->push_back({false, Configs(configs.begin(), configs.end())});
      Scripted::evaluate(configs, on);
    }
  };
  std::vector<Event> events;
  std::vector<PoolEvaluator::MakeMember> makers;
  makers.push_back([&] {
    auto n = std::make_unique<Noting>();
    n->events = &events;
    return n;
  });
  PoolEvaluator pool(std::move(makers));
  const auto first = configs_costing({0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7});
  const auto second = configs_costing({0.8, 0.9, 1.0, 1.1});
  int reported = 0;
  auto count = [&](size_t, const Measured&) { return ++reported > 0; };
  pool.compile_ahead(second);  // as the run loop says before each batch
  pool.evaluate(first, count);
  pool.compile_ahead({});
  pool.evaluate(second, count);
  pool.compile_ahead({});
  EXPECT_EQ(reported, 12);
  // Every chunk after the first was in what the member was given to compile
  // ahead with the chunk before it (the member hears of a chunk's ahead just
  // before it measures that chunk).
  const Configs* latest = nullptr;  // the last non-empty ahead
  const Configs* promised = nullptr;  // the last non-empty ahead when the previous chunk began
  std::vector<Configs> chunks;
  for (const Event& e : events) {
    if (e.ahead) {
      if (!e.configs.empty()) latest = &e.configs;
      continue;
    }
    if (!chunks.empty()) {
      ASSERT_TRUE(promised) << "chunk " << chunks.size();
      for (const auto& c : e.configs)
        EXPECT_NE(std::find(promised->begin(), promised->end(), c), promised->end()) << "chunk " << chunks.size();
    }
    promised = latest;
    chunks.push_back(e.configs);
  }
  ASSERT_EQ(chunks.size(), 5u);  // halves of what is left: 4, 2, 1, 1; then the second batch whole
  EXPECT_EQ(chunks.front(), configs_costing({0, 0.1, 0.2, 0.3}));
  EXPECT_EQ(chunks.back(), second);  // compiled ahead during the first batch
  EXPECT_TRUE(events.back().ahead && events.back().configs.empty());  // the run's end
}

}  // namespace
}  // namespace ktune
