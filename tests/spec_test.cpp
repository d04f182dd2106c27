// Loading tuning specs: every key of a YAML spec, published T1 files from the
// BAT suite, launch geometry, -D defines and template arguments, metrics and
// hashes. Bad input is covered in spec_errors_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "tuner/spec/spec.h"
#include "tuner/tune/replay_evaluator.h"

namespace ktune {
namespace {

const std::string kSpecs = std::string(KTUNE_TESTS_DIR) + "/data/specs/";

// Values of a configuration given by parameter name (others take their first value).
std::vector<Value> config(const Spec& s, const std::map<std::string, Value>& chosen) {
  std::vector<Value> out;
  for (const auto& p : s.space().parameters()) {
    auto it = chosen.find(p.name);
    out.push_back(it == chosen.end() ? p.values.front() : it->second);
  }
  return out;
}

std::string define(const std::vector<std::pair<std::string, std::string>>& defs, const std::string& name) {
  for (const auto& [n, v] : defs)
    if (n == name) return v;
  return "<absent>";
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int line_of(const std::string& path, const std::string& needle) {
  std::istringstream in(read(path));
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find(needle) != std::string::npos) return n;
  return -1;
}

TEST(SpecYaml, FullSpecKernelConstantsAndGeometryKeys) {
  Spec s = load_spec(kSpecs + "good/full.yaml");
  EXPECT_EQ(s.format, Spec::Format::Yaml);
  EXPECT_EQ(s.kernel.name, "stencil");
  EXPECT_TRUE(s.kernel.source_path.ends_with("good/full.cu"));
  EXPECT_NE(s.kernel.source.find("stencil_ref"), std::string::npos);
  EXPECT_EQ(s.kernel.template_args, (std::vector<std::string>{"block_size_x", "use_shared"}));
  EXPECT_EQ(s.kernel.compiler_options, (std::vector<std::string>{"-std=c++17", "-use_fast_math"}));
  ASSERT_EQ(s.constants.size(), 4u);
  EXPECT_EQ(s.constants[0], (std::pair<std::string, Value>{"nx", Value(1024)}));
  EXPECT_EQ(s.constants[1], (std::pair<std::string, Value>{"ny", Value(2048)}));  // uses nx
  EXPECT_EQ(s.constants[2].second, Value(0.5));
  EXPECT_EQ(s.constants[3].second, Value("fast"));
  ASSERT_EQ(s.problem_size.size(), 2u);
  EXPECT_EQ(s.grid_mode, GridMode::Divisors);
  EXPECT_EQ(s.grid_div[0].size(), 2u);
  EXPECT_EQ(s.grid_div[1].size(), 1u);
  EXPECT_TRUE(s.grid_div[2].empty());  // block_size_z is no parameter: divide by 1
  EXPECT_EQ(s.block_size_names, (std::vector<std::string>{"block_size_x", "block_size_y", "block_size_z"}));
  EXPECT_EQ(s.shared_memory.expression.text(), "block_size_x * block_size_y * 4 if use_shared else 0");
}

TEST(SpecYaml, FullSpecParametersAndRestrictions) {
  const std::string path = kSpecs + "good/full.yaml";
  Spec s = load_spec(path);
  const auto& ps = s.space().parameters();
  ASSERT_EQ(ps.size(), 6u);
  EXPECT_EQ(ps[0].name, "block_size_x");
  EXPECT_EQ(ps[1].values, (std::vector<Value>{1, 2, 4}));  // from an expression
  EXPECT_EQ(ps[3].type, ValueType::Bool);
  EXPECT_EQ(ps[4].type, ValueType::Float);  // 0.5 and 1 mix to float
  EXPECT_EQ(ps[5].type, ValueType::String);
  EXPECT_EQ(ps[5].values, (std::vector<Value>{"plain", "vec"}));
  EXPECT_EQ(ps[2].where.line, line_of(path, "tile_x: [1, 2]"));
  EXPECT_EQ(s.space().cartesian_size(), "144");
  // block_size_x * block_size_y <= 256 drops (128, 4); the second drops vec with tile_x 1.
  EXPECT_EQ(s.space().count_valid(), uint64_t((9 - 1) * 2 * 2 * 2 * 2 - (9 - 1) * 2 * 2));
  ASSERT_EQ(s.restrictions.size(), 2u);
  const auto& r = s.restrictions[1];
  EXPECT_EQ(r.text(), "not (variant == 'vec' and tile_x == 1)");
  int line = line_of(path, "not (variant");
  EXPECT_EQ(r.where().line, line);
  EXPECT_EQ(r.where().column, 6);  // inside the quotes: `  - "not`
}

TEST(SpecYaml, FullSpecArguments) {
  Spec s = load_spec(kSpecs + "good/full.yaml");
  const auto& a = s.arguments;
  ASSERT_EQ(a.size(), 9u);
  EXPECT_TRUE(a[0].pointer);
  EXPECT_EQ(a[0].type, ElemType::F32);
  EXPECT_EQ(a[0].size, 1024 * 2048);
  EXPECT_EQ(a[0].fill.kind, ArgFill::Kind::Zeros);
  EXPECT_TRUE(a[0].output);
  EXPECT_FALSE(a[0].read_write);
  EXPECT_EQ(a[1].type, ElemType::F64);
  EXPECT_EQ(a[1].fill.kind, ArgFill::Kind::Constant);
  EXPECT_EQ(a[1].fill.value, Value(0.5));
  EXPECT_TRUE(a[1].read_write);
  EXPECT_EQ(a[2].fill.kind, ArgFill::Kind::Random);
  EXPECT_EQ(a[2].fill.seed, std::optional<uint64_t>(3));
  EXPECT_EQ(a[2].fill.lo, std::optional<double>(-1));
  EXPECT_EQ(a[2].fill.hi, std::optional<double>(1));
  EXPECT_EQ(a[3].type, ElemType::I32);
  EXPECT_EQ(a[3].fill.kind, ArgFill::Kind::Sequence);
  EXPECT_EQ(a[3].fill.start, 10);
  EXPECT_EQ(a[3].fill.step, 2);
  EXPECT_EQ(a[4].type, ElemType::F16);
  ASSERT_EQ(a[4].fill.kind, ArgFill::Kind::Generator);
  Value i9[] = {Value(9)};
  EXPECT_EQ(a[4].fill.generator_code.eval(i9), Value(2));
  EXPECT_EQ(a[5].fill.kind, ArgFill::Kind::File);
  EXPECT_TRUE(a[5].fill.path.ends_with("good/full_data.bin"));
  EXPECT_EQ(a[6].type, ElemType::BF16);
  EXPECT_EQ(a[6].fill.kind, ArgFill::Kind::Random);  // no fill given: random, never silently zeros
  EXPECT_FALSE(a[6].fill.seed.has_value());
  EXPECT_FALSE(a[7].pointer);
  EXPECT_EQ(a[7].value, Value(1024 * 2048));
  EXPECT_EQ(a[8].type, ElemType::F32);
  EXPECT_TRUE(a[8].value.is_float());
  EXPECT_EQ(a[8].value, Value(1.0));
}

TEST(SpecYaml, FullSpecVerifyMetricsObjectiveStrategy) {
  Spec s = load_spec(kSpecs + "good/full.yaml");
  EXPECT_EQ(s.verify.mode, Verify::Mode::Reference);
  EXPECT_EQ(s.verify.kernel, "stencil_ref");
  EXPECT_EQ(s.verify.block, (std::array<int64_t, 3>{16, 16, 1}));
  EXPECT_EQ(s.verify.grid, (std::array<int64_t, 3>{64, 128, 1}));
  EXPECT_DOUBLE_EQ(s.verify.atol, 1e-5);
  EXPECT_DOUBLE_EQ(s.verify.rtol, 1e-3);
  ASSERT_EQ(s.metrics.size(), 3u);
  EXPECT_EQ(s.metrics[0].name, "GB/s");
  EXPECT_EQ(s.objective, "points_per_ns");
  EXPECT_TRUE(s.higher_is_better);
  EXPECT_EQ(s.strategy.name, "genetic_algorithm");
  EXPECT_EQ(s.strategy.max_fevals, std::optional<uint64_t>(100));
  EXPECT_EQ(s.strategy.time_limit_s, std::optional<double>(600));
  EXPECT_EQ(s.strategy.seed, std::optional<uint64_t>(42));
  EXPECT_EQ(s.strategy.options.at("popsize"), Value(20));
  EXPECT_EQ(s.strategy.options.at("method"), Value("uniform"));
  EXPECT_EQ(s.strategy.options.size(), 2u);
  EXPECT_EQ(s.hash.size(), 64u);
  EXPECT_EQ(s.source_hash.size(), 64u);
  EXPECT_TRUE(s.notes.empty());
}

TEST(SpecYaml, GeometryWithGridDivisors) {
  Spec s = load_spec(kSpecs + "good/full.yaml");
  auto c = config(s, {{"block_size_x", 64}, {"block_size_y", 2}, {"tile_x", 2}, {"use_shared", true}});
  LaunchResult r = s.geometry(c);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.launch->grid, (Dim3{1024 / 128, 2048 / 2, 1}));
  EXPECT_EQ(r.launch->block, (Dim3{64, 2, 1}));
  EXPECT_EQ(r.launch->shared_memory, 64 * 2 * 4);
  EXPECT_EQ(r.launch->problem_size, (Dim3{1024, 2048, 1}));
  c = config(s, {{"block_size_x", 128}, {"tile_x", 1}, {"use_shared", false}});
  r = s.geometry(c);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.launch->grid[0], 8);
  EXPECT_EQ(r.launch->shared_memory, 0);
}

