// On a GPU, `ktune tune --strategy model_rank` gets the compile features
// (tuner/tune/static_features.h) as a replay does: half of the screened spec's
// configurations do not compile, and none of them may be spent on the GPU.
#include <gtest/gtest.h>

#include <set>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.h"

namespace {

namespace fs = std::filesystem;
using ktune::gpu_test::ktune_binary;
using ktune::gpu_test::run;
using ktune::gpu_test::scratch_db;
using ktune::gpu_test::tests_dir;
using ktune::gpu_test::tune_summary;

TEST(TuneScreened, ModelRankSpendsNoGpuTimeOnWhatDoesNotCompileOrSpills) {
  if (auto why = ktune::gpu_test::no_gpu()) GTEST_SKIP() << *why;
  const fs::path db = scratch_db("screened");
  const std::string spec = (tests_dir() / "data/specs/screened/screened.yaml").string();
  // 18 of the 72 configurations compile without a stack frame; 16 evaluations.
  std::string tune;
  const auto j = tune_summary(spec + " --strategy model_rank --max-fevals 16", db, tune);
  ASSERT_FALSE(j.is_null()) << tune;
  EXPECT_EQ(j["evaluations"].get<int>(), 16);
  EXPECT_EQ(j["status_counts"]["ok"].get<int>(), 16) << j.dump();
  const auto rows = nlohmann::json::parse(run(ktune_binary() + " results --json --db " + db.string()));
  // 16 configurations, the best 3 of them measured again at the end (stored too).
  std::set<std::string> configs;
  for (const auto& r : rows) configs.insert(r["config"].dump());
  EXPECT_EQ(configs.size(), 16u);
  ASSERT_EQ(rows.size(), 19u);
  for (const auto& r : rows) {
    EXPECT_EQ(r["config"]["compiles"].get<int>(), 1) << r.dump();
    EXPECT_EQ(r["config"]["scratch"].get<int>(), 1) << r.dump();
  }
  fs::remove(db);
}

// The default under a time budget: while it proposes, the GPU measures
// what its short lists compiled clean and its spares; each configuration is
// still measured once, and the time limit holds.
TEST(TuneBeside, TheDefaultMeasuresWhileItProposesAndKeepsToTheTimeLimit) {
  if (auto why = ktune::gpu_test::no_gpu()) GTEST_SKIP() << *why;
  const fs::path db = scratch_db("beside");
  const std::string spec = (tests_dir() / "data/specs/screened/screened.yaml").string();
  std::string tune;
  const auto j = tune_summary(spec + " --max-fevals 0 --time-limit 8s --no-prior", db, tune);
  ASSERT_FALSE(j.is_null()) << tune;
  EXPECT_GT(j["measured_beside"].get<int>(), 0) << j.dump();
  EXPECT_LE(j["measured_beside"].get<int>(), j["evaluations"].get<int>());
  EXPECT_LT(j["elapsed_s"].get<double>(), 8.0 + 3.0) << j.dump();  // within one compile and measurement of the limit
  std::set<std::string> configs;
  size_t searched = 0;
  for (const auto& r : nlohmann::json::parse(run(ktune_binary() + " results --json --db " + db.string())))
    if (r.value("reason", "").rfind("re-measured", 0) != 0) {
      ++searched;
      configs.insert(r["config"].dump());
    }
  EXPECT_EQ(configs.size(), searched) << "a configuration measured twice";
  EXPECT_EQ(searched, static_cast<size_t>(j["evaluations"].get<int>()));
  fs::remove(db);
}

}  // namespace
