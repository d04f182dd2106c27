// SIGINT and SIGTERM (Slurm's time limit) stop `ktune tune` as Ctrl-C does:
// the summary of what finished, `"interrupted": true` in --json, and exit
// 130 or 143 (128 + the signal, as a shell reports it). The signal is made
// pending before the program starts (blocked, raised, then exec'd with it
// blocked), so it arrives the moment the run starts catching it: no timing.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

namespace fs = std::filesystem;

const std::string kRoot = fs::path(KTUNE_TESTS_DIR).parent_path().string();

// Runs `ktune args...` with `sig` pending from the start; its exit status
// (-1 when it did not exit) and what it printed on stdout.
std::pair<int, std::string> run_with_pending(int sig, std::vector<std::string> args, const std::string& out_file) {
  std::vector<char*> argv;
  std::string program = KTUNE_BINARY;
  argv.push_back(program.data());
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t child = ::fork();
  if (child == 0) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_BLOCK, &set, nullptr);
    ::kill(::getpid(), sig);  // pending: blocked across exec
    const int fd = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = ::open("/dev/null", O_WRONLY);
    if (fd < 0 || null < 0) ::_exit(126);
    ::dup2(fd, 1);
    ::dup2(null, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  std::ifstream in(out_file);
  std::stringstream text;
  text << in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

void expect_interrupted_summary(int sig, int exit_status) {
  ktune::testing::TempDir dir;
  const auto [status, out] = run_with_pending(
      sig,
      {"tune", kRoot + "/templates/triad/triad.yaml", "--simulate", kRoot + "/examples/data/triad_h100.json", "--json",
       "--db", dir.file("k.db")},
      dir.file("out.json"));
  EXPECT_EQ(status, exit_status);
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(out)) << out;
  EXPECT_TRUE(j.at("interrupted").get<bool>());
  EXPECT_EQ(j.at("stop"), "interrupted");
}

TEST(Signals, SigtermStopsATuneRunWithItsSummaryAndExit143) { expect_interrupted_summary(SIGTERM, 143); }

TEST(Signals, SigintStopsATuneRunWithItsSummaryAndExit130) { expect_interrupted_summary(SIGINT, 130); }

}  // namespace