TEST(SpecYaml, TemplateModeDefinesAndNameExpression) {
  Spec s = load_spec(kSpecs + "good/full.yaml");
  auto c = config(s, {{"block_size_x", 64}, {"block_size_y", 2}, {"use_shared", true}, {"unroll", 0.5},
                      {"variant", "vec"}});
  EXPECT_EQ(s.template_arguments(c), (std::vector<std::string>{"64", "true"}));
  EXPECT_EQ(s.name_expression(c), "stencil<64, true>");
  auto defs = s.defines(c);
  EXPECT_EQ(define(defs, "block_size_x"), "<absent>");  // a template argument
  EXPECT_EQ(define(defs, "use_shared"), "<absent>");
  EXPECT_EQ(define(defs, "block_size_y"), "2");
  EXPECT_EQ(define(defs, "unroll"), "0.5");
  EXPECT_EQ(define(defs, "variant"), "vec");
  EXPECT_EQ(define(defs, "grid_size_x"), "<absent>");  // geometry ones need the launch
  auto full = s.defines(c, *s.geometry(c).launch);
  EXPECT_EQ(define(full, "grid_size_x"), "16");
  EXPECT_EQ(define(full, "grid_size_y"), "1024");
  EXPECT_EQ(define(full, "block_size_z"), "1");
}

