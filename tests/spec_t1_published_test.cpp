// T1 files as the world writes them: extension keys, case and spelling
// variants, draft layouts without a kernel, Kernel Tuner's size expressions,
// BAT's shared-memory names and Kernel Tuner's block-size defaults. Every
// file here is written for the test; none is copied from another project.
#include <gtest/gtest.h>

#include <fstream>

#include "ktune/error.h"
#include "test_util.h"
#include "tuner/spec/spec.h"

namespace ktune {
namespace {

using testing::error_of;
using testing::TempDir;

std::string write(const TempDir& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir.file(name)) << text;
  return dir.file(name);
}

size_t count_notes(const Spec& s, const std::string& part) {
  size_t n = 0;
  for (const auto& note : s.notes) n += note.find(part) != std::string::npos;
  return n;
}

std::vector<Value> first_valid(const Spec& s) { return s.space().values(s.space().at(0)); }

// A file in the style of a benchmark suite's: sections in other cases, keys the
// schema does not define in most sections, BAT's Constraints and blockSize.
const char* kSuiteStyle = R"json({
  "general": {"BenchmarkName": "scale", "FormatVersion": "0.0.1", "Objective": "GFLOPs", "Minimize": false,
              "BenchmarksPath": "benchmarks"},
  "SearchSettings": {"TunerName": "optuna", "Trials": 10},
  "ConfigurationSpace": {
    "TuningParameters": [
      {"Name": "BLOCK", "Type": "int32", "Values": "[2**i for i in range(5, 11)]", "Default": [256]},
      {"Name": "UNROLL", "Type": "int", "Values": [1, 2, 4], "Default": "as many as fit"},
      {"Name": "USE_TEX", "Type": "boolean", "Default": false}
    ],
    "constraints": ["BLOCK * UNROLL <= 2048"]
  },
  "benchmarkConfig": {"dataSize": 65536},
  "kernelSpecification": {
    "language": "CUDA",
    "kernelName": "scale",
    "kernelFile": "scale.cu",
    "blockSize": {"X": "BLOCK", "Y": 1, "Z": 1},
    "gridSize": {"X": "dataSize // BLOCK // UNROLL", "Y": 1, "Z": 1},
    "sharedMemory": "4*BLOCK_SIZE_X",
    "SharedMemoryOriginal": 0,
    "arguments": [
      {"Name": "out", "Type": "float", "length": "dataSize", "memoryType": "vector", "accessType": "ReadWrite",
       "fillType": "uninitialized"},
      {"Name": "in", "Type": "float", "length": "dataSize", "memoryType": "Vector", "accessType": "ReadOnly",
       "fillType": "random", "RandomSeed": 42, "Comment": "uniform in [0, 1)"},
      {"Name": "n", "Type": "int", "memoryType": "scalar", "accessType": "ReadOnly", "value": 65536}
    ]
  }
})json";

