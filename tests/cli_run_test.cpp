// `ktune run` on the CPU: a configuration that is no configuration of the
// space is bad input (exit 2) named before any GPU is asked for; without a
// CUDA driver the command says there is no GPU (exit 1); and what it reports
// of a run (report_run, given runs made up here) is printed and written as
// said. The GPU side is tests/gpu/cli_run_test.cpp.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tuner/build/config_text.h"
#include "tuner/cli/run.h"
#include "test_util.h"

namespace {

namespace fs = std::filesystem;

using ktune::testing::Ran;

// Runs ktune with `args`; stderr merged into the output unless asked not to.
Ran ktune(const std::string& args, bool merge_stderr = true) { return ktune::testing::run_ktune(args, merge_stderr); }

const std::string kSpec = fs::path(KTUNE_TESTS_DIR).parent_path().string() + "/templates/vector_add/vector_add.yaml";
const std::string kValid = "block_size_x=128,items_per_thread=2,vector_width=1,unroll=0,grid_stride=0";

bool has_driver() {
  const Ran r = ktune("devices --json", false);
  return nlohmann::json::parse(r.out, nullptr, false).value("driver", "") == "ready";
}

TEST(CliRun, AConfigurationOutsideTheSpaceIsBadInputNamedBeforeAnyGpu) {
  Ran r = ktune("run " + kSpec + " --config block_sise_x=128,items_per_thread=2");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("unknown parameter 'block_sise_x'; the parameters: block_size_x, items_per_thread"),
            std::string::npos) << r.out;

  r = ktune("run " + kSpec + " --config block_size_x=128,items_per_thread=3,vector_width=1,unroll=0,grid_stride=0");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("items_per_thread=3 is not one of its values: 1, 2, 4, 8, 16"), std::string::npos) << r.out;

  r = ktune("run " + kSpec + " --config block_size_x=128,items_per_thread=2");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("no value for parameter 'vector_width'"), std::string::npos) << r.out;

  // unroll == 1 or items_per_thread > 1
  r = ktune("run " + kSpec + " --config block_size_x=128,items_per_thread=1,vector_width=1,unroll=0,grid_stride=0");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("breaks the spec's restrictions"), std::string::npos) << r.out;

  r = ktune("run " + kSpec + " --config " + kValid + " --set nn=4");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("cannot set 'nn'"), std::string::npos) << r.out;
}

TEST(CliRun, OptionsAreChecked) {
  Ran r = ktune("run " + kSpec);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--config is required"), std::string::npos) << r.out;
  r = ktune("run " + kSpec + " --config " + kValid + " --gpu -1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--gpu: a GPU index, at least 0"), std::string::npos) << r.out;
  r = ktune("run " + kSpec + " --config " + kValid + " --print -3");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--print: a count, at least 0"), std::string::npos) << r.out;
  r = ktune("run " + kSpec + " --config " + kValid + " --output-dir");
  EXPECT_EQ(r.status, 2) << r.out;
  r = ktune("run --help");
  EXPECT_EQ(r.status, 0) << r.out;
  for (const char* option : {"--config", "--set", "--gpu", "--output-dir", "--print", "--all-arguments", "--json"})
    EXPECT_NE(r.out.find(option), std::string::npos) << option << '\n' << r.out;
}

TEST(CliRun, WithoutADriverItSaysThereIsNoGpu) {
  if (has_driver()) GTEST_SKIP() << "a CUDA driver is present";
  const fs::path dir = fs::temp_directory_path() / ("ktune-run-nodriver-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  Ran r = ktune("run " + kSpec + " --config " + kValid + " --set n=1024 -o " + dir.string());
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("ktune: cannot open GPU 0: no CUDA driver"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir)) << "nothing is written without a run";
  r = ktune("run " + kSpec + " --config " + kValid + " --json", false);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(r.out, "") << "no summary of a run that never started";
}

// A made-up run's buffer of floats.
ktune::gpu::HostBuffer float_buffer(const std::string& name, const std::vector<float>& values) {
  ktune::gpu::HostBuffer b{name, ktune::ElemType::F32, std::vector<std::uint8_t>(values.size() * 4)};
  std::memcpy(b.bytes.data(), values.data(), b.bytes.size());
  return b;
}

std::vector<std::uint8_t> read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

