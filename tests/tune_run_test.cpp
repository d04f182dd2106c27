// tune::run driven in-process: the whole loop (strategy, cost layer,
// evaluator, store, observer) with the replay evaluator on a recorded dataset,
// and with a deterministic in-memory evaluator that can measure again.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "db/store.h"
#include "ktune/error.h"
#include "search/expr/cancel.h"
#include "search/registry.h"
#include "test_util.h"
#include "tuner/cli/print/tune_report.h"
#include "tuner/spec/spec.h"
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

const std::string kSpec = std::string(KTUNE_TEMPLATES_DIR) + "/triad/triad.yaml";
const std::string kData = std::string(KTUNE_EXAMPLES_DIR) + "/data/triad_h100.json";

// Records what the run told it, in order.
struct Recorder : tune::RunObserver {
  std::vector<std::string> events;
  tune::RunStart start;
  std::vector<Measured> measured_now, remeasured_now;
  std::vector<db::Evaluation> reused_now;
  void started(const tune::RunStart& s) override {
    start = s;
    events.push_back("started");
  }
  void measured(const Measured& m) override {
    measured_now.push_back(m);
    events.push_back("measured");
  }
  void reused(const db::Evaluation& e) override {
    reused_now.push_back(e);
    events.push_back("reused");
  }
  void remeasured(const Measured& m) override {
    remeasured_now.push_back(m);
    events.push_back("remeasured");
  }
};

TEST(TuneRun, ReplaysAWholeSpaceStoresEachConfigurationOnceAndFindsTheRecordedOptimum) {
  TempDir dir;
  const Spec spec = load_spec(kSpec);
  ReplayEvaluator replay(spec, kData);
  db::Store store(dir.file("t.db"));
  tune::RunOptions o;
  o.strategy = "brute_force";
  o.no_prior = true;
  Recorder seen;
  const tune::RunOutcome out = tune::run(spec, replay, store, o, seen);

  EXPECT_FALSE(out.interrupted);
  EXPECT_EQ(seen.events.front(), "started");
  EXPECT_TRUE(seen.start.replay);
  EXPECT_EQ(seen.start.total, spec.space().count_valid());
  EXPECT_EQ(seen.measured_now.size(), spec.space().count_valid());
  EXPECT_TRUE(seen.remeasured_now.empty());  // a replay cannot measure again

  // The recorded optimum, computed here from the recording itself.
  double best_recorded = 1e300;
  for (const auto& [key, e] : replay.records())
    if (e.status == db::Status::Ok && e.time_ms && spec.space().config_of(e.config))
      best_recorded = std::min(best_recorded, *objective_of(spec, e) * (spec.higher_is_better ? -1 : 1));
  ASSERT_TRUE(out.result.best_score);
  EXPECT_DOUBLE_EQ(*out.result.best_score * (spec.higher_is_better ? -1 : 1), best_recorded);

  db::Filter all;
  all.kernel = spec.kernel.name;
  const auto rows = store.results(all);
  EXPECT_EQ(rows.size(), spec.space().count_valid());
  std::map<std::string, int> per_key;
  for (const auto& r : rows) ++per_key[r.config_key];
  for (const auto& [key, n] : per_key) EXPECT_EQ(n, 1) << key;

  // Run again on the same store: everything is reused, nothing is evaluated.
  Recorder again;
  const tune::RunOutcome second = tune::run(spec, replay, store, o, again);
  EXPECT_EQ(again.start.reusable, spec.space().count_valid());
  EXPECT_TRUE(again.measured_now.empty());
  EXPECT_EQ(again.reused_now.size(), spec.space().count_valid());
  EXPECT_EQ(second.result.best_score, out.result.best_score);
  EXPECT_EQ(store.results(all).size(), rows.size());
}

