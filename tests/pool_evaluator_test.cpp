// PoolEvaluator: a batch spread over several workers. Simulated workers over
// a recorded dataset (the virtual clock, the whole tuning loop, the time
// budget), and live workers on threads (one result reported at a time, each
// configuration once, members used only from their own thread).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "db/store.h"
#include "search/registry.h"
#include "ktune/error.h"
#include "test_util.h"
#include "tuner/spec/spec.h"
#include "tuner/tune/pool_evaluator.h"
#include "tuner/tune/profile.h"
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
class Scripted : public ConfigEvaluator, public CompileFeatures {
 public:
  explicit Scripted(std::string name = "Scripted GPU") : name_(std::move(name)), made_on_(std::this_thread::get_id()) {}
  db::DeviceInfo device() const override {
    db::DeviceInfo d;
    d.name = name_;
    return d;
  }
  void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on) override {
    for (size_t i = 0; i < configs.size(); ++i)
      if (!evaluate_one(configs[i], i, on)) return;
  }
  bool evaluate_one(const std::vector<Value>& config, size_t i, const OnMeasured& on) {
    note_thread();
    Measured m;
    m.eval.config = config;
    m.eval.time_ms = config[0].as_float();
    m.cost_s = config[0].as_float();
    return on(i, m);
  }
  std::string source() const override { return name_; }
  Offers offers() override { return {.features = this}; }
  std::vector<StaticFeatures> features(std::span<const Config> configs) override {
    note_thread();
    return std::vector<StaticFeatures>(configs.size());
  }
  static inline std::atomic<bool> wrong_thread{false};

 protected:
  void note_thread() const {
    if (std::this_thread::get_id() != made_on_) wrong_thread = true;
  }

 private:
  std::string name_;
  std::thread::id made_on_;
};

std::vector<std::vector<Value>> configs_costing(std::initializer_list<double> costs) {
  std::vector<std::vector<Value>> out;
  for (double c : costs) out.push_back({Value(c)});
  return out;
}

// A stand-in GPU that also measures again and profiles: each answer says on
// which member it was asked, and what it was asked.
class Profiled : public Scripted, public Remeasurer, public Profiler {
 public:
  explicit Profiled(std::string member) : member_(std::move(member)) {}
  std::vector<Measured> remeasure(std::span<const std::vector<Value>> configs, int rounds) override {
    note_thread();
    std::vector<Measured> out(configs.size());
    for (size_t i = 0; i < configs.size(); ++i) {
      out[i].eval.config = configs[i];
      out[i].eval.samples.assign(size_t(rounds), 1.0);
      out[i].eval.reason = member_;
    }
    return out;
  }
  std::vector<Measured> profile(std::span<const std::vector<Value>> configs,
                                const std::vector<std::string>& metrics) override {
    note_thread();
    std::vector<Measured> out(configs.size());
    for (size_t i = 0; i < configs.size(); ++i) {
      out[i].eval.config = configs[i];
      out[i].eval.metrics["asked"] = double(metrics.size());
      out[i].eval.reason = member_;
    }
    return out;
  }
  db::DeviceInfo measure_limits() override {
    note_thread();
    db::DeviceInfo d = device();
    d.copy_gbs = 1000;
    return d;
  }
  Offers offers() override { return {.features = this, .remeasurer = this, .profiler = this}; }

 private:
  std::string member_;
};

