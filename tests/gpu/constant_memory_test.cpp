// __constant__ arrays filled from the spec: a kernel and its reference read the
// same taps from constant memory and every configuration verifies; a misnamed
// array makes each configuration invalid with the reason, none runs on zeros.
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

TEST(ConstantMemory, TheKernelAndItsReferenceReadTheSpecsData) {
  if (auto why = ktune::gpu_test::no_gpu()) GTEST_SKIP() << *why;
  const fs::path db = scratch_db("cmem");
  std::string out;
  const auto j = tune_summary((tests_dir() / "data/specs/cmem/cmem.yaml").string() + " --strategy brute_force --max-fevals 0",
                              db, out);
  ASSERT_FALSE(j.is_null()) << out;
  EXPECT_EQ(j["status_counts"]["ok"].get<int>(), 9) << j.dump();
  fs::remove(db);

  const fs::path db2 = scratch_db("cmem-misnamed");
  const auto k = tune_summary(
      (tests_dir() / "data/specs/cmem/cmem_misnamed.yaml").string() + " --strategy brute_force --max-fevals 0", db2, out);
  ASSERT_FALSE(k.is_null()) << out;
  EXPECT_EQ(k["status_counts"]["invalid"].get<int>(), 9) << k.dump();
  const auto rows = nlohmann::json::parse(run(ktune_binary() + " results --json --db " + db2.string()));
  ASSERT_FALSE(rows.empty());
  EXPECT_NE(rows[0].value("reason", std::string()).find("no __constant__ array 'weightz'"), std::string::npos)
      << rows[0].dump();
  fs::remove(db2);
}

}  // namespace
