// One run over several GPU workers (`ktune tune --gpus`): on a host with one
// GPU, `--gpus 0,0` is two workers on it, each with its own worker process.
// Every configuration is measured once, by one of them, verified against the
// reference kernel, and stored once.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
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

TEST(TunePool, TwoWorkersOnOneGpuStoreEachConfigurationOnceVerified) {
  if (auto why = ktune::gpu_test::no_gpu()) GTEST_SKIP() << *why;
  const fs::path db = scratch_db("pool");
  const std::string spec = (tests_dir().parent_path() / "templates/triad/triad.yaml").string();
  std::string out;
  const auto j = tune_summary(spec + " --gpus 0,0 --strategy brute_force --max-fevals 96 --no-prior", db, out);
  ASSERT_FALSE(j.is_null()) << out;
  EXPECT_EQ(j["workers"].get<int>(), 2) << out;
  EXPECT_FALSE(j["replay"].get<bool>());
  EXPECT_EQ(j["evaluations"].get<int>(), 96) << out;
  EXPECT_EQ(j["status_counts"]["ok"].get<int>(), 96) << j.dump();  // triad's references verify every one
  EXPECT_EQ(j["source"].get<std::string>().find("GPU 0"), 0u);
  EXPECT_NE(j["source"].get<std::string>().find("; GPU 0"), std::string::npos) << j["source"];
  ASSERT_TRUE(j.contains("parallel")) << j.dump();
  EXPECT_GT(j["parallel"]["busy_s"].get<double>(), 0);

  // Stored once each; the best three measured again at the end are the only second rows.
  const auto rows = nlohmann::json::parse(run(ktune_binary() + " results --json --db " + db.string()));
  std::map<std::string, int> first, again;
  for (const auto& r : rows) {
    EXPECT_EQ(r["status"], "ok") << r.dump();
    const std::string reason = r.value("reason", "");
    (reason.rfind("re-measured", 0) == 0 ? again : first)[r["config"].dump()]++;
  }
  EXPECT_EQ(first.size(), 96u);
  for (const auto& [config, n] : first) EXPECT_EQ(n, 1) << config;
  EXPECT_EQ(again.size(), 3u);
  for (const auto& [config, n] : again) EXPECT_TRUE(first.count(config)) << config;
  fs::remove(db);
}

// `--gpus all` is every GPU the driver sees, of one model; a bad list is bad input.
TEST(TunePool, AllIsEveryGpuAndABadListIsRefused) {
  if (auto why = ktune::gpu_test::no_gpu()) GTEST_SKIP() << *why;
  const fs::path db = scratch_db("pool-all");
  const std::string spec = (tests_dir().parent_path() / "templates/triad/triad.yaml").string();
  const auto devices = nlohmann::json::parse(run(ktune_binary() + " devices --json"));
  std::string out;
  const auto j = tune_summary(spec + " --gpus all --strategy random_sample --max-fevals 8 --no-prior", db, out);
  ASSERT_FALSE(j.is_null()) << out;
  ASSERT_TRUE(devices.contains("devices")) << devices.dump();
  EXPECT_EQ(j["workers"].get<size_t>(), devices["devices"].size()) << out;
  const std::string bad = run(ktune_binary() + " tune " + spec + " --gpus 0,x --db " + db.string() +
                              " >/dev/null 2>&1; echo $?");
  EXPECT_EQ(bad, "2\n");
  fs::remove(db);
}

}  // namespace
