// T1 JSON specs: files written for these tests in the layout published BAT
// files use (tests/data/specs/t1) load with their parameter counts, space
// sizes, budgets and launch geometry.
#include <gtest/gtest.h>

#include "tuner/spec/spec.h"

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

TEST(SpecT1, ProblemSizeAndGridDivGiveTheGridAndBenchmarkConfigIsDefined) {
  Spec s = load_spec(kSpecs + "t1/pip_t1.json");
  EXPECT_EQ(s.kernel.name, "mark_inside");
  EXPECT_EQ(s.kernel.compiler_options, (std::vector<std::string>{"-std=c++14"}));
  EXPECT_EQ(s.space().parameters().size(), 4u);
  EXPECT_EQ(s.space().parameters()[0].values.size(), 16u);  // list(range(64, 1024+1, 64))
  EXPECT_EQ(s.space().parameters()[1].values.size(), 9u);   // [1] + [2*i for i in range(1, 9)]
  EXPECT_EQ(s.space().parameters()[1].values.back(), Value(16));
  EXPECT_EQ(s.space().cartesian_size(), "864");
  EXPECT_EQ(s.space().count_valid(), 864u);  // no Conditions, at most 1024 threads
  EXPECT_TRUE(s.restrictions.empty());
  EXPECT_EQ(s.grid_mode, GridMode::Divisors);  // as Kernel Tuner reads T1
  LaunchResult r = s.geometry(config(s, {{"threads_x", 64}, {"points_per_thread", 6}}));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.launch->grid, (Dim3{26042, 1, 1}));  // ceil(10000000 / (64 * 6)); GridDivY [] divides by nothing
  EXPECT_EQ(r.launch->block, (Dim3{64, 1, 1}));
  ASSERT_EQ(s.arguments.size(), 5u);
  EXPECT_EQ(s.arguments[0].fill.kind, ArgFill::Kind::Constant);
  EXPECT_EQ(s.arguments[0].fill.value, Value(0));  // FillValue 0.0 of an int32 buffer
  EXPECT_FALSE(s.arguments[0].read_write);         // WriteOnly
  EXPECT_EQ(s.arguments[1].fill.kind, ArgFill::Kind::Random);
  EXPECT_EQ(s.arguments[1].fill.hi, std::optional<double>(1.0));
  EXPECT_EQ(s.arguments[2].size, 1440);
  EXPECT_TRUE(s.arguments[3].output);
  EXPECT_TRUE(s.arguments[3].read_write);
  EXPECT_FALSE(s.arguments[4].pointer);
  EXPECT_EQ(s.arguments[4].value, Value(10000000));
  EXPECT_EQ(s.fixed_defines.size(), 4u);  // BenchmarkConfig, passed as -D like BAT does
  EXPECT_TRUE(has_note(s, "verification"));
  EXPECT_TRUE(has_note(s, "GlobalSize is not used"));
  auto defs = s.defines(config(s, {}));
  EXPECT_NE(std::find(defs.begin(), defs.end(), std::pair<std::string, std::string>{"VERTEX_COUNT", "720"}),
            defs.end());
}

