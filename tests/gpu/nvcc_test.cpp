// The nvcc backend on the GPU host: a kernel including <cub/cub.cuh> whole,
// built by nvcc in the compile workers, launched and verified like any other.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_run.h"

namespace {

namespace fs = std::filesystem;
using ktune::gpu_test::scratch_db;
using ktune::gpu_test::tests_dir;
using ktune::gpu_test::tune_summary;

TEST(NvccBackend, ACubKernelIsBuiltWithNvccAndVerifies) {
  if (auto why = ktune::gpu_test::no_gpu()) GTEST_SKIP() << *why;
  const fs::path db = scratch_db("nvcc");
  std::string out;
  const auto j = tune_summary((tests_dir() / "data/specs/nvcc/reduce.yaml").string() + " --strategy brute_force --max-fevals 0",
                              db, out);
  ASSERT_FALSE(j.is_null()) << out;
  EXPECT_EQ(j["status_counts"]["ok"].get<int>(), 4) << j.dump();
  fs::remove(db);
}

}  // namespace