class CliRunReport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ktune-run-report-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    device_.name = "Test GPU";
    device_.cc_major = 9;
    device_.cc_minor = 0;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // report_run's text (or JSON) and exit status.
  std::string report(const ktune::Spec& spec, const std::vector<ktune::Value>& config,
                     const ktune::GpuEvaluator::Ran& ran, const ktune::cli::RunReportOptions& o, int& status) {
    std::ostringstream out;
    status = ktune::cli::report_run(spec, device_, config, ran, o, out);
    return out.str();
  }

  fs::path dir_;
  ktune::gpu::DeviceProperties device_;
};

TEST_F(CliRunReport, AVerifiedRunPrintsEachOutputAndWritesItsBytes) {
  const ktune::Spec spec = ktune::load_spec(kSpec, ktune::parse_constant_overrides({"n=5"}));
  const std::vector<ktune::Value> config = ktune::parse_config_option(spec, kValid);
  ktune::GpuEvaluator::Ran ran;
  ran.eval.status = ktune::db::Status::Ok;
  ran.eval.compile_ms = 12.34;
  ran.eval.registers = 14;
  ran.eval.shared_bytes = 0;
  ran.eval.local_bytes = 0;
  ran.verified = true;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ran.buffers = {float_buffer("c", {1.5f, 2.5f, nan, -4.0f, 0.25f}), float_buffer("a", {1, 2, 3, 4, 5})};
  ktune::gpu::HostBuffer ints{"k", ktune::ElemType::I32, std::vector<std::uint8_t>(8)};
  const std::int32_t k[2] = {-7, 16777217};  // past float's exact integers
  std::memcpy(ints.bytes.data(), k, 8);
  ran.buffers.push_back(ints);
  ktune::cli::RunReportOptions o;
  o.out_dir = (dir_ / "out").string();
  o.print = 3;
  o.all_buffers = true;
  int status = -1;
  const std::string text = report(spec, config, ran, o, status);
  EXPECT_EQ(status, 0);
  EXPECT_NE(text.find("vector_add on GPU 0: Test GPU (sm_90)\nconfiguration: " + kValid +
                      "\ncompile: NVRTC 12.3 ms, 14 registers, 0 B static shared, 0 B local\nrun: once, not timed\n"
                      "verify: ok against the reference kernel vector_add_ref\nbuffers (written to " + o.out_dir + "):\n"
                      "  c: float x 5 -> " + o.out_dir + "/c.bin\n    first 3: 1.5 2.5 nan\n"
                      "    min -4  max 2.5  mean 0.0625  NaN 1\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("  k: int32 x 2 -> " + o.out_dir + "/k.bin\n    first 2: -7 16777217\n"
                      "    min -7  max 16777217  mean 8388605\n"),
            std::string::npos) << text;
  for (const auto& b : ran.buffers) EXPECT_EQ(read_file(fs::path(o.out_dir) / (b.name + ".bin")), b.bytes) << b.name;

  o.json = true;
  o.print = 8;
  const auto j = nlohmann::json::parse(report(spec, config, ran, o, status));
  EXPECT_EQ(status, 0);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["config"]["block_size_x"], 128);
  EXPECT_EQ(j["verify"]["mode"], "reference");
  EXPECT_EQ(j["verify"]["checked"], true);
  EXPECT_EQ(j["verify"]["ok"], true);
  EXPECT_EQ(j["registers"], 14);
  ASSERT_EQ(j["buffers"].size(), 3u);
  EXPECT_EQ(j["buffers"][0]["name"], "c");
  EXPECT_EQ(j["buffers"][0]["type"], "float");
  EXPECT_EQ(j["buffers"][0]["count"], 5);
  EXPECT_EQ(j["buffers"][0]["file"], o.out_dir + "/c.bin");
  EXPECT_EQ(j["buffers"][0]["first"].size(), 5u);
  EXPECT_TRUE(j["buffers"][0]["first"][2].is_null()) << "NaN is null in JSON";
  EXPECT_DOUBLE_EQ(j["buffers"][0]["mean"].get<double>(), 0.0625);
  EXPECT_EQ(j["buffers"][0]["nan_count"], 1);
  EXPECT_EQ(j["buffers"][2]["max"], 16777217);
}

