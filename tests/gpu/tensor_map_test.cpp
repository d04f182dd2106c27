// Tensor-map arguments on the GPU: the TMA-fed GEMM template reads its operands only
// through the tensor maps ktune encodes from the spec, so every configuration matching
// the reference (rectangular, M != N != K, tiles that do not divide into one wave)
// shows the maps describe the buffers exactly.
#include <gtest/gtest.h>

#include "cli_run.h"

namespace {

namespace fs = std::filesystem;
using ktune::gpu_test::no_gpu;
using ktune::gpu_test::scratch_db;
using ktune::gpu_test::tests_dir;
using ktune::gpu_test::tune_summary;

TEST(TensorMapGpu, EveryTmaGemmConfigurationMatchesTheReference) {
  if (auto why = no_gpu()) GTEST_SKIP() << *why;
  if (ktune::gpu::probe_devices().devices[0].arch() != "sm_90") GTEST_SKIP() << "gemm_wgmma_tma is written for sm_90a";
  const fs::path db = scratch_db("tensor-map");
  const std::string spec = (tests_dir().parent_path() / "templates/gemm_wgmma_tma/gemm_wgmma_tma.yaml").string();
  std::string out;
  const nlohmann::json j = tune_summary(
      spec + " --set M=768 --set N=1536 --set K=320 --strategy brute_force --max-fevals 0 --no-prior", db, out);
  ASSERT_FALSE(j.is_null()) << out;
  const int ok = j["status_counts"].value("ok", 0);
  EXPECT_GT(ok, 50) << out;
  EXPECT_EQ(j["evaluations"].get<int>(), ok) << j["status_counts"].dump() << "\n" << out;
  fs::remove(db);
}

}  // namespace