TEST(SpecLiterals, DefineAndTemplateSpelling) {
  EXPECT_EQ(c_define_literal(Value(128)), "128");
  EXPECT_EQ(c_define_literal(Value(-3)), "-3");
  EXPECT_EQ(c_define_literal(Value(2.0)), "2.0");
  EXPECT_EQ(c_define_literal(Value(0.25)), "0.25");
  EXPECT_EQ(c_define_literal(Value(1e-6)), "1e-06");
  EXPECT_EQ(c_define_literal(Value(true)), "1");
  EXPECT_EQ(c_define_literal(Value(false)), "0");
  EXPECT_EQ(c_define_literal(Value("float4")), "float4");
  EXPECT_EQ(template_literal(Value(true)), "true");
  EXPECT_EQ(template_literal(Value(false)), "false");
  EXPECT_EQ(template_literal(Value(7)), "7");
}

TEST(SpecYaml, MetricsUseTimeParametersConstantsAndEarlierMetrics) {
  Spec s = load_spec(kSpecs + "good/full.yaml");
  auto c = config(s, {{"block_size_x", 64}});
  auto m = s.evaluate_metrics(c, 2.0);
  ASSERT_EQ(m.size(), 3u);
  ASSERT_TRUE(m[0] && m[1] && m[2]);
  EXPECT_DOUBLE_EQ(*m[0], 8.0 * 1024 * 2048 / 2e6);
  EXPECT_DOUBLE_EQ(*m[1], 1024.0 * 2048 / 2e6);
  EXPECT_DOUBLE_EQ(*m[2], *m[1] * 64);
  EXPECT_DOUBLE_EQ(*s.objective_value(c, 2.0), *m[1]);
  auto zero = s.evaluate_metrics(c, 0.0);  // division by zero: absent, not a crash
  EXPECT_FALSE(zero[0].has_value());
  EXPECT_FALSE(zero[2].has_value());  // built on an absent metric
  EXPECT_FALSE(s.objective_value(c, 0.0).has_value());
}

