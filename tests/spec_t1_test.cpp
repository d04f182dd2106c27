// T1 JSON specs: published BAT benchmark files load as they are, with their
// parameter counts, space sizes, budgets and launch geometry.
#include <gtest/gtest.h>

#include "tuner/spec.h"

namespace ktune {
namespace {

const std::string kSpecs = std::string(KTUNE_TESTS_DIR) + "/data/specs/";

std::vector<Value> config(const Spec& s, const std::map<std::string, Value>& chosen) {
  std::vector<Value> out;
  for (const auto& p : s.space().parameters()) {
    auto it = chosen.find(p.name);
    out.push_back(it == chosen.end() ? p.values.front() : it->second);
  }
  return out;
}

bool has_note(const Spec& s, const std::string& part) {
  for (const auto& n : s.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

TEST(SpecT1, SmallFileEveryMapping) {
  Spec s = load_spec(kSpecs + "good/t1_small.json");
  EXPECT_EQ(s.format, Spec::Format::T1);
  const auto& ps = s.space().parameters();
  ASSERT_EQ(ps.size(), 4u);
  EXPECT_EQ(ps[1].type, ValueType::Float);
  EXPECT_TRUE(ps[1].values[1].is_float());  // Type float: 1 becomes 1.0
  EXPECT_EQ(ps[2].values, (std::vector<Value>{true, false}));
  EXPECT_EQ(ps[3].values, (std::vector<Value>{"a", "b"}));
  EXPECT_EQ(s.space().cartesian_size(), "24");
  EXPECT_EQ(s.space().count_valid(), 20u);  // bs 32 with frac 0.5 fails
  EXPECT_EQ(s.strategy.name, "random_sample");
  EXPECT_EQ(s.strategy.options.at("popsize"), Value(20));
  EXPECT_EQ(s.strategy.max_fevals, std::optional<uint64_t>(50));
  EXPECT_EQ(s.strategy.time_limit_s, std::optional<double>(90));
  EXPECT_EQ(s.grid_mode, GridMode::GlobalSize);
  EXPECT_TRUE(s.global_size_in_threads);
  LaunchResult r = s.geometry(config(s, {{"bs", 64}}));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.launch->grid, (Dim3{16, 3, 1}));  // ceil(1000 / 64), 3 threads / 1
  EXPECT_EQ(r.launch->block, (Dim3{64, 1, 1}));
  EXPECT_EQ(r.launch->problem_size, (Dim3{1000, 3, 1}));
  EXPECT_EQ(r.launch->shared_memory, 256);
  ASSERT_EQ(s.arguments.size(), 2u);
  EXPECT_EQ(s.arguments[0].fill.kind, ArgFill::Kind::Generator);
  EXPECT_TRUE(s.arguments[0].output);
  EXPECT_TRUE(s.arguments[0].read_write);
  EXPECT_FALSE(s.arguments[1].pointer);
  EXPECT_EQ(s.arguments[1].value, Value(1000));
}

TEST(SpecT1, BatPnpolyUsesProblemSizeAndGridDiv) {
  Spec s = load_spec(kSpecs + "t1/pnpoly-CAFF.json");
  EXPECT_EQ(s.kernel.name, "cn_pnpoly");
  EXPECT_EQ(s.kernel.compiler_options, (std::vector<std::string>{"-std=c++11"}));
  EXPECT_EQ(s.space().parameters().size(), 4u);
  EXPECT_EQ(s.space().parameters()[0].values.size(), 31u);  // list(range(32, 1000+1, 32))
  EXPECT_EQ(s.space().parameters()[1].values.size(), 11u);  // [1] + [2*i for i in range(1,11)]
  EXPECT_EQ(s.space().cartesian_size(), "4092");
  EXPECT_EQ(s.space().count_valid(), 4092u);  // no Conditions
  EXPECT_EQ(s.grid_mode, GridMode::Divisors);  // as Kernel Tuner reads T1
  LaunchResult r = s.geometry(config(s, {{"block_size_x", 32}, {"tile_size", 2}}));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.launch->grid, (Dim3{312500, 1, 1}));
  EXPECT_EQ(r.launch->block, (Dim3{32, 1, 1}));
  ASSERT_EQ(s.arguments.size(), 4u);
  EXPECT_EQ(s.arguments[0].fill.kind, ArgFill::Kind::Constant);
  EXPECT_EQ(s.arguments[0].fill.value, Value(0));
  EXPECT_EQ(s.arguments[1].fill.kind, ArgFill::Kind::Random);
  EXPECT_EQ(s.arguments[1].fill.hi, std::optional<double>(1.0));
  EXPECT_TRUE(s.arguments[2].output);
  EXPECT_TRUE(s.arguments[2].read_write);
  EXPECT_EQ(s.arguments[3].value, Value(20000000));
  EXPECT_EQ(s.fixed_defines.size(), 5u);  // BenchmarkConfig, passed as -D like BAT does
  EXPECT_TRUE(has_note(s, "verification"));
  EXPECT_TRUE(has_note(s, "GlobalSize is not used"));
  auto defs = s.defines(config(s, {}));
  EXPECT_NE(std::find(defs.begin(), defs.end(), std::pair<std::string, std::string>{"iterations", "10"}), defs.end());
}

TEST(SpecT1, BatGemmUsesCudaGlobalSizeAndBudgetObject) {
  Spec s = load_spec(kSpecs + "t1/GEMM-CAFF.json");
  EXPECT_EQ(s.kernel.name, "gemm_fast");
  EXPECT_EQ(s.space().parameters().size(), 15u);
  EXPECT_EQ(s.space().cartesian_size(), "20736");
  EXPECT_EQ(s.space().count_valid(), 10312u);  // counted with Python over the 7 Conditions
  EXPECT_EQ(s.restrictions.size(), 7u);
  EXPECT_EQ(s.strategy.max_fevals, std::optional<uint64_t>(200));
  EXPECT_EQ(s.grid_mode, GridMode::GlobalSize);
  EXPECT_FALSE(s.global_size_in_threads);
  LaunchResult r = s.geometry(config(s, {{"MWG", 64}, {"NWG", 64}, {"MDIMC", 16}, {"NDIMC", 8}}));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.launch->grid, (Dim3{4096, 2048, 1}));
  EXPECT_EQ(r.launch->block, (Dim3{16, 8, 1}));
  EXPECT_EQ(r.launch->shared_memory, 16384);
  ASSERT_EQ(s.arguments.size(), 6u);
  EXPECT_FALSE(s.arguments[0].pointer);
  EXPECT_EQ(s.arguments[5].size, 16384);
  EXPECT_TRUE(s.arguments[5].output);
  EXPECT_FALSE(s.arguments[5].read_write);  // WriteOnly
}

TEST(SpecT1, BatHotspotOpenClGlobalSizeAndShadowedConfig) {
  Spec s = load_spec(kSpecs + "t1/hotspot-CAFF.json");
  EXPECT_EQ(s.kernel.name, "calculate_temp");
  EXPECT_EQ(s.space().parameters().size(), 13u);
  EXPECT_EQ(s.space().parameters()[0].values.size(), 37u);  // [1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))
  EXPECT_EQ(s.space().cartesian_size(), "22200000");
  EXPECT_EQ(s.space().count_valid(), 349853u);  // counted with Python over the 5 Conditions
  // MAX_THREADS etc. are both BenchmarkConfig entries and parameters: the parameter wins.
  EXPECT_TRUE(has_note(s, "BenchmarkConfig.MAX_THREADS"));
  ASSERT_EQ(s.fixed_defines.size(), 2u);
  EXPECT_EQ(s.fixed_defines[0].first, "dataSize");
  EXPECT_TRUE(has_note(s, "Misc"));
  EXPECT_TRUE(s.global_size_in_threads);
  LaunchResult r = s.geometry(config(s, {{"BLOCK_SIZE_X", 256}, {"BLOCK_SIZE_Y", 4}}));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.launch->grid, (Dim3{16, 1, 1}));  // ceil(4096 / 256), ceil(1 / 4)
  EXPECT_EQ(r.launch->block, (Dim3{256, 4, 1}));
  ASSERT_EQ(s.arguments.size(), 7u);
  EXPECT_TRUE(s.arguments[3].value.is_float());
  EXPECT_DOUBLE_EQ(s.arguments[3].value.as_float(), 0.1);
}