TEST_F(CliRunReport, AWrongResultShowsItsOutputsAndAFailureNone) {
  const ktune::Spec spec = ktune::load_spec(kSpec, ktune::parse_constant_overrides({"n=2"}));
  const std::vector<ktune::Value> config = ktune::parse_config_option(spec, kValid);
  ktune::GpuEvaluator::Ran ran;
  ran.eval.status = ktune::db::Status::WrongResult;
  ran.eval.reason = "c[1]: got 9, expected 3 (1 of 2 elements differ)";
  ran.eval.compile_ms = 0;
  ran.cache_hit = true;
  ran.verified = true;
  ran.mismatch = ktune::gpu::Mismatch{"c", 1, 9, 3, 1};
  ran.buffers = {float_buffer("c", {2, 9})};
  ktune::cli::RunReportOptions o;
  o.out_dir = (dir_ / "wrong").string();
  int status = -1;
  std::string text = report(spec, config, ran, o, status);
  EXPECT_EQ(status, 1);
  EXPECT_NE(text.find("compile: from the cubin cache\nrun: once, not timed\nverify: FAILED (wrong_result) against "
                      "the reference kernel vector_add_ref: c[1]: got 9, expected 3 (1 of 2 elements differ)\n"
                      "outputs (written to " + o.out_dir + "):\n  c: float x 2"),
            std::string::npos) << text;
  EXPECT_EQ(read_file(fs::path(o.out_dir) / "c.bin"), ran.buffers[0].bytes);
  o.json = true;
  auto j = nlohmann::json::parse(report(spec, config, ran, o, status));
  EXPECT_EQ(status, 1);
  EXPECT_EQ(j["status"], "wrong_result");
  EXPECT_EQ(j["verify"]["ok"], false);
  EXPECT_EQ(j["verify"]["mismatch"]["index"], 1);
  EXPECT_EQ(j["verify"]["mismatch"]["got"], 9.0);

  // The kernel failed: no outputs, nothing written, the status and its reason.
  ran = {};
  ran.eval.status = ktune::db::Status::RuntimeError;
  ran.eval.reason = "an illegal memory access was encountered";
  ran.eval.compile_ms = 100;
  ran.verified = true;
  o.json = false;
  o.out_dir = (dir_ / "failed").string();
  text = report(spec, config, ran, o, status);
  EXPECT_EQ(status, 1);
  EXPECT_NE(text.find("run: runtime_error: an illegal memory access was encountered\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("verify:"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(o.out_dir));

  // It did not compile.
  ran = {};
  ran.eval.status = ktune::db::Status::CompileError;
  ran.eval.reason = "vector_add.cu(3): error: expected a \";\"";
  ran.eval.compile_ms = 50;
  text = report(spec, config, ran, o, status);
  EXPECT_EQ(status, 1);
  EXPECT_NE(text.find("compile: FAILED (NVRTC 50.0 ms): vector_add.cu(3): error: expected a \";\"\n"),
            std::string::npos) << text;
  EXPECT_EQ(text.find("run:"), std::string::npos) << text;
}

TEST_F(CliRunReport, FirstValidIsNotCheckedAndSaysSo) {
  const ktune::Spec spec = ktune::load_spec(fs::path(KTUNE_TESTS_DIR).string() + "/data/specs/good/explicit_grid.yaml");
  ASSERT_EQ(spec.verify.mode, ktune::Verify::Mode::FirstValid);
  const std::vector<ktune::Value> config = ktune::parse_config_option(spec, "block_size_x=100");
  ktune::GpuEvaluator::Ran ran;
  ran.eval.status = ktune::db::Status::Ok;
  ran.eval.compile_ms = 1;
  ran.buffers = {float_buffer("x", {1})};
  ktune::cli::RunReportOptions o;
  int status = -1;
  std::string text = report(spec, config, ran, o, status);
  EXPECT_EQ(status, 0);
  EXPECT_NE(text.find("verify: not checked: first_valid compares each configuration with the first one that runs"),
            std::string::npos) << text;
  EXPECT_NE(text.find("outputs:\n  x: float x 1\n    first 1: 1\n"), std::string::npos) << text;
  o.json = true;
  auto j = nlohmann::json::parse(report(spec, config, ran, o, status));
  EXPECT_EQ(j["verify"]["mode"], "first_valid");
  EXPECT_EQ(j["verify"]["checked"], false);
  EXPECT_FALSE(j["verify"].contains("ok"));
  EXPECT_FALSE(j["buffers"][0].contains("file")) << "nothing written without a folder";
}

}  // namespace
