// A run limited to a list (tune::RunOptions::within, `ktune tune --within`):
// the strategy searches as usual, only listed configurations are measured,
// the best is the list's best and the run ends when all are measured; on
// replays of a whole recording and of a partial one.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "db/store.h"
#include "ktune/error.h"
#include "search/registry.h"
#include "test_util.h"
#include "tuner/spec/spec.h"
#include "tuner/tune/replay_evaluator.h"
#include "tuner/tune/run.h"

namespace ktune {
namespace {

using testing::TempDir;

const std::string kSpec = std::string(KTUNE_TEMPLATES_DIR) + "/vector_add/vector_add.yaml";
const std::string kData = std::string(KTUNE_EXAMPLES_DIR) + "/data/vector_add_h100.json";

struct Seen : tune::RunObserver {
  tune::RunStart start;
  std::vector<Measured> now;
  void started(const tune::RunStart& s) override { start = s; }
  void measured(const Measured& m) override { now.push_back(m); }
};

// Every fourth valid configuration of the space.
std::vector<Config> every_fourth(const SearchSpace& space) {
  std::vector<Config> out;
  for (uint64_t i = 1; i < space.count_valid(); i += 4) out.push_back(space.at(i));
  return out;
}

std::set<std::string> keys_of(const SearchSpace& space, const std::vector<Config>& configs) {
  std::set<std::string> out;
  for (const Config& c : configs) out.insert(space.config_key(c));
  return out;
}

// The recording's best objective among `keys`, computed from the recording itself.
double best_recorded(const Spec& spec, const ReplayEvaluator& replay, const std::set<std::string>& keys) {
  const double sign = spec.higher_is_better ? -1 : 1;
  double best = 1e300;
  for (const auto& [key, e] : replay.records()) {
    const std::optional<Config> c = spec.space().config_of(e.config);
    if (!c || !keys.count(spec.space().config_key(*c))) continue;
    if (const std::optional<double> v = objective_of(spec, e)) best = std::min(best, sign * *v);
  }
  return sign * best;
}

tune::RunOptions within_options(const std::string& strategy, std::vector<Config> list) {
  tune::RunOptions o;
  o.strategy = strategy;
  o.no_prior = true;
  o.within = std::move(list);
  return o;
}

TEST(Within, AStrategyMeasuresOnlyTheListAndEndsWhenAllAreMeasured) {
  TempDir dir;
  const Spec spec = load_spec(kSpec);
  const SearchSpace& space = spec.space();
  const std::vector<Config> list = every_fourth(space);
  const std::set<std::string> listed = keys_of(space, list);
  for (const std::string strategy : {"random_sample", default_strategy_name()}) {
    ReplayEvaluator replay(spec, kData);
    ASSERT_FALSE(replay.recorded_part());  // a whole recording: any configuration could be measured
    db::Store store(dir.file(strategy + ".db"));
    Seen seen;
    const tune::RunOutcome out = tune::run(spec, replay, store, within_options(strategy, list), seen);
    ASSERT_TRUE(seen.start.within) << strategy;
    EXPECT_EQ(*seen.start.within, list.size()) << strategy;
    EXPECT_EQ(seen.start.total, list.size()) << strategy;
    std::set<std::string> measured;
    for (const Measured& m : seen.now) {
      const std::optional<Config> c = space.config_of(m.eval.config);
      ASSERT_TRUE(c) << strategy;
      EXPECT_TRUE(listed.count(space.config_key(*c))) << strategy << ": " << space.config_key(*c) << " is not listed";
      EXPECT_TRUE(measured.insert(space.config_key(*c)).second) << strategy << ": " << space.config_key(*c) << " twice";
    }
    // Every listed one measured, each an evaluation; those proposed outside none.
    EXPECT_EQ(measured, listed) << strategy;
    EXPECT_EQ(out.result.fevals, list.size()) << strategy;
    EXPECT_EQ(out.result.stop, StopReason::SpaceExhausted) << strategy;
    // Random picks land outside the list; the default's short lists read
    // unlisted configurations as not compiled, so it may propose none there.
    if (strategy == "random_sample") {
      EXPECT_GT(out.not_within, 0u) << strategy;
    }
    EXPECT_EQ(out.not_within, out.result.not_recorded) << strategy;
    ASSERT_TRUE(out.result.best_score) << strategy;
    EXPECT_DOUBLE_EQ(*out.result.best_score, best_recorded(spec, replay, listed)) << strategy;
  }
}

// A budget counts only listed configurations, and what the store holds
// outside the list is not reused.
TEST(Within, TheBudgetIsSpentOnTheListOnly) {
  TempDir dir;
  const Spec spec = load_spec(kSpec);
  const SearchSpace& space = spec.space();
  const std::vector<Config> list = every_fourth(space);
  const std::set<std::string> listed = keys_of(space, list);
  ReplayEvaluator replay(spec, kData);
  db::Store store(dir.file("t.db"));
  tune::RunOptions whole;
  whole.strategy = "random_sample";
  whole.no_prior = true;
  whole.budget.max_fevals = 40;
  Seen first;
  tune::run(spec, replay, store, whole, first);  // the store now holds 40, most of them not listed
  tune::RunOptions o = within_options("random_sample", list);
  o.budget.max_fevals = 20;
  o.seed = 7;
  Seen seen;
  const tune::RunOutcome out = tune::run(spec, replay, store, o, seen);
  EXPECT_EQ(out.result.fevals, 20u);
  EXPECT_EQ(seen.start.total, 20u);
  size_t held = 0;  // of the first run's, the listed ones
  for (const Measured& m : first.now) held += listed.count(space.config_key(*space.config_of(m.eval.config)));
  ASSERT_LT(held, first.now.size());
  EXPECT_EQ(seen.start.reusable, held);
  for (const TraceEntry& t : out.result.trace) EXPECT_TRUE(listed.count(space.config_key(t.config))) << space.config_key(t.config);
}

// A partial recording and a list: the strategy keeps to both.
TEST(Within, APartialRecordingKeepsToTheRecordedPartOfTheList) {
  TempDir dir;
  const Spec spec = load_spec(kSpec);
  const SearchSpace& space = spec.space();
  std::ifstream in(kData);
  nlohmann::json cache = nlohmann::json::parse(in);
  nlohmann::json part = nlohmann::json::object();
  for (auto it = cache["cache"].begin(); it != cache["cache"].end() && part.size() < 120; ++it)
    part[it.key()] = it.value();
  cache["cache"] = part;
  const std::string partial = dir.file("partial.json");
  std::ofstream(partial) << cache.dump();

  ReplayEvaluator replay(spec, partial);
  const std::optional<RecordedData::RecordedPart> recorded = replay.recorded_part();
  ASSERT_TRUE(recorded);
  const std::vector<Config> list = every_fourth(space);
  std::set<std::string> both;
  for (const Config& c : list)
    if (recorded->holds(c)) both.insert(space.config_key(c));
  ASSERT_FALSE(both.empty());
  ASSERT_LT(both.size(), list.size());
  db::Store store(dir.file("t.db"));
  Seen seen;
  const tune::RunOutcome out = tune::run(spec, replay, store, within_options("random_sample", list), seen);
  ASSERT_TRUE(seen.start.within);
  EXPECT_EQ(*seen.start.within, both.size());
  ASSERT_TRUE(seen.start.partial);
  std::set<std::string> measured;
  for (const Measured& m : seen.now) measured.insert(space.config_key(*space.config_of(m.eval.config)));
  EXPECT_EQ(measured, both);
  EXPECT_EQ(out.result.stop, StopReason::SpaceExhausted);
  // Of the proposals answered as unavailable, those outside the list are told apart.
  EXPECT_GT(out.result.not_recorded, out.not_within);
  EXPECT_DOUBLE_EQ(*out.result.best_score, best_recorded(spec, replay, both));
}

TEST(Within, AListToMeasureAndOneToSearchWithinAreRefused) {
  TempDir dir;
  const Spec spec = load_spec(kSpec);
  ReplayEvaluator replay(spec, kData);
  db::Store store(dir.file("t.db"));
  tune::RunOptions o = within_options("random_sample", every_fourth(spec.space()));
  o.listed = {spec.space().at(0)};
  Seen seen;
  try {
    tune::run(spec, replay, store, o, seen);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::BadInput);
    EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();  // no command-line flag
  }
}

// The command line: --within FILE, read as --configs reads it.
TEST(Within, TheCommandLineSearchesWithinAFileAndRefusesABadOne) {
  TempDir dir;
  const std::string db = dir.file("x.db"), list = dir.file("list.json"), bad = dir.file("bad.json");
  std::ofstream(list) << R"([{"block_size_x": 128, "items_per_thread": 4, "vector_width": 1, "unroll": 0, "grid_stride": 0},
    {"block_size_x": 256, "items_per_thread": 2, "vector_width": 2, "unroll": 1, "grid_stride": 1},
    {"block_size_x": 512, "items_per_thread": 2, "vector_width": 4, "unroll": 0, "grid_stride": 1},
    {"block_size_x": 1024, "items_per_thread": 16, "vector_width": 4, "unroll": 0, "grid_stride": 0}])";
  const std::string run = "tune " + kSpec + " --simulate " + kData + " --db " + db;
  const testing::Ran r = testing::run_ktune(run + " --strategy random_sample --within " + list + " --json", true);
  ASSERT_EQ(r.status, 0) << r.out;
  // The last breaks the spec's restrictions (items_per_thread * vector_width <= 32): left out, with a note.
  EXPECT_NE(r.out.find("1 of the configurations in " + list + " break the spec's restrictions"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("searching among the 3 configurations listed in"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out.substr(r.out.find("{\n")));
  EXPECT_EQ(j["evaluations"].get<int>(), 3);
  EXPECT_EQ(j["stop"].get<std::string>(), "space_exhausted");
  EXPECT_EQ(j["within"]["configurations"].get<int>(), 3);
  EXPECT_EQ(j["missing_from_data"].get<int>(), 0);
  const nlohmann::json rows = nlohmann::json::parse(testing::run_ktune("results --json --db " + db, false).out);
  std::set<int64_t> blocks;
  for (const nlohmann::json& row : rows) blocks.insert(row["config"]["block_size_x"].get<int64_t>());
  EXPECT_EQ(blocks, (std::set<int64_t>{128, 256, 512}));

  const std::pair<std::string, std::string> cases[] = {
      {R"([{"block_size_x": 256}])", "configuration 1: no value for parameter 'items_per_thread'"},
      {R"([{"block_size_x": 48, "items_per_thread": 1, "vector_width": 1, "unroll": 0, "grid_stride": 0}])",
       "not in its parameter's list"},
      {R"({"block_size_x": 48})", "expected a JSON list"},
      {"[", "not JSON"},
  };
  for (const auto& [text, words] : cases) {
    std::ofstream(bad) << text;
    const testing::Ran b = testing::run_ktune(run + " --within " + bad, true);
    EXPECT_EQ(b.status, 2) << text;
    EXPECT_NE(b.out.find("--within: " + bad), std::string::npos) << b.out;
    EXPECT_NE(b.out.find(words), std::string::npos) << b.out;
  }
  // With a list to measure in place of a strategy: a usage error.
  EXPECT_EQ(testing::run_ktune(run + " --within " + list + " --configs " + list, true).status, 2);
  EXPECT_EQ(testing::run_ktune(run + " --within " + list + " --configs-from H100", true).status, 2);
}


// The strategy's short lists compile only listed configurations: one outside
// the list reads as not compiled, without a compile.
TEST(Within, ShortListsCompileOnlyListedConfigurations) {
  TempDir dir;
  const Spec spec = load_spec(kSpec);
  const SearchSpace& space = spec.space();
  const std::vector<Config> list = every_fourth(space);
  const std::set<std::string> listed = keys_of(space, list);
  struct Asking : ReplayEvaluator {
    using ReplayEvaluator::ReplayEvaluator;
    std::vector<Config> asked;
    std::vector<StaticFeatures> features(std::span<const Config> configs) override {
      asked.insert(asked.end(), configs.begin(), configs.end());
      return ReplayEvaluator::features(configs);
    }
  };
  Asking replay(spec, kData);
  db::Store store(dir.file("t.db"));
  Seen seen;
  tune::run(spec, replay, store, within_options(default_strategy_name(), list), seen);
  ASSERT_FALSE(replay.asked.empty());  // the default asks for short lists
  for (const Config& c : replay.asked) EXPECT_TRUE(listed.count(space.config_key(c))) << space.config_key(c);
}

}  // namespace
}  // namespace ktune