TEST(SpecT1Published, ExtensionKeysAreNotesAndOtherSpellingsAreRead) {
  TempDir dir;
  write(dir, "scale.cu", "extern \"C\" __global__ void scale(float* o, const float* i, int n) {}\n");
  const Spec s = load_spec(write(dir, "suite.json", kSuiteStyle));
  ASSERT_EQ(s.space().parameters().size(), 3u);
  EXPECT_EQ(s.space().parameters()[2].values, (std::vector<Value>{false, true}));  // a bool without Values
  EXPECT_EQ(s.restrictions.size(), 1u);
  EXPECT_EQ(s.kernel.name, "scale");
  ASSERT_EQ(s.arguments.size(), 3u);
  EXPECT_EQ(s.arguments[0].size, 65536);
  EXPECT_EQ(s.arguments[0].fill.kind, ArgFill::Kind::Zeros);
  EXPECT_EQ(s.arguments[1].fill.kind, ArgFill::Kind::Random);
  EXPECT_EQ(s.arguments[1].fill.seed, std::optional<uint64_t>(42));
  EXPECT_EQ(s.arguments[2].value, Value(65536));
  // Each unknown key once, with its place; each respelling once.
  EXPECT_EQ(count_notes(s, "suite.json:4:3: 'SearchSettings' in the T1 file is not a T1 key ktune reads"), 1u);
  ASSERT_EQ(count_notes(s, "Objective 'GFLOPs' (higher is better) is ranked by time"), 1u);
  for (const auto& note : s.notes)  // with its place
    if (note.find("Objective 'GFLOPs'") != std::string::npos) {
      EXPECT_NE(note.find("suite.json:2:"), std::string::npos) << note;
    }
  EXPECT_EQ(s.objective, "time");
  EXPECT_EQ(count_notes(s, "'BenchmarksPath' in General"), 1u);
  EXPECT_EQ(count_notes(s, "'SharedMemoryOriginal' in KernelSpecification"), 1u);
  EXPECT_EQ(count_notes(s, "'Comment' in an Arguments entry"), 1u);
  EXPECT_EQ(count_notes(s, "'kernelSpecification' in the T1 file read as 'KernelSpecification'"), 1u);
  EXPECT_EQ(count_notes(s, "'constraints' in ConfigurationSpace read as 'Conditions'"), 1u);
  EXPECT_EQ(count_notes(s, "'memoryType' in an Arguments entry read as 'MemoryType'"), 1u);  // three entries, one note
  EXPECT_EQ(count_notes(s, "'length' in an Arguments entry read as 'Size'"), 1u);
  // BAT evaluates SharedMemory with the launch in scope: BLOCK_SIZE_X is the block's x.
  const LaunchResult r = s.geometry(first_valid(s));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.launch->shared_memory, 4 * r.launch->block[0]);
  EXPECT_EQ(r.launch->grid[0], 65536 / r.launch->block[0] / s.space().values(s.space().at(0))[1].as_int());
}

// BAT's Objective and Minimize: time and energy are what they say, a
// throughput is ranked by time (noted above); a direction that contradicts
// the name, or an objective ktune does not measure, is refused at its place.
TEST(SpecT1Published, TheObjectiveIsReadOrRefused) {
  TempDir dir;
  write(dir, "scale.cu", "extern \"C\" __global__ void scale(float* o, const float* i, int n) {}\n");
  auto with_general = [&](const std::string& general) {
    std::string text = kSuiteStyle;
    const size_t from = text.find("{\"BenchmarkName\"");
    const size_t to = text.find("},", from) + 1;
    text.replace(from, to - from, general);
    return write(dir, "objective.json", text);
  };
  EXPECT_EQ(load_spec(with_general(R"({"Objective": "time", "Minimize": true})")).objective, "time");
  EXPECT_EQ(load_spec(with_general(R"({"Objective": "energy"})")).objective, "energy");
  EXPECT_EQ(load_spec(with_general(R"({"Objective": "GB/s"})")).objective, "time");
  for (const std::string bad : {R"({"Objective": "time", "Minimize": false})", R"({"Objective": "GFLOPs", "Minimize": true})",
                                R"({"Objective": "power"})", R"({"Minimize": false})", R"({"Objective": "time", "Minimize": "no"})"}) {
    const Error e = error_of([&] { load_spec(with_general(bad)); });
    EXPECT_EQ(e.kind(), Error::Kind::BadInput) << bad;
    EXPECT_EQ(e.where().line, 2) << bad << ": " << e.what();
  }
}

TEST(SpecT1Published, AMisspeltKnownKeyIsRefusedWithAHint) {
  TempDir dir;
  std::string text = kSuiteStyle;
  text.replace(text.find("\"sharedMemory\""), 14, "\"SharedMemroy\"");
  const Error e = error_of([&] { load_spec(write(dir, "typo.json", text)); });  // a misspelt key is not dropped
  EXPECT_EQ(e.kind(), Error::Kind::BadInput);
  EXPECT_NE(e.message().find("did you mean 'SharedMemory'"), std::string::npos) << e.what();
  EXPECT_EQ(e.where().line, 20) << e.what();
}

TEST(SpecT1Published, TwoSpellingsOfOneKeyAreAmbiguous) {
  TempDir dir;
  std::string text = kSuiteStyle;
  text.replace(text.find("\"constraints\""), 13, "\"Conditions\": [], \"Constraints\"");
  EXPECT_THROW(load_spec(write(dir, "twice.json", text)), Error);
}

