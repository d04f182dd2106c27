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

}  // namespace
