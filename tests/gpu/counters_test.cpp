// Hardware counters, roofline and energy on a GPU (docs/profiling.md).
//
// The seeds' coalescing experiment as a spec (tests/data/specs/coalescing):
// stride-1 stores cost 4 sectors per warp request, stride-2 stores 8; the
// counters land on the stored winners; the device's roofs are measured once;
// --energy stores each configuration's energy per launch.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "tests/gpu/cli_run.h"

namespace {

namespace fs = std::filesystem;
using ktune::gpu_test::ktune_binary;
using ktune::gpu_test::run;
using ktune::gpu_test::scratch_db;
using ktune::gpu_test::tests_dir;
using ktune::gpu_test::tune_summary;

std::string coalescing_spec() { return (tests_dir() / "data/specs/coalescing/coalescing.yaml").string(); }

TEST(Counters, CoalescedStoresTakeFourSectorsPerRequestStridedEight) {
  if (auto why = ktune::gpu_test::no_gpu()) GTEST_SKIP() << *why;
  const fs::path db = scratch_db("counters");
  std::string out;
  const auto j = tune_summary(coalescing_spec() + " --strategy brute_force --profile-top 4", db, out);
  ASSERT_FALSE(j.is_null()) << out;
  ASSERT_TRUE(j.contains("profile")) << j.dump();
  const auto& p = j["profile"];
  EXPECT_GT(p["limits"]["copy_gbs"].get<double>(), 100) << p.dump();
  EXPECT_GT(p["limits"]["fp32_gflops"].get<double>(), 1000) << p.dump();
  ASSERT_EQ(p["profiled"].size(), 4u) << p.dump();
  const double n = 67108864;  // the spec's n
  for (const auto& row : p["profiled"]) {
    const int stride = row["config"]["stride"].get<int>();
    const auto& c = row["counters"];
    ASSERT_FALSE(c["store_requests"].is_null()) << row.dump();
    const double per_request = c["store_sectors"].get<double>() / c["store_requests"].get<double>();
    EXPECT_NEAR(per_request, 4.0 * stride, 0.05) << row.dump();
    EXPECT_EQ(c["load_requests"].get<double>(), 0) << row.dump();  // the kernel loads nothing
    // One request per warp: n threads, 32 to a warp.
    EXPECT_NEAR(c["store_requests"].get<double>(), n / 32, n / 32 * 0.01) << row.dump();
    EXPECT_GT(c["achieved_occupancy"].get<double>(), 0) << row.dump();
    EXPECT_LE(c["achieved_occupancy"].get<double>(), row["occupancy"].get<double>() + 0.01) << row.dump();
    ASSERT_TRUE(row.contains("roofline")) << row.dump();
    EXPECT_EQ(row["roofline"]["bound"], "memory") << row.dump();
    if (stride == 1) {
      // Coalesced: DRAM writes what the kernel means to write, 4n bytes, so the
      // counters' bandwidth at ktune's time matches the spec's GB/s within 5%.
      EXPECT_NEAR(c["dram_write_bytes"].get<double>(), 4 * n, 4 * n * 0.05) << row.dump();
      const double implied = row["metrics"]["GB/s"].get<double>();
      EXPECT_NEAR(row["roofline"]["dram_gbs"].get<double>(), implied, implied * 0.05) << row.dump();
    }
  }
  // Stored with the evaluations: `results --json` shows them.
  const auto rows = nlohmann::json::parse(run(ktune_binary() + " results --json --db " + db.string()));
  int profiled = 0;
  for (const auto& r : rows)
    if (r.contains("store_sectors") && !r["store_sectors"].is_null()) ++profiled;
  EXPECT_EQ(profiled, 4) << rows.dump();
  fs::remove(db);
}

TEST(Counters, ProfileCommandAddsNamedMetricsAndKeepsRoofs) {
  if (auto why = ktune::gpu_test::no_gpu()) GTEST_SKIP() << *why;
  const fs::path db = scratch_db("profile-cmd");
  std::string out;
  ASSERT_FALSE(tune_summary(coalescing_spec() + " --strategy brute_force", db, out).is_null()) << out;
  const std::string cmd = ktune_binary() + " profile " + coalescing_spec() +
                          " --config stride=2,block_size_x=256 --metrics smsp__inst_executed.sum --json --db " +
                          db.string() + " 2>&1";
  const std::string text = run(cmd);
  const auto j = nlohmann::json::parse(text.substr(text.find('{')));
  ASSERT_EQ(j["profiled"].size(), 1u) << text;
  const auto& row = j["profiled"][0];
  ASSERT_TRUE(row["metrics"].contains("smsp__inst_executed.sum")) << text;
  EXPECT_GT(row["metrics"]["smsp__inst_executed.sum"].get<double>(), 0) << row.dump();
  EXPECT_NEAR(row["counters"]["store_sectors"].get<double>() / row["counters"]["store_requests"].get<double>(), 8,
              0.05);
  fs::remove(db);
}

TEST(Energy, EveryConfigurationGetsItsEnergyPerLaunch) {
  if (auto why = ktune::gpu_test::no_gpu()) GTEST_SKIP() << *why;
  const fs::path db = scratch_db("energy");
  std::string out;
  const auto j = tune_summary(coalescing_spec() + " --strategy brute_force --energy 400 --objective energy", db, out);
  ASSERT_FALSE(j.is_null()) << out;
  const auto rows = nlohmann::json::parse(run(ktune_binary() + " results --json --db " + db.string()));
  int with_energy = 0;
  for (const auto& r : rows) {
    if (r["status"] != "ok" || !r.contains("energy_j") || r["energy_j"].is_null()) continue;
    ++with_energy;
    // The kernel's average power while it ran back to back: a GPU's range.
    const double power = r["energy_j"].get<double>() / (r["time_ms"].get<double>() / 1000);
    EXPECT_GT(power, 20) << r.dump();
    EXPECT_LT(power, 1500) << r.dump();
    EXPECT_GT(r["metrics"]["J/GB"].get<double>(), 0) << r.dump();
  }
  if (with_energy == 0) GTEST_SKIP() << "this GPU reports no energy counter: " << out;
  EXPECT_GE(with_energy, 4);
  fs::remove(db);
}

}  // namespace