// A live pool offers what its members offer, asked on the first member's
// thread, and its PoolStats; recorded data only where the members replay.
TEST(PoolEvaluator, OffersWhatItsFirstMemberOffersOnItsThread) {
  Scripted::wrong_thread = false;
  std::vector<PoolEvaluator::MakeMember> plain_makers;
  for (int i = 0; i < 2; ++i) plain_makers.push_back([] { return std::make_unique<Scripted>(); });
  PoolEvaluator plain(std::move(plain_makers));
  const ConfigEvaluator::Offers few = plain.offers();
  ASSERT_TRUE(few.features);
  EXPECT_EQ(few.features->features(std::vector<Config>(2)).size(), 2u);
  EXPECT_FALSE(few.remeasurer);
  EXPECT_FALSE(few.profiler);
  EXPECT_FALSE(few.recorded);
  EXPECT_EQ(few.pool, &plain.stats());

  std::vector<PoolEvaluator::MakeMember> makers;
  makers.push_back([] { return std::make_unique<Profiled>("first"); });
  makers.push_back([] { return std::make_unique<Profiled>("second"); });
  PoolEvaluator pool(std::move(makers));
  const ConfigEvaluator::Offers o = pool.offers();
  ASSERT_TRUE(o.remeasurer);
  ASSERT_TRUE(o.profiler);
  EXPECT_FALSE(o.recorded);
  EXPECT_EQ(o.pool, &pool.stats());
  const auto configs = configs_costing({1, 2, 3});
  const std::vector<Measured> again = o.remeasurer->remeasure(configs, 3);
  ASSERT_EQ(again.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(again[i].eval.config, configs[i]);
    EXPECT_EQ(again[i].eval.samples.size(), 3u);
    EXPECT_EQ(again[i].eval.reason, "first");
  }
  const std::vector<Measured> counted = o.profiler->profile(configs, {"a", "b"});
  ASSERT_EQ(counted.size(), 3u);
  EXPECT_EQ(counted[2].eval.config, configs[2]);
  EXPECT_EQ(counted[2].eval.metrics.at("asked"), 2.0);
  EXPECT_EQ(counted[2].eval.reason, "first");
  EXPECT_EQ(o.profiler->measure_limits().copy_gbs, 1000);
  EXPECT_FALSE(Scripted::wrong_thread);
}

// Simulated GPUs answer from recorded data, on its clock: nothing to measure
// again or profile.
TEST(PoolEvaluator, SimulatedGpusOfferRecordedDataAndTheirClock) {
  const Spec spec = load_spec(kSpec);
  PoolEvaluator pool(std::make_unique<UniformCost>(spec, kData, 1.0), ClockOptions{2, 2, false});
  const ConfigEvaluator::Offers o = pool.offers();
  EXPECT_TRUE(o.features);
  EXPECT_FALSE(o.remeasurer);
  EXPECT_FALSE(o.profiler);
  EXPECT_EQ(o.pool, &pool.stats());
  ASSERT_TRUE(o.recorded);
  EXPECT_FALSE(o.recorded->recorded_part());  // a whole recording
  EXPECT_EQ(o.recorded->virtual_time(), 0.0);
  std::vector<std::vector<Value>> batch;
  for (uint64_t i = 0; i < 4; ++i) batch.push_back(spec.space().values(spec.space().at(i)));
  pool.evaluate(batch, [](size_t, const Measured&) { return true; });
  EXPECT_EQ(o.recorded->virtual_time(), 2.0);  // 4 configurations of 1 s on 2 GPUs

  // Counters need a runner that offers a profiler; a replay is told so.
  TempDir dir;
  db::Store store(dir.file("p.db"));
  try {
    tune::profile_stored(spec, pool, store, {});
    ADD_FAILURE() << "a replay profiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a replay has none"), std::string::npos) << e.what();
  }
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

TEST(PoolEvaluator, LiveMembersOfDifferentModelsOrAllFailedAreRefused) {
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
  for (int i = 0; i < 2; ++i)
    failing.push_back([i]() -> std::unique_ptr<ConfigEvaluator> {
      throw Error::failed("cannot tune on GPU " + std::to_string(i));
    });
  try {
    PoolEvaluator pool(std::move(failing));
    FAIL() << "a pool of no member made";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cannot tune on GPU 0");  // the first one's
  }
}

// A stand-in GPU that is lost (throws) once it has measured `lives`
// configurations, in the middle of a chunk; `pace` per configuration, so
// that every member gets its share.
struct Dying : Scripted {
  explicit Dying(size_t lives, std::string why = "GPU lost: an uncorrectable ECC error")
      : lives(lives), why(std::move(why)) {}
  void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on) override {
    for (size_t i = 0; i < configs.size(); ++i) {
      if (measured == lives) throw Error::failed(why);
      ++measured;
      std::this_thread::sleep_for(pace);
      if (!Scripted::evaluate_one(configs[i], i, on)) return;
    }
  }
  size_t lives, measured = 0;
  std::string why;
  std::chrono::microseconds pace{0};
};
constexpr size_t kImmortal = std::numeric_limits<size_t>::max();

