// `ktune run` on the CPU: a configuration that is no configuration of the
// space is bad input (exit 2) named before any GPU is asked for, and without a
// CUDA driver the command says there is no GPU (exit 1). The GPU side is
// tests/gpu/cli_run_test.cpp.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace {

namespace fs = std::filesystem;

struct Ran {
  int status = -1;
  std::string out;
};

// Runs ktune with `args` (a shell-quoted string); stdout captured, stderr too when asked.
Ran ktune(const std::string& args, bool merge_stderr = true) {
  const std::string cmd = std::string(KTUNE_BINARY) + " " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  Ran r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

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

}  // namespace