// The spec's budget comes from the library, for any caller of tune::run.
TEST(TuneRun, TheSpecsBudgetIsItsStrategySections) {
  Spec spec = load_spec(kSpec);
  spec.strategy.max_fevals = 7;
  spec.strategy.time_limit_s = 30;
  Budget b = tune::spec_budget(spec);
  EXPECT_EQ(b.max_fevals, 7u);
  EXPECT_EQ(b.time_limit_s, 30);
  spec.strategy.max_fraction = 0.5;  // a fraction of the valid space wins over a count
  EXPECT_EQ(tune::spec_budget(spec).max_fevals, uint64_t(0.5 * spec.space().count_valid()));
  spec.strategy.max_fraction = 1e-12;
  EXPECT_EQ(tune::spec_budget(spec).max_fevals, 1u);
}

TEST(TuneRun, TheBatchSizeIsTheStrategysOwn) {
  TempDir dir;
  const Spec spec = load_spec(kSpec);
  // Counts the configurations the run hands over per call.
  struct Counting : ReplayEvaluator {
    using ReplayEvaluator::ReplayEvaluator;
    std::vector<size_t> batches;
    void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on) override {
      batches.push_back(configs.size());
      ReplayEvaluator::evaluate(configs, on);
    }
  };
  for (const auto& [strategy, batch] : std::map<std::string, size_t>{{"brute_force", 64}, {"random_sample", 64},
                                                                      {"mls", 8}}) {
    Counting replay(spec, kData);
    db::Store store(dir.file(strategy + ".db"));
    tune::RunOptions o;
    o.strategy = strategy;
    o.no_prior = true;
    o.budget.max_fevals = 100;
    Recorder seen;
    tune::run(spec, replay, store, o, seen);
    ASSERT_FALSE(replay.batches.empty()) << strategy;
    EXPECT_EQ(*std::max_element(replay.batches.begin(), replay.batches.end()), batch) << strategy;
  }
}

// A GPU stand-in: times from a formula, and a re-measure that answers each
// configuration 10% slower than first measured (as a lucky first sample would).
class FormulaEvaluator : public ConfigEvaluator, public CompileFeatures, public Remeasurer {
 public:
  explicit FormulaEvaluator(const Spec& spec) : spec_(&spec) {}
  db::DeviceInfo device() const override {
    db::DeviceInfo d;
    d.name = "Formula GPU";
    d.cc_major = 9;
    return d;
  }
  void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on) override {
    for (size_t i = 0; i < configs.size(); ++i)
      if (!on(i, measure(configs[i], 1.0))) return;
  }
  std::string source() const override { return "formula"; }
  Offers offers() override { return {.features = this, .remeasurer = this}; }
  std::vector<StaticFeatures> features(std::span<const Config> configs) override {
    return std::vector<StaticFeatures>(configs.size());
  }
  std::vector<Measured> remeasure(std::span<const std::vector<Value>> configs, int rounds) override {
    rounds_ = rounds;
    std::vector<Measured> out;
    for (const auto& c : configs) out.push_back(measure(c, 1.1));
    return out;
  }
  int rounds_ = 0;

 private:
  Measured measure(const std::vector<Value>& config, double factor) const {
    Measured m;
    m.eval.config = config;
    double t = 1;
    for (const Value& v : config) t += 0.001 * v.as_float();
    m.eval.time_ms = t * factor;
    m.eval.samples = {t * factor};
    m.eval.complete_stats();
    const auto metrics = spec_->evaluate_metrics(config, t * factor);
    for (size_t i = 0; i < metrics.size(); ++i)
      if (metrics[i]) m.eval.metrics[spec_->metrics[i].name] = *metrics[i];
    m.cost_s = 0.001;
    return m;
  }
  const Spec* spec_;
};

