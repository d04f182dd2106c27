// `ktune run` on a GPU: one configuration of the vector_add template, run
// once and verified against its reference kernel, writes c, a and b as raw
// files; c == a + b element for element, and a and b hold the bytes tuning
// fills them with. A configuration that computes a wrong element is reported
// wrong_result (exit 1) with its outputs written; one that faults, with no files.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_run.h"
#include "tuner/gpu/args.h"
#include "tuner/spec/spec.h"
#include "tuner/tune/engine_arguments.h"
#include "tuner/tune/gpu_evaluator.h"

namespace {

namespace fs = std::filesystem;
using ktune::gpu_test::ktune_binary;
using ktune::gpu_test::run;
using ktune::gpu_test::tests_dir;

std::vector<std::uint8_t> read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::vector<float> floats(const std::vector<std::uint8_t>& bytes) {
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

fs::path scratch_dir(const std::string& test) {
  const fs::path d = fs::temp_directory_path() / ("ktune-run-" + test + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

TEST(CliRunGpu, VectorAddWritesCEqualToAPlusBAndTheInputsTuningFills) {
  if (auto why = ktune::gpu_test::no_gpu()) GTEST_SKIP() << *why;
  const std::string spec = (tests_dir().parent_path() / "templates/vector_add/vector_add.yaml").string();
  const int n = 100003;  // not a multiple of a block's items: the tail is written too
  const std::string set = " --set n=" + std::to_string(n);
  const std::string config = " --config block_size_x=128,items_per_thread=2,vector_width=1,unroll=1,grid_stride=0";
  const fs::path dir = scratch_dir("vector_add");
  const std::string out =
      run(ktune_binary() + " run " + spec + config + set + " -o " + dir.string() + " --all-arguments --json 2>&1");
  const size_t brace = out.find("{\n");
  ASSERT_NE(brace, std::string::npos) << out;
  const auto j = nlohmann::json::parse(out.substr(brace));
  EXPECT_EQ(j["status"], "ok") << out;
  EXPECT_EQ(j["verify"]["mode"], "reference") << out;
  EXPECT_EQ(j["verify"]["checked"], true) << out;
  EXPECT_EQ(j["verify"]["ok"], true) << out;
  ASSERT_EQ(j["buffers"].size(), 3u) << out;  // c, a, b; the scalar n is no buffer
  EXPECT_EQ(j["buffers"][0]["name"], "c");
  EXPECT_EQ(j["buffers"][0]["count"], n);
  EXPECT_EQ(j["buffers"][0]["first"].size(), 8u);
  EXPECT_EQ(j["buffers"][0]["nan_count"], 0);

  const std::vector<float> c = floats(read_file(dir / "c.bin"));
  const std::vector<std::uint8_t> a_bytes = read_file(dir / "a.bin"), b_bytes = read_file(dir / "b.bin");
  const std::vector<float> a = floats(a_bytes), b = floats(b_bytes);
  ASSERT_EQ(c.size(), size_t(n));
  ASSERT_EQ(a.size(), size_t(n));
  ASSERT_EQ(b.size(), size_t(n));
  size_t wrong = 0;
  for (int i = 0; i < n; ++i)
    if (c[i] != a[i] + b[i] && wrong++ < 5) ADD_FAILURE() << "c[" << i << "] = " << c[i] << ", a + b = " << a[i] + b[i];
  EXPECT_EQ(wrong, 0u);
  // The inputs as tuning fills them, byte for byte.
  const ktune::Spec s = ktune::load_spec(spec, ktune::parse_constant_overrides({"n=" + std::to_string(n)}));
  for (const ktune::gpu::ArgSpec& arg : ktune::engine_arguments(s)) {
    if (arg.name == "a") {
      EXPECT_EQ(a_bytes, ktune::gpu::fill_host(arg));
    } else if (arg.name == "b") {
      EXPECT_EQ(b_bytes, ktune::gpu::fill_host(arg));
    }
  }

  // Without --all-arguments: the output alone, and the text summary.
  const fs::path only = scratch_dir("vector_add_outputs");
  const std::string text = run(ktune_binary() + " run " + spec + config + set + " -o " + only.string() + " --print 3 2>&1");
  EXPECT_NE(text.find("verify: ok against the reference kernel vector_add_ref"), std::string::npos) << text;
  EXPECT_NE(text.find("first 3:"), std::string::npos) << text;
  EXPECT_TRUE(fs::exists(only / "c.bin")) << text;
  EXPECT_FALSE(fs::exists(only / "a.bin")) << text;
  EXPECT_EQ(read_file(only / "c.bin"), read_file(dir / "c.bin"));
  fs::remove_all(dir);
  fs::remove_all(only);
}

TEST(CliRunGpu, AWrongResultIsReportedWithItsOutputsAndAFaultWithout) {
  if (auto why = ktune::gpu_test::no_gpu()) GTEST_SKIP() << *why;
  const std::string spec = (tests_dir() / "data/specs/broken/broken.yaml").string();
  const fs::path dir = scratch_dir("broken");
  // fault_mode 3: element 1234 is one too large.
  std::string cmd = ktune_binary() + " run " + spec + " --config fault_mode=3,block_size_x=256 --set n=65536 -o " +
                    dir.string() + " --all-arguments --json";
  std::string out = run(cmd + " 2>&1; echo \"exit $?\"");
  EXPECT_NE(out.find("exit 1"), std::string::npos) << out;
  auto j = nlohmann::json::parse(out.substr(out.find("{\n"), out.rfind("exit") - out.find("{\n")));
  EXPECT_EQ(j["status"], "wrong_result") << out;
  EXPECT_EQ(j["verify"]["ok"], false) << out;
  EXPECT_EQ(j["verify"]["mismatch"]["index"], 1234) << out;
  const std::vector<float> c = floats(read_file(dir / "c.bin")), a = floats(read_file(dir / "a.bin"));
  ASSERT_EQ(c.size(), 65536u);
  ASSERT_EQ(a.size(), 65536u);
  EXPECT_EQ(c[1234], 2.0f * a[1234] + 1.0f);
  EXPECT_EQ(c[1233], 2.0f * a[1233]);
  fs::remove_all(dir);
  out = run(ktune_binary() + " run " + spec + " --config fault_mode=3,block_size_x=256 --set n=65536 2>&1");
  EXPECT_NE(out.find("verify: FAILED (wrong_result) against the reference kernel broken_ref: "), std::string::npos)
      << out;
  EXPECT_NE(out.find("outputs:\n  c: float x 65536\n"), std::string::npos) << out;

  // fault_mode 1: a write far outside the allocation.
  cmd = ktune_binary() + " run " + spec + " --config fault_mode=1,block_size_x=256 --set n=65536 -o " + dir.string();
  out = run(cmd + " 2>&1; echo \"exit $?\"");
  EXPECT_NE(out.find("exit 1"), std::string::npos) << out;
  EXPECT_NE(out.find("run: runtime_error: "), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir / "c.bin")) << out;
  fs::remove_all(dir);
}

}  // namespace