std::vector<std::vector<Value>> numbered(int n, int from = 0) {
  std::vector<std::vector<Value>> out;
  for (int i = from; i < from + n; ++i) out.push_back({Value(1e-4 * i)});
  return out;
}

// How many times each configuration of the batch was reported; each one
// checked against the configuration it answers.
std::vector<int> evaluate_counting(PoolEvaluator& pool, const std::vector<std::vector<Value>>& batch) {
  std::vector<int> times(batch.size(), 0);
  pool.evaluate(batch, [&](size_t i, const Measured& m) {
    ++times.at(i);
    EXPECT_EQ(m.eval.config, batch[i]);
    EXPECT_DOUBLE_EQ(m.eval.time_ms.value_or(-1), batch[i][0].as_float());
    return true;
  });
  return times;
}

// Two of four members are lost in the middle of their chunks: what they held
// unreported, and the chunks promised to them, are measured by the others,
// every configuration reported once; the pool goes on with two.
TEST(PoolEvaluator, LostMembersHandWhatTheyHeldToTheOthers) {
  std::vector<LostWorker> told;
  std::vector<PoolEvaluator::MakeMember> makers;
  for (size_t lives : {kImmortal, size_t(3), size_t(11), kImmortal})
    makers.push_back([lives] {
      auto d = std::make_unique<Dying>(lives);
      if (lives == 3) d->why = "GPU 1 fell off the bus";
      d->pace = std::chrono::microseconds(200);
      return d;
    });
  PoolEvaluator pool(std::move(makers), 0, [&](const LostWorker& l) { told.push_back(l); });
  const auto batch = numbered(300);
  const std::vector<int> times = evaluate_counting(pool, batch);
  for (size_t i = 0; i < times.size(); ++i) EXPECT_EQ(times[i], 1) << i;
  const PoolStats& s = pool.stats();
  EXPECT_EQ(s.workers, 4u);
  ASSERT_EQ(s.lost.size(), 2u);
  ASSERT_EQ(told.size(), 2u);
  std::set<size_t> which;
  for (const LostWorker& l : s.lost) {
    which.insert(l.index);
    EXPECT_EQ(l.source, "Scripted GPU");
    EXPECT_EQ(l.reason, l.index == 1 ? "GPU 1 fell off the bus" : "GPU lost: an uncorrectable ECC error");
  }
  EXPECT_EQ(which, (std::set<size_t>{1, 2}));
  EXPECT_EQ(told[0].index, s.lost[0].index);

  // The next batches go to the two left; the questions to the first of them.
  for (int round = 0; round < 2; ++round) {
    const std::vector<int> again = evaluate_counting(pool, numbered(50));
    for (int t : again) EXPECT_EQ(t, 1);
  }
  EXPECT_EQ(pool.features(std::vector<Config>(2)).size(), 2u);
  pool.compile_ahead({});
  EXPECT_EQ(pool.stats().lost.size(), 2u);
}