TEST(SpecYaml, ExplicitGridDefaultBlockNamesAndFirstValid) {
  Spec s = load_spec(kSpecs + "good/explicit_grid.yaml");
  EXPECT_EQ(s.grid_mode, GridMode::Explicit);
  EXPECT_EQ(s.verify.mode, Verify::Mode::FirstValid);
  auto c = config(s, {{"block_size_x", 100}});
  LaunchResult r = s.geometry(c);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.launch->grid, (Dim3{10, 2, 1}));
  EXPECT_EQ(r.launch->block, (Dim3{100, 1, 1}));
  auto defs = s.defines(c, *r.launch);
  EXPECT_EQ(define(defs, "block_size_x"), "100");
  EXPECT_EQ(define(defs, "grid_size_x"), "10");
  EXPECT_EQ(define(defs, "block_size_y"), "1");
  EXPECT_EQ(s.name_expression(c), "scale");
  EXPECT_TRUE(s.template_arguments(c).empty());
}

TEST(SpecYaml, GeometryErrorsMakeTheConfigurationInvalid) {
  const std::string text =
      "kernel: {name: k, source: k.cu}\n"
      "problem_size: [1024]\n"
      "grid_div_x: [block_size_x - 32]\n"
      "shared_memory: 100 - block_size_x\n"
      "tune_params: {block_size_x: [32, 64, 128]}\n";
  Spec s = load_spec_text(text, kSpecs + "bad/inline.yaml", Spec::Format::Yaml);
  LaunchResult r = s.geometry({Value(32)});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error.find("grid"), std::string::npos) << r.error;
  r = s.geometry({Value(128)});
  EXPECT_FALSE(r.ok());  // negative shared memory
  EXPECT_NE(r.error.find("shared_memory"), std::string::npos) << r.error;
  r = s.geometry({Value(64)});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.launch->grid[0], 32);
  EXPECT_EQ(r.launch->shared_memory, 36);
}

// Kernel Tuner's reduction example sets problem_size = "num_blocks": the
// grid of each configuration, not a problem size of the results.
TEST(SpecYaml, AProblemSizeNamingAParameterSetsTheGridAndIsNoProblemSize) {
  const std::string text =
      "kernel: {name: k, source: k.cu}\n"
      "problem_size: [num_blocks]\n"
      "grid_div_x: []\n"
      "tune_params: {block_size_x: [32, 64], num_blocks: [32, 8192]}\n";
  Spec s = load_spec_text(text, kSpecs + "bad/inline.yaml", Spec::Format::Yaml);
  EXPECT_TRUE(s.problem_size_tuned);
  EXPECT_TRUE(std::any_of(s.notes.begin(), s.notes.end(), [](const std::string& n) {
    return n.find("inline.yaml:2:") != std::string::npos &&
           n.find("problem_size names the tunable parameter 'num_blocks'") != std::string::npos;
  })) << ::testing::PrintToString(s.notes);
  EXPECT_TRUE(spec_problem_size(s).empty());
  LaunchResult r = s.geometry({Value(64), Value(8192)});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.launch->grid[0], 8192);
  // A constant problem size is the series' problem size, as before.
  Spec fixed = load_spec_text("kernel: {name: k, source: k.cu}\nproblem_size: [4096]\ntune_params: {block_size_x: [32, 64]}\n",
                              kSpecs + "bad/inline.yaml", Spec::Format::Yaml);
  EXPECT_FALSE(fixed.problem_size_tuned);
  EXPECT_EQ(spec_problem_size(fixed), (db::ProblemSize{4096}));
}

// Kernel Tuner's habits in a spec: strategy_options (under strategy or beside
// it), iterations (noted: ktune samples adaptively), a parameter in an
// argument's size (refused, saying why).
TEST(SpecYaml, KernelTunerHabitsAreReadOrExplained) {
  const std::string base =
      "kernel: {name: k, source: k.cu}\n"
      "problem_size: [1024]\n"
      "constants: {n: 1024}\n"
      "tune_params: {block_size_x: [32, 64], num_blocks: [1, 2]}\n";
  Spec s = load_spec_text(base + "strategy: {name: genetic_algorithm, strategy_options: {popsize: 4, max_fevals: 20}}\n"
                                 "iterations: 32\n",
                          kSpecs + "bad/inline.yaml", Spec::Format::Yaml);
  EXPECT_EQ(s.strategy.options.at("popsize"), Value(4));
  EXPECT_EQ(s.strategy.max_fevals, 20u);
  EXPECT_TRUE(std::any_of(s.notes.begin(), s.notes.end(),
                          [](const std::string& n) { return n.find("iterations is not used") != std::string::npos; }));
  Spec beside = load_spec_text(base + "strategy: genetic_algorithm\nstrategy_options: {popsize: 6, time_limit: 30s}\n",
                               kSpecs + "bad/inline.yaml", Spec::Format::Yaml);
  EXPECT_EQ(beside.strategy.options.at("popsize"), Value(6));
  EXPECT_EQ(beside.strategy.time_limit_s, 30.0);
  try {
    load_spec_text(base + "arguments:\n  - {name: out, type: float*, size: max(num_blocks)}\n",
                   kSpecs + "bad/inline.yaml", Spec::Format::Yaml);
    ADD_FAILURE() << "a parameter in an argument's size was accepted";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("'num_blocks' is a tunable parameter"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("the constants: n"), std::string::npos) << e.what();
    EXPECT_EQ(e.where().line, 6) << e.what();
  }
}