TEST(SpecT1, CudaGlobalSizeCountsBlocksAndABudgetObjectSetsMaxFevals) {
  Spec s = load_spec(kSpecs + "t1/matmul_t1.json");
  EXPECT_EQ(s.kernel.name, "matmul_tiled");
  EXPECT_EQ(s.space().parameters().size(), 10u);
  EXPECT_EQ(s.space().cartesian_size(), "46656");
  // Counted with Python over the 8 Conditions and at most 1024 threads a block
  // (17340 without that limit: THREADS_M 64 x THREADS_N 32 passes the Conditions).
  EXPECT_EQ(s.space().count_valid(), 17286u);
  EXPECT_EQ(s.restrictions.size(), 8u);
  EXPECT_EQ(s.strategy.name, "");  // no Search section: the command picks
  EXPECT_EQ(s.strategy.max_fevals, std::optional<uint64_t>(150));
  EXPECT_EQ(s.grid_mode, GridMode::GlobalSize);
  EXPECT_FALSE(s.global_size_in_threads);
  LaunchResult r = s.geometry(config(s, {{"TILE_M", 128}, {"TILE_N", 64}, {"THREADS_M", 16}, {"THREADS_N", 8}}));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.launch->grid, (Dim3{32, 128, 1}));  // 4096 // 128 and 8192 // 64 blocks
  EXPECT_EQ(r.launch->block, (Dim3{16, 8, 1}));
  EXPECT_EQ(r.launch->shared_memory, 16384);
  ASSERT_EQ(s.arguments.size(), 6u);
  EXPECT_FALSE(s.arguments[0].pointer);
  EXPECT_EQ(s.arguments[2].value, Value(2048));
  EXPECT_EQ(s.arguments[4].fill.kind, ArgFill::Kind::Random);
  EXPECT_EQ(s.arguments[4].fill.hi, std::optional<double>(2.0));
  EXPECT_EQ(s.arguments[5].size, 33554432);  // 4096 x 8192
  EXPECT_EQ(s.arguments[5].fill.kind, ArgFill::Kind::Constant);
  EXPECT_TRUE(s.arguments[5].output);
  EXPECT_FALSE(s.arguments[5].read_write);  // WriteOnly
}

TEST(SpecT1, OpenClGlobalSizeCountsThreadsAndATuningParameterShadowsBenchmarkConfig) {
  Spec s = load_spec(kSpecs + "t1/stencil_t1.json");
  EXPECT_EQ(s.kernel.name, "diffuse_tiled");
  EXPECT_EQ(s.space().parameters().size(), 10u);
  EXPECT_EQ(s.space().parameters()[0].values.size(), 18u);  // [8, 16] + list(range(32, 512+1, 32))
  EXPECT_EQ(s.space().cartesian_size(), "116640");
  // Counted with Python over the 4 Conditions (RADIUS from BenchmarkConfig) and
  // at most 1024 threads a block (26028 without that limit).
  EXPECT_EQ(s.space().count_valid(), 23850u);
  // SMEM_PER_BLOCK and SMEM_PER_SM are both BenchmarkConfig entries and parameters: the parameter wins.
  EXPECT_TRUE(has_note(s, "BenchmarkConfig.SMEM_PER_BLOCK"));
  EXPECT_TRUE(has_note(s, "BenchmarkConfig.SMEM_PER_SM"));
  ASSERT_EQ(s.fixed_defines.size(), 3u);  // GRID_W, GRID_H, RADIUS
  EXPECT_EQ(s.fixed_defines[0].first, "GRID_W");
  EXPECT_EQ(s.fixed_defines[2].first, "RADIUS");
  EXPECT_TRUE(has_note(s, "Misc"));
  EXPECT_TRUE(s.global_size_in_threads);
  LaunchResult r = s.geometry(config(s, {{"BLOCK_X", 96}, {"BLOCK_Y", 8}, {"CELLS_X", 4}, {"CELLS_Y", 2}}));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.launch->grid, (Dim3{16, 250, 1}));  // ceil((6000 // 4) / 96), (4000 // 2) / 8
  EXPECT_EQ(r.launch->block, (Dim3{96, 8, 1}));
  EXPECT_EQ(r.launch->problem_size, (Dim3{1500, 2000, 1}));  // the global size in threads
  EXPECT_EQ(r.launch->shared_memory, 0);
  ASSERT_EQ(s.arguments.size(), 6u);
  EXPECT_EQ(s.arguments[1].fill.hi, std::optional<double>(350.0));
  EXPECT_TRUE(s.arguments[2].output);
  EXPECT_TRUE(s.arguments[2].read_write);
  EXPECT_TRUE(s.arguments[3].value.is_float());
  EXPECT_DOUBLE_EQ(s.arguments[3].value.as_float(), 0.05);
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