// A member lost on its first configuration, while the other has finished
// the rest, still has its chunk measured (by the other, in a round after the
// first); so has what it was promised of the next batch.
TEST(PoolEvaluator, AMemberLostAfterTheOthersFinishedIsMeasuredByThem) {
  auto holds = std::make_shared<std::atomic<bool>>(false);  // the slow one has a chunk
  struct Slow : Dying {
    explicit Slow(std::shared_ptr<std::atomic<bool>> holds) : Dying(0), holds(std::move(holds)) {}
    void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on) override {
      *holds = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(30));  // the other is done meanwhile
      Dying::evaluate(configs, on);
    }
    std::shared_ptr<std::atomic<bool>> holds;
  };
  struct Waiting : Scripted {
    explicit Waiting(std::shared_ptr<std::atomic<bool>> holds) : holds(std::move(holds)) {}
    void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on) override {
      while (!*holds) std::this_thread::yield();  // so that the slow one takes a chunk at all
      Scripted::evaluate(configs, on);
    }
    std::shared_ptr<std::atomic<bool>> holds;
  };
  std::vector<PoolEvaluator::MakeMember> makers;
  makers.push_back([holds] { return std::make_unique<Slow>(holds); });
  makers.push_back([holds] { return std::make_unique<Waiting>(holds); });
  PoolEvaluator pool(std::move(makers));
  const auto batch = numbered(8);
  pool.compile_ahead(numbered(16, 100));
  for (int t : evaluate_counting(pool, batch)) EXPECT_EQ(t, 1);
  ASSERT_EQ(pool.stats().lost.size(), 1u);
  EXPECT_EQ(pool.stats().lost[0].index, 0u);
  pool.compile_ahead({});
  for (int t : evaluate_counting(pool, numbered(16, 100))) EXPECT_EQ(t, 1);
}

// A factory that throws is a member lost before it began: the others measure.
TEST(PoolEvaluator, AMemberWhoseFactoryFailsIsLostAtTheStart) {
  std::vector<LostWorker> told;
  std::vector<PoolEvaluator::MakeMember> makers;
  makers.push_back([] { return std::make_unique<Scripted>("GPU A"); });
  makers.push_back([]() -> std::unique_ptr<ConfigEvaluator> { throw Error::failed("cannot open GPU 1: busy"); });
  makers.push_back([] { return std::make_unique<Scripted>("GPU A"); });
  PoolEvaluator pool(std::move(makers), 0, [&](const LostWorker& l) { told.push_back(l); });
  EXPECT_EQ(pool.workers(), 2u);
  EXPECT_EQ(pool.source(), "GPU A; GPU A");
  ASSERT_EQ(pool.stats().lost.size(), 1u);
  EXPECT_EQ(pool.stats().lost[0].index, 1u);
  EXPECT_EQ(pool.stats().lost[0].source, "");
  EXPECT_EQ(pool.stats().lost[0].reason, "cannot open GPU 1: busy");
  EXPECT_EQ(told.size(), 1u);
  for (int t : evaluate_counting(pool, numbered(40))) EXPECT_EQ(t, 1);
}

// When every member is lost the first loss reaches the caller, after all that
// was measured has been reported once; the pool takes nothing more.
TEST(PoolEvaluator, WhenEveryMemberIsLostTheFirstLossReachesTheCaller) {
  std::vector<PoolEvaluator::MakeMember> makers;
  for (size_t i = 0; i < 3; ++i)
    makers.push_back([i] { return std::make_unique<Dying>(2 + i, "GPU " + std::to_string(i) + " lost"); });
  PoolEvaluator pool(std::move(makers), 1);
  const auto batch = numbered(50);
  std::vector<int> times(batch.size(), 0);
  try {
    pool.evaluate(batch, [&](size_t i, const Measured&) { return ++times.at(i) > 0; });
    FAIL() << "no member left, and no error";
  } catch (const Error& e) {
    EXPECT_EQ(pool.stats().lost.size(), 3u);
    EXPECT_EQ(std::string(e.what()), pool.stats().lost[0].reason);
  }
  int reported = 0;
  for (int t : times) {
    EXPECT_LE(t, 1);
    reported += t;
  }
  EXPECT_EQ(reported, 2 + 3 + 4);  // every life measured
  EXPECT_THROW(pool.evaluate(numbered(2), [](size_t, const Measured&) { return true; }), Error);
  EXPECT_THROW(pool.features(std::vector<Config>(1)), Error);
}

// A configuration on which every member throws loses them all, one by one.
TEST(PoolEvaluator, AConfigurationThatBreaksEveryMemberEndsTheBatch) {
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
  EXPECT_EQ(pool.stats().lost.size(), 3u);
}

