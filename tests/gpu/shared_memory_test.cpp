// Static plus dynamic shared memory past the 48 KiB default (32 + 20 and
// 32 + 160 KiB) launches, the function's limit raised as far as the device
// allows; past what the device allows a block (32 + 200 KiB) it is `invalid`,
// never a `runtime_error`.
#include <gtest/gtest.h>

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

TEST(SharedMemory, StaticPlusDynamicPastTheDefaultLaunchesAndPastTheDeviceIsInvalid) {
  if (auto why = ktune::gpu_test::no_gpu()) GTEST_SKIP() << *why;
  const fs::path db = scratch_db("smem");
  const std::string spec = (tests_dir() / "data/specs/smem/smem.yaml").string();
  std::string out;
  const auto j = tune_summary(spec + " --strategy brute_force --max-fevals 0", db, out);
  ASSERT_FALSE(j.is_null()) << out;
  EXPECT_EQ(j["status_counts"]["ok"].get<int>(), 3) << j.dump();
  EXPECT_EQ(j["status_counts"]["invalid"].get<int>(), 1) << j.dump();
  EXPECT_FALSE(j["status_counts"].contains("runtime_error")) << j.dump();
  const auto rows = nlohmann::json::parse(run(ktune_binary() + " results --json --db " + db.string()));
  for (const auto& r : rows) {
    const int dyn = r["config"]["dyn_kib"].get<int>();
    EXPECT_EQ(r["status"], dyn == 200 ? "invalid" : "ok") << r.dump();
    if (dyn == 200) {
      EXPECT_NE(r.value("reason", std::string()).find("shared memory"), std::string::npos) << r.dump();
    }
  }
  fs::remove(db);
}

}  // namespace
