// The compile features a tuning run on a GPU gives the strategies
// (tuner/tune/static_features.h): compiled through NVRTC here, no GPU needed, and
// the same figures `ktune compile` reports and a measurement stores.
#include <gtest/gtest.h>

#include <vector>

#include "test_util.h"
#include "tuner/compile/pool.h"
#include "tuner/tune/static_features.h"

namespace ktune {
namespace {

using testing::TempDir;

TEST(StaticFeatures, CompiledInOneBatchForTheStrategies) {
  const Spec spec = load_spec(std::string(KTUNE_TESTS_DIR) + "/data/specs/screened/screened.yaml");
  const SearchSpace& space = spec.space();
  TempDir cache;
  CompilePoolOptions po;
  po.workers = 2;
  po.compiler.cache_dir = cache.path();
  CompilePool pool(po);
  std::vector<Config> configs;
  for (uint64_t i = 0; i < space.count_valid(); ++i) configs.push_back(space.at(i));
  const std::vector<StaticFeatures> f = compile_features(spec, Arch(90), pool, configs);
  ASSERT_EQ(f.size(), configs.size());
  int compiled = 0;
  for (size_t i = 0; i < configs.size(); ++i) {
    const std::vector<Value> v = space.values(configs[i]);
    const auto value = [&](const char* name) {
      for (size_t p = 0; p < space.parameters().size(); ++p)
        if (space.parameters()[p].name == name) return v[p].as_int();
      ADD_FAILURE() << name;
      return int64_t{0};
    };
    const std::string key = space.config_key(configs[i]);
    EXPECT_EQ(f[i].compiled, value("compiles") == 1) << key;
    if (!f[i].compiled) continue;
    ++compiled;
    EXPECT_GT(f[i].registers, 0) << key;
    // The dynamically indexed 64-float array lives in local memory.
    EXPECT_EQ(f[i].spill_bytes > 0, value("scratch") == 64) << key;
    EXPECT_GT(f[i].occupancy, 0) << key;
    EXPECT_LE(f[i].occupancy, 1) << key;
  }
  EXPECT_EQ(compiled, 36);
  // Asked again: the same answers, now from the cubin cache.
  const std::vector<StaticFeatures> again = compile_features(spec, Arch(90), pool, configs);
  for (size_t i = 0; i < configs.size(); ++i) {
    EXPECT_EQ(again[i].compiled, f[i].compiled);
    EXPECT_EQ(again[i].registers, f[i].registers);
    EXPECT_EQ(again[i].spill_bytes, f[i].spill_bytes);
    EXPECT_EQ(again[i].occupancy, f[i].occupancy);
  }
}

// A compile that never ends (the test seam of tests/main.cpp hangs the
// child) does not hold the request up: once the other has ended and the
// straggler rule's patience has passed, it is answered as pending (not known
// yet), not as a failure to compile, and it is left compiling.
TEST(StaticFeatures, AStragglerIsAnsweredAsNotKnownYet) {
  testing::ScopedEnv in_process("KTUNE_COMPILE_IN_PROCESS", nullptr);
  testing::ScopedEnv hang("KTUNE_COMPILE_TEST_HANG", "block_size_x=1024");
  const Spec spec = load_spec(std::string(KTUNE_TESTS_DIR) + "/data/specs/screened/screened.yaml");
  const SearchSpace& space = spec.space();
  TempDir cache;
  CompilePoolOptions po;
  po.workers = 4;
  po.compiler.cache_dir = cache.path();
  CompilePool pool(po);
  // compiles 1, scratch 1, unroll 1: a block size that compiles, and 1024
  // that hangs. One that compiles, so that no timing decides: the request
  // waits for it (nothing has ended before it), then not for the other.
  std::vector<Config> configs, hanging;
  for (uint64_t i = 0; i < space.count_valid(); ++i) {
    const std::vector<Value> v = space.values(space.at(i));
    if (v[0].as_int() != 1 || v[1].as_int() != 1 || v[3].as_int() != 1) continue;
    if (v[2].as_int() == 1024) hanging.push_back(space.at(i));
    else if (configs.empty()) configs.push_back(space.at(i));
  }
  ASSERT_EQ(hanging.size(), 1u);
  configs.push_back(hanging[0]);
  ASSERT_EQ(configs.size(), 2u);
  const std::vector<StaticFeatures> f = compile_features(spec, Arch(90), pool, configs);
  ASSERT_EQ(f.size(), configs.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    const bool hangs = space.values(configs[i])[2].as_int() == 1024;
    EXPECT_EQ(f[i].pending, hangs) << space.config_key(configs[i]);
    EXPECT_EQ(f[i].compiled, !hangs) << space.config_key(configs[i]);
  }
}

}  // namespace
}  // namespace ktune