// The run's own errors are not a member's: an exception of on_measured (the
// store's) and a cancel reach the caller at once, and no member is lost.
TEST(PoolEvaluator, TheRunsOwnErrorsLoseNoMember) {
  struct Cancelling : Scripted {
    void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on) override {
      if (configs[0][0].as_float() > 0.5) throw Cancelled{};
      Scripted::evaluate(configs, on);
    }
  };
  std::vector<PoolEvaluator::MakeMember> makers;
  for (int i = 0; i < 3; ++i) makers.push_back([] { return std::make_unique<Cancelling>(); });
  PoolEvaluator pool(std::move(makers), 1);
  int n = 0;
  EXPECT_THROW(pool.evaluate(numbered(20),
                             [&](size_t, const Measured&) -> bool {
                               if (++n == 5) throw Error::failed("the database is locked");
                               return true;
                             }),
               Error);
  EXPECT_THROW(pool.evaluate(configs_costing({0, 1, 0}), [](size_t, const Measured&) { return true; }), Cancelled);
  EXPECT_TRUE(pool.stats().lost.empty());
  for (int t : evaluate_counting(pool, numbered(30))) EXPECT_EQ(t, 1);
}

// A whole tuning run over live members of which two are lost part-way (a
// replay stands in for each GPU): every configuration is stored once, and
// the optimum is the one a single replay finds.
TEST(PoolEvaluator, ARunThatLosesTwoOfThreeMembersStoresEveryResultOnce) {
  struct DyingReplay : ReplayEvaluator {
    DyingReplay(const Spec& spec, size_t lives) : ReplayEvaluator(spec, kData), lives(lives) {}
    void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on) override {
      for (size_t i = 0; i < configs.size(); ++i) {
        if (measured++ == lives) throw Error::failed("cannot restart the GPU worker: no device");
        bool go = true;
        ReplayEvaluator::evaluate(configs.subspan(i, 1), [&](size_t, const Measured& m) { return go = on(i, m); });
        if (!go) return;
      }
    }
    size_t lives, measured = 0;
  };
  TempDir dir;
  const Spec spec = load_spec(kSpec);
  ReplayEvaluator one(spec, kData);
  db::Store store1(dir.file("one.db"));
  Recorder seen1;
  const tune::RunOutcome out1 = tune::run(spec, one, store1, brute_force(), seen1);

  std::vector<PoolEvaluator::MakeMember> makers;
  makers.push_back([&] { return std::make_unique<DyingReplay>(spec, 40); });
  makers.push_back([&] { return std::make_unique<ReplayEvaluator>(spec, kData); });
  makers.push_back([&] { return std::make_unique<DyingReplay>(spec, 150); });
  PoolEvaluator pool(std::move(makers));
  db::Store store(dir.file("pool.db"));
  Recorder seen;
  const tune::RunOutcome out = tune::run(spec, pool, store, brute_force(), seen);
  EXPECT_EQ(pool.stats().lost.size(), 2u);
  EXPECT_EQ(out.result.fevals, out1.result.fevals);
  EXPECT_EQ(out.result.best_score, out1.result.best_score);
  EXPECT_EQ(out.result.best_config, out1.result.best_config);
  const auto per_config = stored_per_config(store, spec);
  EXPECT_EQ(per_config.size(), stored_per_config(store1, spec).size());
  for (const auto& [key, n] : per_config) EXPECT_EQ(n, 1) << key;
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


// A stand-in GPU that measures beside a proposal as GpuEvaluator does: the
// proposal on a thread of its own, meanwhile every wanted spare (each
// "compiled" at once), one at a time; evaluate() sleeps a configuration's
// cost (its first value) in ms.
class Sparing : public Scripted {
 public:
  std::vector<Config> beside(const Beside& b) override {
    std::atomic<bool> proposing{true};
    std::future<std::vector<Config>> proposal = std::async(std::launch::async, [&] {
      struct Done {
        std::atomic<bool>& flag;
        ~Done() { flag = false; }
      } done{proposing};
      return b.propose();
    });
    bool go = true;
    for (size_t i = 0; go && proposing && i < b.spare.size(); ++i)
      if (b.wanted(b.spare[i]))
        evaluate(std::span<const std::vector<Value>>(&b.spare[i], 1), [&](size_t, const Measured& m) {
          go = b.on_measured(m);
          return go;
        });
    return proposal.get();
  }
  bool measures_beside() const override { return true; }
  void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on) override {
    for (size_t i = 0; i < configs.size(); ++i) {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(configs[i][0].as_float()));
      if (!evaluate_one(configs[i], i, on)) return;
    }
  }
};

