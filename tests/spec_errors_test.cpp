// Bad specs: every error is bad input (exit 2) naming the file, the line and
// a column inside what was written wrong; an empty space is failed work (exit 1).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "test_util.h"
#include "tuner/spec/spec.h"

namespace ktune {
namespace {

using testing::error_of;

const std::string kBad = std::string(KTUNE_TESTS_DIR) + "/data/specs/bad/";

Error load_error(const std::string& file) {
  return error_of([&] { load_spec(kBad + file); });
}

Error text_error(const std::string& text, Spec::Format f = Spec::Format::Yaml) {
  return error_of([&] { load_spec_text(text, kBad + (f == Spec::Format::Yaml ? "inline.yaml" : "inline.json"), f); });
}

// 1-based line and column of `needle` in the file (column of its first character).
std::pair<int, int> where_in(const std::string& file, const std::string& needle, int nth = 1) {
  std::ifstream in(kBad + file);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    size_t p = line.find(needle);
    if (p != std::string::npos && --nth == 0) return {n, int(p) + 1};
  }
  return {-1, -1};
}

void expect_at(const Error& e, const std::string& file, std::pair<int, int> lc, const std::string& part) {
  EXPECT_EQ(e.kind(), Error::Kind::BadInput) << e.what();
  EXPECT_EQ(e.exit_status(), 2);
  EXPECT_EQ(e.where().file, kBad + file) << e.what();
  EXPECT_EQ(e.where().line, lc.first) << e.what();
  EXPECT_EQ(e.where().column, lc.second) << e.what();
  EXPECT_NE(e.message().find(part), std::string::npos) << e.what();
}

TEST(SpecErrors, MalformedYamlHasLineAndColumn) {
  Error e = load_error("malformed.yaml");
  EXPECT_NE(e.message().find("malformed YAML"), std::string::npos) << e.what();
  EXPECT_EQ(e.where().file, kBad + "malformed.yaml");
  EXPECT_GE(e.where().line, 4);  // the unclosed list starts on line 4; yaml-cpp notices after it
  EXPECT_GE(e.where().column, 1);
}

TEST(SpecErrors, MalformedJsonHasLineAndColumn) {
  Error e = load_error("malformed.json");
  auto lc = where_in("malformed.json", ",}");
  expect_at(e, "malformed.json", {lc.first, lc.second + 1}, "malformed JSON");  // at the '}'
}

TEST(SpecErrors, UnknownKeyNamedWithAllowedKeys) {
  Error e = load_error("unknown_key.yaml");
  expect_at(e, "unknown_key.yaml", where_in("unknown_key.yaml", "grid_dv_x"), "unknown key 'grid_dv_x'");
  EXPECT_NE(e.message().find("did you mean 'grid_div_x'?"), std::string::npos) << e.what();
  EXPECT_NE(e.message().find("allowed keys: kernel,"), std::string::npos) << e.what();
  e = load_error("unknown_nested_key.yaml");
  expect_at(e, "unknown_nested_key.yaml", where_in("unknown_nested_key.yaml", "sources"), "in kernel");
  e = load_error("unknown_key.json");
  expect_at(e, "unknown_key.json", where_in("unknown_key.json", "\"GlobalSise\""), "unknown key 'GlobalSise'");
}

TEST(SpecErrors, UnknownNameInRestrictionPointsInsideIt) {
  Error e = load_error("unknown_name.yaml");
  expect_at(e, "unknown_name.yaml", where_in("unknown_name.yaml", "tile"), "tile");
  e = load_error("unknown_name.json");
  expect_at(e, "unknown_name.json", where_in("unknown_name.json", "tile"), "tile");
}

TEST(SpecErrors, ExpressionSyntaxError) {
  Error e = load_error("bad_syntax.yaml");
  auto start = where_in("bad_syntax.yaml", "block_size_x * *");
  EXPECT_EQ(e.kind(), Error::Kind::BadInput);
  EXPECT_EQ(e.where().line, start.first) << e.what();
  // Somewhere at or after the second '*', inside the quoted text.
  EXPECT_GE(e.where().column, start.second + 15) << e.what();
  EXPECT_LE(e.where().column, start.second + 27) << e.what();
}

TEST(SpecErrors, ValuesNotAList) {
  Error e = load_error("not_a_list.yaml");
  expect_at(e, "not_a_list.yaml", where_in("not_a_list.yaml", "64"), "must be a list");
  e = load_error("expr_not_a_list.yaml");
  expect_at(e, "expr_not_a_list.yaml", where_in("expr_not_a_list.yaml", "2**6"), "must be a list");
}

TEST(SpecErrors, TypeClash) {
  Error e = load_error("type_clash.yaml");
  expect_at(e, "type_clash.yaml", where_in("type_clash.yaml", "small"), "verify.atol must be a number");
  e = load_error("type_clash.json");
  expect_at(e, "type_clash.json", where_in("type_clash.json", "64"), "Type int");
}

// A kernel source that is not there stops what compiles (with its location),
// not what only reads the space or replays recorded data.
TEST(SpecErrors, MissingSourceFile) {
  const Spec s = load_spec(kBad + "missing_source.yaml");
  EXPECT_GT(s.space().count_valid(), 0u);
  ASSERT_EQ(s.not_runnable.size(), 1u);
  EXPECT_EQ(s.source_hash, "");
  ASSERT_FALSE(s.notes.empty());
  EXPECT_NE(s.notes.back().find("not_here.cu"), std::string::npos) << s.notes.back();
  Error e = error_of([&] { s.require_runnable(); });
  expect_at(e, "missing_source.yaml", where_in("missing_source.yaml", "not_here.cu"), "does not exist");
  EXPECT_EQ(e.exit_status(), 2);
  Error missing = error_of([] { load_spec(kBad + "no_such_spec.yaml"); });
  EXPECT_EQ(missing.exit_status(), 2);
}

TEST(SpecErrors, DuplicateParameter) {
  Error e = load_error("duplicate_param.yaml");
  expect_at(e, "duplicate_param.yaml", where_in("duplicate_param.yaml", "block_size_x", 2), "duplicate key");
  e = load_error("duplicate_param.json");
  auto second = where_in("duplicate_param.json", "\"bs\"", 2);
  expect_at(e, "duplicate_param.json", {second.first, second.second + 1}, "duplicate parameter 'bs'");
  e = text_error("{\"General\": {}, \"General\": {}}", Spec::Format::T1);
  EXPECT_NE(e.message().find("duplicate key"), std::string::npos) << e.what();
  EXPECT_EQ(e.where().column, 17);
}

TEST(SpecErrors, EmptySpaceIsFailedWork) {
  Spec s = load_spec(kBad + "empty_space.yaml");
  Error e = error_of([&] { require_valid_configurations(s); });
  EXPECT_EQ(e.kind(), Error::Kind::Failed);
  EXPECT_EQ(e.exit_status(), 1);
  EXPECT_NE(e.message().find("no valid configuration"), std::string::npos);
}

const char* kHead = "kernel: {name: k, source: k.cu}\nproblem_size: [1024]\ntune_params: {block_size_x: [32, 64]}\n";

TEST(SpecErrors, ArgumentMistakes) {
  struct Case {
    std::string args, part;
  };
  const Case cases[] = {
      {"  - {name: x, type: float*, size: 8, fill: sprinkle}", "unknown fill 'sprinkle'"},
      {"  - {name: x, type: float*, size: 8, fill: zeros, seed: 1}", "'seed' only applies to fill: random"},
      {"  - {name: x, type: float*, size: 8, fill: constant}", "needs the key 'value'"},
      {"  - {name: x, type: float*, fill: zeros}", "needs the key 'size'"},
      {"  - {name: n, type: int32, size: 8, value: 1}", "'size' applies to buffers"},
      {"  - {name: n, type: int32}", "needs the key 'value'"},
      {"  - {name: n, type: int32, value: 1.5}", "must be an integer"},
      {"  - {name: n, type: int16, value: 70000}", "does not fit in int16"},
      {"  - {name: n, type: quad, value: 1}", "unknown argument type 'quad'"},
      {"  - {name: n, type: int32, value: block_size_x}", "block_size_x"},  // parameters are not in scope
      {"  - {name: x, type: float*, size: 8}\n  - {name: x, type: float*, size: 8}", "duplicate argument 'x'"},
  };
  for (const auto& c : cases) {
    Error e = text_error(std::string(kHead) + "arguments:\n" + c.args + "\n");
    EXPECT_EQ(e.kind(), Error::Kind::BadInput);
    EXPECT_NE(e.message().find(c.part), std::string::npos) << c.args << "\n -> " << e.what();
    EXPECT_GE(e.where().line, 5) << c.args << "\n -> " << e.what();
  }
  // A fill file that is not there: only a GPU run needs it.
  const Spec s = load_spec_text(std::string(kHead) + "arguments:\n  - {name: x, type: float*, size: 8, fill: file, path: nothing.bin}\n",
                                kBad + "inline.yaml", Spec::Format::Yaml);
  Error e = error_of([&] { s.require_runnable(); });
  EXPECT_EQ(e.kind(), Error::Kind::BadInput);
  EXPECT_NE(e.message().find("fill file"), std::string::npos) << e.what();
  EXPECT_NE(e.message().find("does not exist"), std::string::npos) << e.what();
  EXPECT_GE(e.where().line, 5) << e.what();
}

TEST(SpecErrors, CrossReferenceMistakes) {
  struct Case {
    std::string extra, part;
    int line;
  };
  const Case cases[] = {
      {"objective: gflops\n", "objective 'gflops'", 4},
      {"metrics: {time: time_ms}\n", "'time' is the measured time", 4},
      {"constants: {block_size_x: 3}\n", "has the name of a constant", 3},
      {"grid: [1]\ngrid_div_x: [block_size_x]\n", "alternatives", 5},
      {"verify: {reference: first_valid}\n", "output: true", 4},
      {"verify: {reference: {kernel: ref}, atol: -1}\narguments: [{name: x, type: float*, size: 8, output: true}]\n",
       "must not be negative", 4},
      {"strategy: {name: random_sample, max_fevals: 0}\n", "at least 1", 4},
      {"strategy: {name: random_sample, time_limit: soon}\n", "not a duration", 4},
      {"strategy: {max_fevals: 5, kappa: 2}\n", "option of a named strategy", 4},
      {"restrictions: block_size_x > 32\n", "restrictions must be a list", 4},
      {"shared_memory: '[1, 2'\n", "", 4},
  };
  for (const auto& c : cases) {
    Error e = text_error(std::string(kHead) + c.extra);
    EXPECT_EQ(e.kind(), Error::Kind::BadInput) << c.extra;
    EXPECT_NE(e.message().find(c.part), std::string::npos) << c.extra << " -> " << e.what();
    if (c.line) {
      EXPECT_EQ(e.where().line, c.line) << c.extra << " -> " << e.what();
    }
  }
  Error t = text_error("kernel: {name: k, source: k.cu, template_args: [nope]}\nproblem_size: [1]\n"
                       "tune_params: {a: [1]}\n");
  EXPECT_NE(t.message().find("template argument 'nope'"), std::string::npos) << t.what();
}

// kernel.archs: each entry is an architecture, pointed at when it is not; the
// target for a GPU or --arch is the listed entry of the same sm number.
TEST(SpecErrors, KernelArchs) {
  const std::string tail = "problem_size: [1]\ntune_params: {block_size_x: [32]}\n";
  Error e = text_error("kernel: {name: k, source: k.cu, archs: [sm_90a, sm_9x]}\n" + tail);
  EXPECT_EQ(e.kind(), Error::Kind::BadInput);
  EXPECT_EQ(e.where().line, 1);
  EXPECT_EQ(e.where().column, 49) << e.what();  // at sm_9x
  EXPECT_NE(e.message().find("'sm_9x' is not a GPU architecture"), std::string::npos) << e.what();
  e = text_error("kernel: {name: k, source: k.cu, archs: []}\n" + tail);
  EXPECT_NE(e.message().find("non-empty list"), std::string::npos) << e.what();
  e = text_error("kernel: {name: k, source: k.cu, archs: sm_90a}\n" + tail);
  EXPECT_NE(e.message().find("non-empty list"), std::string::npos) << e.what();

  const auto load = [&](const std::string& kernel) {
    return load_spec_text(kernel + "\n" + tail, kBad + "inline.yaml", Spec::Format::Yaml, {});
  };
  const Spec any = load("kernel: {name: k, source: k.cu}");
  EXPECT_EQ(any.kernel.target_arch(Arch(80))->name(), "sm_80");
  const Spec hopper = load("kernel: {name: k, source: k.cu, archs: [sm_90a, sm_100a]}");
  EXPECT_EQ(hopper.kernel.target_arch(Arch(90))->name(), "sm_90a");
  EXPECT_EQ(hopper.kernel.target_arch(Arch::parse("sm_90a"))->name(), "sm_90a");
  EXPECT_EQ(hopper.kernel.target_arch(Arch(100))->name(), "sm_100a");
  EXPECT_FALSE(hopper.kernel.target_arch(Arch(80)));
  EXPECT_FALSE(hopper.kernel.target_arch(Arch::parse("sm_90f")));  // a suffix asked for must be listed
  EXPECT_EQ(hopper.kernel.archs_text(), "sm_90a, sm_100a");
  EXPECT_NE(any.hash, hopper.hash);
}

TEST(SpecErrors, T1Mistakes) {
  const std::string params = "{\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"bs\", \"Type\": \"int\", "
                             "\"Values\": [32]}]},\n \"KernelSpecification\": {\"KernelName\": \"k\", \"KernelFile\": "
                             "\"k.cu\", \"LocalSize\": {\"X\": \"bs\"}, \"GlobalSize\": {\"X\": \"1\"}";
  struct Case {
    std::string extra, part;
  };
  const Case cases[] = {
      {", \"GlobalSizeType\": \"Vulkan\"}}", "GlobalSizeType must be"},
      {", \"Arguments\": [{\"Name\": \"a\", \"Type\": \"float\", \"MemoryType\": \"Vector\", \"Size\": 4}]}}",
       "needs the key 'FillType'"},
      {", \"Arguments\": [{\"Name\": \"a\", \"Type\": \"int32\", \"MemoryType\": \"Scalar\"}]}}",
       "needs the key 'FillValue'"},
      {"}, \"Budget\": [{\"Type\": \"Forever\", \"BudgetValue\": 1}]}", "Budget Type 'Forever'"},
      {"}, \"Search\": {\"Name\": \"Random\", \"Attributes\": [{\"Name\": \"x\"}]}}", "needs the key 'Value'"},
  };
  for (const auto& c : cases) {
    Error e = text_error(params + c.extra, Spec::Format::T1);
    EXPECT_EQ(e.kind(), Error::Kind::BadInput);
    EXPECT_NE(e.message().find(c.part), std::string::npos) << c.extra << " -> " << e.what();
    EXPECT_GE(e.where().line, 1) << e.what();
  }
  Error c = text_error("{\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"bs\", \"Type\": \"int\", "
                       "\"Values\": [32]}], \"Conditions\": [{\"Expression\": \"bs > 1\", \"Parameters\": "
                       "[\"bz\"]}]}}",
                       Spec::Format::T1);
  EXPECT_NE(c.message().find("unknown parameter 'bz'"), std::string::npos) << c.what();
}

}  // namespace
}  // namespace ktune
