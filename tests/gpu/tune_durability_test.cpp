// A GPU run commits each evaluation as it completes, not when its batch
// (64 configurations for brute_force) is done: the rows appear one by one
// while the batch is measured, a kill -9 keeps every finished one, and the
// next run resumes from them.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cli_run.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using ktune::gpu_test::ktune_binary;
using ktune::gpu_test::run;
using ktune::gpu_test::scratch_db;
using ktune::gpu_test::tests_dir;
using ktune::gpu_test::tune_summary;

// Configurations with a row in the evaluations table (a run's final
// re-measure adds rows, not configurations); 0 while the database does not exist yet.
int64_t evaluations(const fs::path& db) {
  if (!fs::exists(db)) return 0;
  sqlite3* h = nullptr;
  int64_t n = 0;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(h, 1000);
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(h, "SELECT count(DISTINCT config_key) FROM evaluations", -1, &s, nullptr) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW)
      n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
  }
  sqlite3_close(h);
  return n;
}

pid_t start_tune(const std::string& spec, const std::string& max_fevals, const fs::path& db) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(126);
    const std::string bin = ktune_binary();
    execl(bin.c_str(), bin.c_str(), "tune", spec.c_str(), "--strategy", "brute_force", "--batch", "64",
          "--max-fevals", max_fevals.c_str(), "--no-prior", "--db", db.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

TEST(TuneDurability, EachEvaluationIsCommittedAsItCompletes) {
  if (auto why = ktune::gpu_test::no_gpu()) GTEST_SKIP() << *why;
  const fs::path db = scratch_db("durability");
  const std::string spec = (tests_dir().parent_path() / "templates/vector_add/vector_add.yaml").string();

  // One batch of 64: when did the first and the last row become visible?
  pid_t pid = start_tune(spec, "64", db);
  std::optional<Clock::time_point> first, last;
  int64_t seen = 0;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    const int64_t n = evaluations(db);
    if (n > seen) {
      if (!first) first = Clock::now();
      last = Clock::now();
      seen = n;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ASSERT_EQ(evaluations(db), 64);
  ASSERT_TRUE(first && last);
  // 64 measurements of 3 x 256 MiB take well over 200 ms; committed only at
  // the batch's end, all 64 rows would appear within a few milliseconds.
  const double spread_ms = std::chrono::duration<double, std::milli>(*last - *first).count();
  EXPECT_GT(spread_ms, 200.0) << "rows appeared within " << spread_ms << " ms";

  // kill -9 in the middle of the next batch: every finished row stays.
  pid = start_tune(spec, "0", db);
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (evaluations(db) < 64 + 10 && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  const int64_t kept = evaluations(db);
  ASSERT_GE(kept, 64 + 10);

  std::string out;
  const auto j = tune_summary(spec + " --strategy brute_force --max-fevals 0 --no-prior", db, out);
  ASSERT_FALSE(j.is_null()) << out;
  EXPECT_EQ(j["resumed"].get<int64_t>(), kept) << out;
  EXPECT_EQ(j["resumed"].get<int64_t>() + j["evaluations"].get<int64_t>(), 246) << out;
  EXPECT_EQ(j["stop"], "space_exhausted");
  fs::remove(db);
}

}  // namespace

namespace {

// The time limit (wall time on a GPU) ends a run inside brute_force's first
// batch of 64: no measurement starts after it (before, the whole batch ran).
TEST(TuneBudget, TimeLimitEndsTheRunInsideABatch) {
  if (auto why = ktune::gpu_test::no_gpu()) GTEST_SKIP() << *why;
  const fs::path db = scratch_db("timelimit");
  const std::string spec = (tests_dir().parent_path() / "templates/vector_add/vector_add.yaml").string();
  std::string out;
  const auto j = tune_summary(spec + " --strategy brute_force --max-fevals 0 --time-limit 500ms --no-prior", db, out);
  ASSERT_FALSE(j.is_null()) << out;
  EXPECT_EQ(j["stop"], "time_limit") << out;
  const int64_t n = j["evaluations"].get<int64_t>();
  EXPECT_GT(n, 0);
  EXPECT_LT(n, 64) << out;
  // The last measurement started before 0.5 s: without its time (at most
  // its compile, load, verify, benchmark and framework time) the run is
  // under the limit. (A cold cubin cache makes the first turn ~2 s long.)
  // The search's own rows, without those of the final re-measure of the top
  // configurations that follows it.
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : nlohmann::json::parse(run(ktune_binary() + " results --json --sort id --db " + db.string())))
    if (r.value("reason", "").rfind("re-measured", 0) != 0) rows.push_back(r);
  ASSERT_EQ(rows.size(), static_cast<size_t>(n));
  double last_ms = 0;
  for (const char* k : {"compile_ms", "load_ms", "verify_ms", "benchmark_ms", "framework_ms"})
    last_ms += rows.back().value(k, 0.0);
  EXPECT_LT(j["elapsed_s"].get<double>() - last_ms / 1000.0, 0.5) << out;
  fs::remove(db);
}

}  // namespace