TEST(SpecT1, SameProblemAsYamlGivesSameGeometry) {
  // A T1 file and a YAML spec that say the same thing are the same problem.
  const std::string t1 =
      "{\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"block_size_x\", \"Type\": \"int\", "
      "\"Values\": [32, 64]}]},\n"
      " \"KernelSpecification\": {\"KernelName\": \"k\", \"KernelFile\": \"k.cu\", \"ProblemSize\": [1024],\n"
      "  \"GridDivX\": [\"block_size_x\"], \"LocalSize\": {\"X\": \"block_size_x\"}}}\n";
  const std::string yaml =
      "kernel: {name: k, source: k.cu}\nproblem_size: [1024]\ntune_params: {block_size_x: [32, 64]}\n"
      "block_size_names: [block_size_x]\n";
  Spec a = load_spec_text(t1, kSpecs + "bad/x.json", Spec::Format::T1);
  Spec b = load_spec_text(yaml, kSpecs + "bad/x.yaml", Spec::Format::Yaml);
  auto la = a.geometry({Value(64)}), lb = b.geometry({Value(64)});
  ASSERT_TRUE(la.ok() && lb.ok());
  EXPECT_EQ(la.launch->grid, lb.launch->grid);
  EXPECT_EQ(la.launch->block, lb.launch->block);
  EXPECT_EQ(a.source_hash, b.source_hash);
}

}  // namespace
}  // namespace ktune