// While the strategy proposes, every live member measures spares, each
// spare once over them; the proposal's result is the proposal.
TEST(PoolEvaluator, LiveMembersMeasureSparesWhileTheStrategyProposes) {
  std::vector<PoolEvaluator::MakeMember> makers;
  for (int i = 0; i < 3; ++i) makers.push_back([] { return std::make_unique<Sparing>(); });
  PoolEvaluator pool(std::move(makers));
  ASSERT_TRUE(pool.measures_beside());
  std::vector<std::vector<Value>> spare;
  for (int i = 0; i < 300; ++i) spare.push_back({Value(1.0 + 1e-3 * i)});
  std::mutex m;
  std::map<double, int> seen;
  std::atomic<int> inside{0};
  bool overlapped = false;
  ConfigEvaluator::Beside b;
  b.propose = [] {
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    return std::vector<Config>{Config{7}};
  };
  b.spare = spare;
  b.wanted = [](const std::vector<Value>&) { return true; };
  b.on_measured = [&](const Measured& r) {
    if (inside.fetch_add(1) != 0) overlapped = true;
    {
      std::lock_guard lock(m);
      ++seen[r.eval.config[0].as_float()];
    }
    inside.fetch_sub(1);
    return true;
  };
  const std::vector<Config> proposal = pool.beside(b);
  EXPECT_EQ(proposal, std::vector<Config>{Config{7}});
  EXPECT_FALSE(overlapped);
  // 60 ms over three members at ~1 ms a spare: far more than one member's share, none twice.
  EXPECT_GT(seen.size(), 60u);
  EXPECT_LT(seen.size(), spare.size());
  for (const auto& [cost, n] : seen) EXPECT_EQ(n, 1) << cost;
}

// As a GPU: only what it was given to compile ahead is compiled, so only
// that is measured beside a proposal.
class Planned : public Sparing {
 public:
  void compile_ahead(std::span<const std::vector<Value>> next) override {
    std::lock_guard lock(mutex_);
    queued_.assign(next.begin(), next.end());
  }
  std::vector<Config> beside(const Beside& b) override {
    std::vector<std::vector<Value>> mine;
    {
      std::lock_guard lock(mutex_);
      for (const auto& c : b.spare)
        if (std::find(queued_.begin(), queued_.end(), c) != queued_.end()) mine.push_back(c);
    }
    Beside own = b;
    own.spare = mine;
    return Sparing::beside(own);
  }

 private:
  std::mutex mutex_;
  std::vector<std::vector<Value>> queued_;
};