// The run asks a runner only for what it offers: one that offers nothing
// beyond evaluating gives the strategy no compile features and the run no
// final re-measure.
TEST(TuneRun, ARunnerIsAskedOnlyForWhatItOffers) {
  struct Offering : FormulaEvaluator {
    Offering(const Spec& spec, bool offer) : FormulaEvaluator(spec), offer(offer) {}
    bool offer;
    size_t asked = 0;
    std::vector<StaticFeatures> features(std::span<const Config> configs) override {
      asked += configs.size();
      return FormulaEvaluator::features(configs);
    }
    Offers offers() override { return offer ? FormulaEvaluator::offers() : Offers{}; }
  };
  TempDir dir;
  const Spec spec = load_spec(kSpec);
  for (const bool offer : {true, false}) {
    Offering gpu(spec, offer);
    db::Store store(dir.file(offer ? "offering.db" : "bare.db"));
    tune::RunOptions o;
    o.strategy = default_strategy_name();
    o.no_prior = true;
    o.budget.max_fevals = 40;
    Recorder seen;
    const tune::RunOutcome out = tune::run(spec, gpu, store, o, seen);
    EXPECT_EQ(out.result.fevals, 40u) << offer;
    EXPECT_EQ(gpu.asked > 0, offer);
    EXPECT_EQ(gpu.rounds_, offer ? 3 : 0);
    EXPECT_EQ(seen.remeasured_now.size(), offer ? 3u : 0u);
  }
}

TEST(TuneRun, TheFinalReMeasureIsStoredAndObserved) {
  TempDir dir;
  const Spec spec = load_spec(kSpec);
  FormulaEvaluator gpu(spec);
  db::Store store(dir.file("t.db"));
  tune::RunOptions o;
  o.strategy = "random_sample";
  o.no_prior = true;
  o.budget.max_fevals = 40;
  Recorder seen;
  const tune::RunOutcome out = tune::run(spec, gpu, store, o, seen);

  EXPECT_EQ(gpu.rounds_, 3);
  ASSERT_EQ(seen.remeasured_now.size(), 3u);
  EXPECT_EQ(seen.events.back(), "remeasured");
  // The re-measured are the three best of the run, by the spec's objective.
  std::vector<db::Evaluation> first;
  for (const Measured& m : seen.measured_now) first.push_back(m.eval);
  const auto ranked = rank_results(spec, first);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(seen.remeasured_now[i].eval.config, ranked[i]->config);

  // Stored in the run: the store now holds both measurements of each of the three.
  db::Filter f;
  f.run_id = out.run_id;
  const auto rows = store.results(f);
  EXPECT_EQ(rows.size(), seen.measured_now.size() + 3);
  for (const Measured& m : seen.remeasured_now) {
    int n = 0;
    for (const auto& r : rows)
      if (r.eval.config == m.eval.config) ++n;
    EXPECT_EQ(n, 2);
  }
}

// What `tune --json` prints for a run interrupted after `n` evaluations:
// the command line's report, with a cancel requested (as Ctrl-C requests it)
// once it has seen the n-th.
struct InterruptingReport : TuneReport {
  InterruptingReport(const Spec& spec, Cancel& cancel, size_t n) : TuneReport(spec, false), cancel_(&cancel), n_(n) {}
  void measured(const Measured& m) override {
    TuneReport::measured(m);
    if (++seen_ == n_) cancel_->request();
  }
  Cancel* cancel_;
  size_t n_, seen_ = 0;
};

TEST(TuneRun, AReplayInterruptedAfterNEvaluationsStoresThemAndSummarisesThem) {
  TempDir dir;
  const Spec spec = load_spec(kSpec);
  ReplayEvaluator replay(spec, kData);
  db::Store store(dir.file("t.db"));
  Cancel cancel;
  tune::RunOptions o;
  o.strategy = "brute_force";  // batches of 64: the cancel comes inside the first
  o.no_prior = true;
  o.cancel = cancel.token();
  InterruptingReport report(spec, cancel, 10);
  const tune::RunOutcome out = tune::run(spec, replay, store, o, report);

  EXPECT_TRUE(out.interrupted);
  EXPECT_EQ(out.result.stop, StopReason::Interrupted);
  EXPECT_EQ(out.result.fevals, 10u);
  db::Filter f;
  f.run_id = out.run_id;
  EXPECT_EQ(store.results(f).size(), 10u);

  ::testing::internal::CaptureStdout();
  report.finish(out, true, 3);
  const nlohmann::json j = nlohmann::json::parse(::testing::internal::GetCapturedStdout());
  EXPECT_TRUE(j.at("interrupted").get<bool>());
  EXPECT_EQ(j.at("stop"), "interrupted");
  EXPECT_EQ(j.at("evaluations"), 10);
  EXPECT_EQ(j.at("best").size(), 3u);

  // The plain summary says so too.
  ::testing::internal::CaptureStdout();
  report.finish(out, false, 3);
  EXPECT_NE(::testing::internal::GetCapturedStdout().find("stopped: interrupted; 10 replayed"), std::string::npos);
}

