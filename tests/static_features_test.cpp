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

}  // namespace
}  // namespace ktune