// BAT's draft layout (lower-case sections, kernels under another key) and a
// kernel in OpenCL: the space is counted; compiling stops with the reason.
TEST(SpecT1Published, AFileWithoutACudaKernelHasASpaceButNothingToCompile) {
  TempDir dir;
  const Spec draft = load_spec(write(dir, "draft.json", R"json({
    "general": {"FormatVersion": "0.0.1"},
    "configuration_space": {
      "tuning_parameters": [{"name": "BLOCK_SIZE", "type": "int32", "values": "list(range(32, 1024+1, 32))"},
                            {"name": "FORMAT", "type": "int32", "values": [0, 1, 2]}],
      "constraints": []},
    "function_specification": [{"name": "spmv", "arguments": []}]
  })json"));
  EXPECT_EQ(draft.space().count_valid(), 96u);
  EXPECT_EQ(count_notes(draft, "'function_specification' in the T1 file is not a T1 key"), 1u);
  EXPECT_EQ(count_notes(draft, "no KernelSpecification"), 1u);
  const Error nothing = error_of([&] { draft.require_runnable(); });  // nothing to compile
  EXPECT_EQ(nothing.kind(), Error::Kind::BadInput);
  EXPECT_NE(nothing.message().find("no KernelSpecification"), std::string::npos) << nothing.what();
  std::string ocl = kSuiteStyle;
  ocl.replace(ocl.find("\"language\": \"CUDA\""), 18, "\"Language\": \"OpenCL\"");
  write(dir, "scale.cu", "");
  const Spec opencl = load_spec(write(dir, "opencl.json", ocl));
  EXPECT_GT(opencl.space().count_valid(), 0u);
  const Error ocl_error = error_of([&] { opencl.require_runnable(); });  // NVRTC compiles no OpenCL
  EXPECT_NE(ocl_error.message().find("Language 'OpenCL'"), std::string::npos) << ocl_error.what();
  EXPECT_EQ(ocl_error.where().line, 15) << ocl_error.what();
}