// What the strategy expects next reaches the members at once, each a share,
// so that while the strategy proposes with no batch between (every
// configuration of its proposals measured beside before), every member
// measures the spares it compiled.
TEST(PoolEvaluator, LiveMembersCompileTheirShareOfWhatComesNextAtOnce) {
  std::vector<PoolEvaluator::MakeMember> makers;
  for (int i = 0; i < 2; ++i) makers.push_back([] { return std::make_unique<Planned>(); });
  PoolEvaluator pool(std::move(makers));
  std::vector<std::vector<Value>> spare;
  for (int i = 0; i < 20; ++i) spare.push_back({Value(1.0 + 1e-3 * i)});
  pool.compile_ahead(spare);
  std::mutex m;
  std::map<double, int> seen;
  ConfigEvaluator::Beside b;
  b.propose = [&] {
    for (int waited = 0; waited < 2000; ++waited) {
      {
        std::lock_guard lock(m);
        if (seen.size() == spare.size()) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return std::vector<Config>{Config{7}};
  };
  b.spare = spare;
  b.wanted = [](const std::vector<Value>&) { return true; };
  b.on_measured = [&](const Measured& r) {
    std::lock_guard lock(m);
    ++seen[r.eval.config[0].as_float()];
    return true;
  };
  EXPECT_EQ(pool.beside(b), std::vector<Config>{Config{7}});
  ASSERT_EQ(seen.size(), spare.size());
  for (const auto& [cost, n] : seen) EXPECT_EQ(n, 1) << cost;
  EXPECT_NEAR(pool.stats().busy_s, 20.19, 1e-9);  // each spare's cost (1 + i / 1000), once
}

// A batch measured beside (CostOptions::workers > 1): members that have
// ended their part measure spares until the slowest has ended its own.
TEST(PoolEvaluator, LiveMembersFillABatchsTailWithSpares) {
  std::vector<PoolEvaluator::MakeMember> makers;
  for (int i = 0; i < 3; ++i) makers.push_back([] { return std::make_unique<Sparing>(); });
  PoolEvaluator pool(std::move(makers), 1);  // a configuration per take
  const auto batch = configs_costing({80, 1, 1});
  std::vector<std::vector<Value>> spare;
  for (int i = 0; i < 200; ++i) spare.push_back({Value(1.0 + 1e-3 * i)});
  std::set<size_t> batch_seen;
  std::map<double, int> spares_seen;
  ConfigEvaluator::Beside b;
  b.batch = true;
  b.propose = [&] {
    pool.evaluate(batch, [&](size_t i, const Measured&) { return batch_seen.insert(i).second; });
    return std::vector<Config>{};
  };
  b.spare = spare;
  b.wanted = [](const std::vector<Value>&) { return true; };
  b.on_measured = [&](const Measured& r) { return ++spares_seen[r.eval.config[0].as_float()] == 1; };
  EXPECT_TRUE(pool.beside(b).empty());
  EXPECT_EQ(batch_seen, (std::set<size_t>{0, 1, 2}));
  // Two members idle for ~80 ms of the slow one's: tens of spares, none twice.
  EXPECT_GT(spares_seen.size(), 40u);
  for (const auto& [cost, n] : spares_seen) EXPECT_EQ(n, 1) << cost;
}

// The whole loop on live members with spares: the default's spares measured
// beside, every configuration stored once.
TEST(PoolEvaluator, ALiveRunMeasuringBesideStoresEveryConfigurationOnce) {
  const Spec spec = load_spec(std::string(KTUNE_TEMPLATES_DIR) + "/vector_add/vector_add.yaml");
  std::vector<PoolEvaluator::MakeMember> makers;
  for (int i = 0; i < 3; ++i)
    makers.push_back([&spec] {
      struct Cheap : Sparing {
        explicit Cheap(const Spec& s) : spec(&s) {}
        const Spec* spec;
        void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on) override {
          for (size_t i = 0; i < configs.size(); ++i) {
            std::this_thread::sleep_for(std::chrono::microseconds(300));
            Measured m;
            m.eval.config = configs[i];
            m.eval.time_ms = 1.0 + double(spec->space().config_of(configs[i])->at(0) % 5);
            m.cost_s = 3e-4;
            if (!on(i, m)) return;
          }
        }
        std::vector<StaticFeatures> features(std::span<const Config> configs) override {
          std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a short list's compiles
          return std::vector<StaticFeatures>(configs.size());
        }
      };
      return std::make_unique<Cheap>(spec);
    });
  PoolEvaluator pool(std::move(makers));
  TempDir dir;
  db::Store store(dir.file("t.db"));
  tune::RunOptions o;
  o.strategy = default_strategy_name();
  o.no_prior = true;
  o.budget.time_limit_s = 1.0;
  Recorder seen;
  const tune::RunOutcome out = tune::run(spec, pool, store, o, seen);
  EXPECT_GT(out.result.beside, 0u);
  const std::map<std::string, int> stored = stored_per_config(store, spec);
  EXPECT_EQ(stored.size(), out.result.fevals);
  for (const auto& [key, n] : stored) EXPECT_EQ(n, 1) << key;
}

}  // namespace
}  // namespace ktune