TEST(SpecHash, StableAndSensitiveToWhatMatters) {
  const std::string path = kSpecs + "good/explicit_grid.yaml";
  std::string text = read(path);
  Spec a = load_spec(path);
  EXPECT_EQ(load_spec(path).hash, a.hash);
  std::string respaced = text;
  const std::string spaced = "(n + block_size_x - 1) // block_size_x";
  respaced.replace(respaced.find(spaced), spaced.size(), "(n+block_size_x-1)//block_size_x");
  EXPECT_EQ(load_spec_text(respaced, path, Spec::Format::Yaml).hash, a.hash);
  std::string with_strategy = text + "strategy: {name: random_sample, max_fevals: 5}\n";
  EXPECT_EQ(load_spec_text(with_strategy, path, Spec::Format::Yaml).hash, a.hash);
  std::string other = text;
  other.replace(other.find("[32, 100, 256]"), 14, "[32, 100, 512]");
  EXPECT_NE(load_spec_text(other, path, Spec::Format::Yaml).hash, a.hash);
  EXPECT_EQ(a.source_hash, load_spec(kSpecs + "good/explicit_grid.yaml").source_hash);
}

TEST(SpecExample, VectorAddLoads) {
  Spec s = load_spec(std::string(KTUNE_EXAMPLES_DIR) + "/vector_add/vector_add.yaml");
  EXPECT_EQ(s.kernel.name, "vector_add");
  EXPECT_EQ(s.space().parameters().size(), 2u);
  EXPECT_EQ(s.space().cartesian_size(), "20");
  EXPECT_EQ(s.space().count_valid(), 19u);  // 1024 x 8 breaks the restriction
  auto c = config(s, {{"block_size_x", 256}, {"tile_size_x", 4}});
  LaunchResult r = s.geometry(c);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.launch->grid[0], 268435456 / 1024);
  EXPECT_EQ(r.launch->block[0], 256);
  EXPECT_EQ(s.verify.kernel, "vector_add_ref");
  EXPECT_EQ(s.verify.grid[0], 268435456 / 256);
  EXPECT_EQ(define(s.defines(c), "tile_size_x"), "4");
  EXPECT_EQ(define(s.defines(c), "kernel_tuner"), "1");  // as Kernel Tuner defines it in every compile
  ASSERT_EQ(s.arguments.size(), 4u);
  EXPECT_EQ(s.arguments[3].value, Value(268435456));
  EXPECT_EQ(s.objective, "GB/s");
  EXPECT_NEAR(*s.objective_value(c, 1.0), 3.0 * 4 * 268435456 / 1e6, 1e-6);
}

}  // namespace
// Kernel Tuner's CLBlast GEMM examples name the block
// ["MDIMC", "NDIMC", "block_size_z"] where block_size_z is no parameter:
// that dimension is 1, with a note (Kernel Tuner warns so).
TEST(SpecYaml, BlockSizeNameThatIsNoParameterIsOneWithANote) {
  Spec s = load_spec_text(
      "kernel: {name: gemm, source: missing.cu}\n"
      "problem_size: [64, 64]\n"
      "block_size_names: [MDIMC, NDIMC, block_size_z]\n"
      "tune_params: {MDIMC: [8, 16], NDIMC: [8, 16]}\n",
      "clblast.yaml", Spec::Format::Yaml);
  auto c = config(s, {{"MDIMC", 16}, {"NDIMC", 8}});
  LaunchResult r = s.geometry(c);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.launch->block, (Dim3{16, 8, 1}));
  EXPECT_TRUE(std::any_of(s.notes.begin(), s.notes.end(), [](const std::string& n) {
    return n.find("clblast.yaml:3") != std::string::npos && n.find("'block_size_z'") != std::string::npos &&
           n.find("block dimension z is 1") != std::string::npos;
  })) << ::testing::PrintToString(s.notes);
}

}  // namespace ktune