// A hyper-parameter space in the style of Kernel Tuner's hypertuner files: a
// "kernel" in no language ktune launches, carrying a CUDA kernel's geometry
// that names parameters it does not have, one parameter listed twice, and
// numbers of another kind than the declared Type. Kernel Tuner reads such a
// file (Values are evaluated as written; the geometry is never used), so
// ktune reads its space, with a note for each; where the file is ambiguous
// or would be launched, it still stops.
TEST(SpecT1Published, AHyperParameterSpaceIsReadAsKernelTunerReadsIt) {
  TempDir dir;
  const std::string text = R"json({
    "General": {"BenchmarkName": "meta_annealing", "OutputFormat": "JSON"},
    "ConfigurationSpace": {
      "TuningParameters": [
        {"Name": "restarts", "Type": "int", "Values": "[1, 2, 4]", "Default": 2},
        {"Name": "cooling", "Type": "int", "Values": "[0.9, 0.95, 0.99]", "Default": 0.95},
        {"Name": "restarts", "Type": "int", "Values": "[1, 2, 4]", "Default": 2},
        {"Name": "start", "Type": "uint", "Values": "[-1, 0, 1]", "Default": 0}
      ],
      "Conditions": []
    },
    "KernelSpecification": {
      "Language": "Hypertuner", "KernelName": "meta_annealing", "KernelFile": "dummy.cu",
      "LocalSize": {"X": "block_size_x", "Y": "block_size_y", "Z": "1"},
      "GridDivX": ["block_size_x", "tile_size_x"], "ProblemSize": [4096, 1, 1], "Arguments": []
    }
  })json";
  const Spec s = load_spec(write(dir, "meta.json", text));
  ASSERT_EQ(s.space().parameters().size(), 3u);
  EXPECT_EQ(s.space().count_valid(), 27u);
  EXPECT_EQ(s.space().parameters()[1].values[2], Value(0.99));
  EXPECT_EQ(s.space().parameters()[2].values[0], Value(int64_t(-1)));
  EXPECT_EQ(count_notes(s, "'cooling' has Type int but the value 0.9 is not one; its values are taken as written"),
            1u);
  EXPECT_EQ(count_notes(s, "'start' has Type uint but the value -1 is not one"), 1u);
  EXPECT_EQ(count_notes(s, "meta.json:7:19: parameter 'restarts' is declared again with the same values (first "
                           "at line 5)"),
            1u);
  EXPECT_EQ(count_notes(s, "unknown name 'tile_size_x'"), 1u);
  EXPECT_EQ(count_notes(s, "the launch geometry is not used"), 1u);
  EXPECT_THROW(s.require_runnable(), Error);
  // What Kernel Tuner's hyper-parameter tuning scores a setting by.
  EXPECT_EQ(s.objective, "score");
  EXPECT_TRUE(s.higher_is_better);
  EXPECT_TRUE(s.objective_recorded);
  EXPECT_EQ(count_notes(s, "the objective is the recorded 'score' (higher is better)"), 1u);

  // Listed twice with other values: which one is meant is unknown.
  std::string other = text;
  other.replace(other.rfind("\"[1, 2, 4]\""), 11, "\"[1, 2, 8]\"");
  const Error twice = error_of([&] { load_spec(write(dir, "other.json", other)); });
  EXPECT_EQ(twice.where().line, 7) << twice.what();
  EXPECT_NE(twice.message().find("with other values"), std::string::npos) << twice.what();
  // A string where a number was declared is not a number taken as written.
  std::string word = text;
  word.replace(word.find("[0.9, 0.95, 0.99]"), 17, "['slow', 'fast']");
  EXPECT_THROW(load_spec(write(dir, "word.json", word)), Error);
  // A CUDA kernel's geometry must name what exists: it decides the launch.
  std::string cuda = text;
  cuda.replace(cuda.find("Hypertuner"), 10, "CUDA");
  write(dir, "dummy.cu", "extern \"C\" __global__ void meta_annealing() {}\n");
  const Error geometry = error_of([&] { load_spec(write(dir, "cuda.json", cuda)); });
  EXPECT_NE(geometry.message().find("unknown name 'tile_size_x'"), std::string::npos) << geometry.what();
  EXPECT_EQ(geometry.where().line, 15) << geometry.what();
}

// Kernel Tuner's T1 convention: an argument's Size sees ProblemSize (a list)
// and each parameter as the list of its values.
TEST(SpecT1Published, SizesSeeProblemSizeAndParameterLists) {
  TempDir dir;
  write(dir, "conv.cu", "extern \"C\" __global__ void conv(float* o, const float* i, const float* f) {}\n");
  const Spec s = load_spec(write(dir, "conv.json", R"json({
    "ConfigurationSpace": {
      "TuningParameters": [
        {"Name": "block_size_x", "Type": "int", "Values": "[16*i for i in range(1, 9)]"},
        {"Name": "filter_width", "Type": "int", "Values": "[3, 5, 7]"},
        {"Name": "filter_height", "Type": "int", "Values": "[3, 5]"}],
      "Conditions": []},
    "KernelSpecification": {
      "Language": "CUDA", "KernelName": "conv", "KernelFile": "conv.cu",
      "ProblemSize": [1024, 768], "GridDivX": ["block_size_x"], "GridDivY": ["block_size_y"],
      "LocalSize": {"X": "block_size_x", "Y": "1", "Z": "1"},
      "GlobalSize": {"X": "1", "Y": "1", "Z": "1"},
      "Device": {"Name": "NVIDIA A100-PCIE-40GB"},
      "Arguments": [
        {"Name": "o", "Type": "float", "MemoryType": "Vector", "Size": "ProblemSize[0]*ProblemSize[1]",
         "FillType": "Constant", "FillValue": 0.0},
        {"Name": "i", "Type": "float", "MemoryType": "Vector",
         "Size": "(ProblemSize[0]+max(filter_width)-1) * (ProblemSize[-1]+max(filter_height)-1)",
         "FillType": "Random", "FillValue": 1.0},
        {"Name": "f", "Type": "float", "MemoryType": "Vector", "Size": "sum([max(filter_height)] * 2) * 7",
         "FillType": "Random", "FillValue": 1.0}]}
  })json"));
  ASSERT_EQ(s.arguments.size(), 3u);
  EXPECT_EQ(s.arguments[0].size, 1024 * 768);
  EXPECT_EQ(s.arguments[1].size, (1024 + 7 - 1) * (768 + 5 - 1));
  EXPECT_EQ(s.arguments[2].size, 10 * 7);
  EXPECT_EQ(count_notes(s, "Device is not used to pick a GPU"), 1u);
  // block_size_y is no parameter: Kernel Tuner takes it as 1 in a grid divisor.
  const LaunchResult r = s.geometry(first_valid(s));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.launch->grid[1], 768);
}

