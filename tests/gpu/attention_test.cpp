// The attention templates on the GPU: every configuration of small problems whose last
// tile is partial (a sequence length and a context that are multiples of no tile), both
// head dimensions, causal or not, copied by cp.async or by TMA, and paged decode with one
// to eight query heads per KV head, runs and matches its spec's fp32 reference within the
// spec's tolerances.
#include <gtest/gtest.h>

#include "cli_run.h"

namespace {

namespace fs = std::filesystem;
using ktune::gpu_test::no_gpu;
using ktune::gpu_test::scratch_db;
using ktune::gpu_test::tests_dir;
using ktune::gpu_test::tune_summary;

std::string spec(const std::string& name) {
  return (tests_dir().parent_path() / "templates" / name).string();
}

// Tunes every configuration of SPEC with the constants set and expects each to be
// measured and verified.
void expect_every_configuration_ok(const std::string& spec_path, const std::string& sets, const fs::path& db) {
  std::string out;
  const nlohmann::json j =
      tune_summary(spec_path + " " + sets + " --strategy brute_force --max-fevals 0 --no-prior", db, out);
  ASSERT_FALSE(j.is_null()) << out;
  const int ok = j["status_counts"].value("ok", 0);
  EXPECT_GT(ok, 0) << sets << "\n" << out;
  EXPECT_EQ(j["evaluations"].get<int>(), ok) << sets << ": " << j["status_counts"].dump() << "\n" << out;
}

TEST(AttentionGpu, EveryConfigurationMatchesTheReferenceOnPartialTiles) {
  if (auto why = no_gpu()) GTEST_SKIP() << *why;
  if (ktune::gpu::probe_devices().devices[0].arch() != "sm_90") GTEST_SKIP() << "attention is written for sm_90a";
  const fs::path db = scratch_db("attention");
  for (const char* name : {"attention/attention.yaml", "attention/attention_causal.yaml"}) {
    expect_every_configuration_ok(spec(name), "--set B=2 --set H=3 --set S=1000", db);
    expect_every_configuration_ok(spec(name), "--set B=1 --set H=2 --set S=777 --set D=64", db);
  }
  fs::remove(db);
}

// The TMA variants: Q, K and V copied through 4-D tensor maps, rows past S zero-filled by
// the copies, and a (B, S, H, D) layout through the strides (the maps' strides with it).
TEST(AttentionTmaGpu, EveryConfigurationMatchesTheReferenceOnPartialTilesAndStrides) {
  if (auto why = no_gpu()) GTEST_SKIP() << *why;
  if (ktune::gpu::probe_devices().devices[0].arch() != "sm_90") GTEST_SKIP() << "attention_tma is written for sm_90a";
  const fs::path db = scratch_db("attention-tma");
  for (const char* name : {"attention_tma/attention_tma.yaml", "attention_tma/attention_tma_causal.yaml"}) {
    expect_every_configuration_ok(spec(name), "--set B=2 --set H=3 --set S=1000", db);
    expect_every_configuration_ok(spec(name), "--set B=1 --set H=2 --set S=777 --set D=64", db);
    // (B, S, H, D): position stride H * D, head stride D, batch stride S * H * D
    expect_every_configuration_ok(
        spec(name), "--set B=2 --set H=3 --set S=300 --set D=128 --set ss=384 --set sh=128 --set sb=115200", db);
  }
  fs::remove(db);
}

TEST(DecodeAttentionGpu, EveryConfigurationMatchesTheReferenceWithSplitsAndGroups) {
  if (auto why = no_gpu()) GTEST_SKIP() << *why;
  const fs::path db = scratch_db("decode-attention");
  const std::string s = spec("decode_attention/decode_attention.yaml");
  expect_every_configuration_ok(s, "--set B=3 --set ctx=1000", db);
  expect_every_configuration_ok(s, "--set B=2 --set ctx=300 --set G=8", db);
  expect_every_configuration_ok(s, "--set B=1 --set ctx=33 --set G=1", db);
  fs::remove(db);
}

}  // namespace
