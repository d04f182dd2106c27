// A whole `ktune tune` run over deliberately broken configurations (out-of-
// bounds write, a kernel that never returns, a wrong element) must finish,
// record every failure with its status and reason, and pick a correct winner.
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

TEST(TuneBroken, RunFinishesRecordsEveryFailureAndPicksACorrectWinner) {
  if (auto why = ktune::gpu_test::no_gpu()) GTEST_SKIP() << *why;
  const fs::path db = scratch_db("broken");
  const std::string spec = (tests_dir() / "data/specs/broken/broken.yaml").string();
  std::string tune;
  const auto j = tune_summary(spec + " --strategy brute_force --max-fevals 0 --timeout 2", db, tune);
  ASSERT_FALSE(j.is_null()) << tune;
  EXPECT_EQ(j["evaluations"].get<int>(), 12);
  EXPECT_EQ(j["status_counts"]["ok"].get<int>(), 3) << j.dump();
  EXPECT_EQ(j["status_counts"]["runtime_error"].get<int>(), 3) << j.dump();
  EXPECT_EQ(j["status_counts"]["timeout"].get<int>(), 3) << j.dump();
  EXPECT_EQ(j["status_counts"]["wrong_result"].get<int>(), 3) << j.dump();
  EXPECT_EQ(j["best"][0]["config"]["fault_mode"].get<int>(), 0);
  const auto rows = nlohmann::json::parse(run(ktune_binary() + " results --json --db " + db.string()));
  // Each configuration once, and the best three (the ok ones) again: the
  // final interleaved re-measure is stored too.
  std::set<std::string> configs;
  int remeasured = 0;
  for (const auto& r : rows) {
    configs.insert(r["config"].dump());
    if (r.value("reason", std::string()).starts_with("re-measured")) {
      ++remeasured;
      EXPECT_EQ(r["status"], "ok") << r.dump();
      EXPECT_EQ(r["config"]["fault_mode"].get<int>(), 0) << r.dump();
    }
  }
  EXPECT_EQ(configs.size(), 12u);
  EXPECT_EQ(remeasured, 3);
  ASSERT_EQ(rows.size(), 15u);
  for (const auto& r : rows) {
    std::printf("%s %s %s\n", r["config"].dump().c_str(), r["status"].get<std::string>().c_str(),
                r.value("reason", std::string()).c_str());
    if (r["status"] != "ok") {
      EXPECT_FALSE(r.value("reason", std::string()).empty()) << r.dump();
    }
  }
  fs::remove(db);
}

}  // namespace