// Kernel Tuner counts a configuration of more than 1024 threads as invalid;
// so does ktune's space, and says it applied that limit.
TEST(SpecT1Published, ThreadsPerBlockBeyondTheDeviceLimitAreNotValid) {
  TempDir dir;
  write(dir, "k.cu", "");
  const Spec s = load_spec(write(dir, "k.json", R"json({
    "ConfigurationSpace": {"TuningParameters": [
        {"Name": "block_size_x", "Type": "int", "Values": [32, 64, 128, 256, 512, 1024]},
        {"Name": "block_size_y", "Type": "int", "Values": [1, 2, 4, 8]}]},
    "KernelSpecification": {"KernelName": "k", "KernelFile": "k.cu",
      "LocalSize": {"X": "block_size_x", "Y": "block_size_y"}, "GlobalSize": {"X": "1"}}
  })json"));
  // 24 combinations; over 1024 threads: 512x4, 512x8, 1024x2, 1024x4, 1024x8, 256x8 is 2048 too.
  EXPECT_EQ(s.space().count_valid(), 18u);
  EXPECT_EQ(s.device_limits, (std::vector<std::string>{"threads per block <= 1024"}));
  EXPECT_TRUE(s.restrictions.empty());  // the user's restrictions are still only the user's
}

TEST(SpecT1Published, ABlockThatCannotPassTheLimitAddsNoRestriction) {
  TempDir dir;
  write(dir, "k.cu", "");
  const Spec s = load_spec(write(dir, "k.json", R"json({
    "ConfigurationSpace": {"TuningParameters": [{"Name": "bs", "Type": "int", "Values": [32, 64]}]},
    "KernelSpecification": {"KernelName": "k", "KernelFile": "k.cu", "LocalSize": {"X": "bs"},
                            "GlobalSize": {"X": "1"}}
  })json"));
  EXPECT_EQ(s.space().restrictions().size(), 0u);
  EXPECT_EQ(s.device_limits.size(), 1u);
}

}  // namespace
}  // namespace ktune

namespace ktune {
namespace {

// A T1 file cannot name a reference; `tune --verify first-valid` checks every
// configuration against the first that runs, and the spec's identity says so.
TEST(SpecT1Published, FirstValidVerificationCanBeAskedFor) {
  Spec s = load_spec(std::string(KTUNE_TESTS_DIR) + "/data/specs/t1/matmul_t1.json");
  ASSERT_EQ(s.verify.mode, Verify::Mode::None);
  const std::string before = s.hash;
  s.verify_against_first_valid();
  EXPECT_EQ(s.verify.mode, Verify::Mode::FirstValid);
  EXPECT_NE(s.hash, before);
  EXPECT_THROW(s.verify_against_first_valid(), Error);  // it verifies already
  TempDir dir;
  write(dir, "k.cu", "extern \"C\" __global__ void k(float* a) {}\n");
  Spec none = load_spec(write(dir, "k.json", R"json({
    "ConfigurationSpace": {"TuningParameters": [{"Name": "bs", "Type": "int", "Values": [32, 64]}]},
    "KernelSpecification": {"KernelName": "k", "KernelFile": "k.cu", "LocalSize": {"X": "bs"}, "GlobalSize": {"X": "1"},
      "Arguments": [{"Name": "a", "Type": "float", "MemoryType": "Vector", "Size": 64, "FillType": "Random"}]}
  })json"));
  EXPECT_THROW(none.verify_against_first_valid(), Error);  // no output to compare
}

}  // namespace
}  // namespace ktune