// A run that was not interrupted has no "interrupted" member: its summary is
// what it was before cancellation existed.
TEST(TuneRun, AnUninterruptedSummaryHasNoInterruptedMember) {
  TempDir dir;
  const Spec spec = load_spec(kSpec);
  ReplayEvaluator replay(spec, kData);
  db::Store store(dir.file("t.db"));
  tune::RunOptions o;
  o.strategy = "brute_force";
  o.no_prior = true;
  o.budget.max_fevals = 10;
  TuneReport report(spec, false);
  const tune::RunOutcome out = tune::run(spec, replay, store, o, report);
  EXPECT_FALSE(out.interrupted);
  ::testing::internal::CaptureStdout();
  report.finish(out, true, 3);
  const nlohmann::json j = nlohmann::json::parse(::testing::internal::GetCapturedStdout());
  EXPECT_FALSE(j.contains("interrupted"));
  EXPECT_EQ(j.at("stop"), "max_fevals");
}

// An evaluator that fails for real once a cancel is requested: the run ends
// with that error, not as an interruption.
TEST(TuneRun, AnErrorAfterTheCancelIsThatError) {
  TempDir dir;
  const Spec spec = load_spec(kSpec);
  struct Failing : FormulaEvaluator {
    Failing(const Spec& spec, Cancel& cancel) : FormulaEvaluator(spec), cancel_(&cancel) {}
    void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on) override {
      FormulaEvaluator::evaluate(configs.first(1), on);
      cancel_->request();
      throw Error::failed("the GPU fell off the bus");
    }
    Cancel* cancel_;
  };
  Cancel cancel;
  Failing gpu(spec, cancel);
  db::Store store(dir.file("t.db"));
  tune::RunOptions o;
  o.strategy = "random_sample";
  o.no_prior = true;
  o.cancel = cancel.token();
  Recorder seen;
  try {
    tune::run(spec, gpu, store, o, seen);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "the GPU fell off the bus");
  }
  EXPECT_EQ(seen.measured_now.size(), 1u);
}

// A job abandoned on the cancel (the GPU evaluator throws Cancelled) ends the
// run normally, with what finished stored and no re-measure.
TEST(TuneRun, ACancelledEvaluationEndsTheRunWithWhatFinished) {
  TempDir dir;
  const Spec spec = load_spec(kSpec);
  struct Abandoning : FormulaEvaluator {
    Abandoning(const Spec& spec, Cancel& cancel) : FormulaEvaluator(spec), cancel_(&cancel) {}
    void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on) override {
      if (++batches_ < 3) return FormulaEvaluator::evaluate(configs, on);
      cancel_->request();
      throw Cancelled{};
    }
    Cancel* cancel_;
    int batches_ = 0;
  };
  Cancel cancel;
  Abandoning gpu(spec, cancel);
  db::Store store(dir.file("t.db"));
  tune::RunOptions o;
  o.strategy = "random_sample";
  o.no_prior = true;
  o.batch = 5;
  o.cancel = cancel.token();
  Recorder seen;
  const tune::RunOutcome out = tune::run(spec, gpu, store, o, seen);
  EXPECT_TRUE(out.interrupted);
  EXPECT_EQ(out.result.stop, StopReason::Interrupted);
  EXPECT_EQ(out.result.fevals, 10u);
  EXPECT_EQ(gpu.rounds_, 0);  // no re-measure
  db::Filter f;
  f.run_id = out.run_id;
  EXPECT_EQ(store.results(f).size(), 10u);
}

}  // namespace
}  // namespace ktune
