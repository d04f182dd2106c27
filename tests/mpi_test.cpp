// `mpirun -n 3 ktune tune ... --simulate DATA`: rank 0 tunes and stores, the
// other ranks replay their share (tuner/mpi/). The job must find what one
// process finds and store each configuration once. Skipped where mpirun is
// absent; where ktune was built without MPI, the job must be refused (exit 2).
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "db/store.h"
#include "test_util.h"

namespace {

namespace fs = std::filesystem;

struct Ran {
  int status = -1;
  std::string out;
};

Ran shell(const std::string& cmd) {
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

bool have_mpirun() { return shell("command -v mpirun >/dev/null 2>&1").status == 0; }

// CI runs as root on 2 cores: three ranks oversubscribe them, and Open MPI
// wants root said out loud. The timeout keeps a wedged job from hanging ctest.
std::string mpirun(int ranks) {
  std::string cmd = "OMPI_MCA_btl_vader_single_copy_mechanism=none timeout 120 mpirun --oversubscribe -n " +
                    std::to_string(ranks);
  if (::geteuid() == 0) cmd += " --allow-run-as-root";
  return cmd + " " + KTUNE_BINARY;
}

const std::string kRoot = fs::path(KTUNE_TESTS_DIR).parent_path().string();
const std::string kSpec = kRoot + "/templates/triad/triad.yaml";
const std::string kData = kRoot + "/examples/data/triad_h100.json";

[[maybe_unused]] std::set<std::string> stored_keys(const std::string& db, size_t& rows) {
  ktune::db::StoreOptions ro;
  ro.read_only = true;
  ktune::db::Store s(db, ro);
  std::set<std::string> keys;
  const auto all = s.results({});
  rows = all.size();
  for (const auto& r : all) keys.insert(r.config_key);
  return keys;
}

TEST(Mpi, ThreeRanksReplayAnExhaustiveRecordingAsOneProcessDoes) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found (apt-get install openmpi-bin): the MPI run is not tested here";
  ktune::testing::TempDir dir;
  const std::string args = " tune " + kSpec + " --simulate " + kData + " --strategy brute_force --max-fevals 0 --json";
  const Ran one = shell(std::string(KTUNE_BINARY) + args + " --db " + dir.file("one.db") + " 2>/dev/null");
  ASSERT_EQ(one.status, 0) << one.out;
  const Ran three = shell(mpirun(3) + args + " --db " + dir.file("mpi.db") + " 2>&1");
#if KTUNE_WITH_MPI
  ASSERT_EQ(three.status, 0) << three.out;
  // One report: rank 0's, after rank 0's banner lines on stderr.
  const size_t open = three.out.find("\n{");
  ASSERT_NE(open, std::string::npos) << three.out;
  ASSERT_EQ(three.out.find("\n{", open + 1), std::string::npos) << "more than one report:\n" << three.out;
  const auto a = nlohmann::json::parse(one.out), b = nlohmann::json::parse(three.out.substr(open + 1));
  EXPECT_EQ(a["workers"].get<int>(), 1);
  EXPECT_EQ(b["workers"].get<int>(), 3);
  EXPECT_EQ(b["evaluations"], a["evaluations"]);
  EXPECT_EQ(b["status_counts"], a["status_counts"]);
  EXPECT_EQ(b["stop"], a["stop"]);
  EXPECT_EQ(b["best"][0]["config"], a["best"][0]["config"]);
  EXPECT_EQ(b["best"][0]["time_ms"], a["best"][0]["time_ms"]);
  size_t rows_one = 0, rows_mpi = 0;
  const auto keys_one = stored_keys(dir.file("one.db"), rows_one);
  const auto keys_mpi = stored_keys(dir.file("mpi.db"), rows_mpi);
  EXPECT_EQ(rows_mpi, a["evaluations"].get<size_t>());
  EXPECT_EQ(rows_mpi, keys_mpi.size()) << "a configuration stored twice";
  EXPECT_EQ(keys_mpi, keys_one);
#else
  EXPECT_EQ(three.status, 2) << three.out;
  EXPECT_NE(three.out.find("built without MPI"), std::string::npos) << three.out;
#endif
}

#if KTUNE_WITH_MPI
// The default strategy asks rank 0's evaluator for compile features and
// learns between batches of 8: a budget is kept exactly, nothing twice.
TEST(Mpi, ALearningStrategyKeepsItsBudgetOverThreeRanks) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found (apt-get install openmpi-bin): the MPI run is not tested here";
  ktune::testing::TempDir dir;
  const Ran r = shell(mpirun(3) + " tune " + kSpec + " --simulate " + kData + " --max-fevals 40 --json --db " +
                      dir.file("m.db") + " 2>/dev/null");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["workers"].get<int>(), 3);
  EXPECT_EQ(j["evaluations"].get<int>(), 40);
  size_t rows = 0;
  EXPECT_EQ(stored_keys(dir.file("m.db"), rows).size(), 40u);
  EXPECT_EQ(rows, 40u);
}

// A rank that stops before the run (rank 0 on a strategy it does not know,
// every rank on a missing spec) must not leave the others waiting: the job
// ends with its status.
TEST(Mpi, ABadOptionEndsTheWholeJobWithStatus2) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found (apt-get install openmpi-bin): the MPI run is not tested here";
  ktune::testing::TempDir dir;
  const Ran r = shell(mpirun(3) + " tune " + kSpec + " --simulate " + kData + " --strategy nope --db " +
                      dir.file("m.db") + " 2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("unknown strategy 'nope'"), std::string::npos) << r.out;
  // Every rank stops before its part: none may wait for another.
  const Ran all = shell(mpirun(3) + " tune " + dir.file("absent.yaml") + " --simulate " + kData + " --db " +
                        dir.file("m.db") + " 2>&1");
  EXPECT_EQ(all.status, 2) << all.out;
  EXPECT_NE(all.out.find("spec file does not exist"), std::string::npos) << all.out;
}

// The ranks' run offers what rank 0's evaluator offers: over replays, recorded
// data and no profiler, so --profile-top is refused as after any replay.
TEST(Mpi, ProfileTopOverReplayingRanksIsRefusedAsAReplay) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found (apt-get install openmpi-bin): the MPI run is not tested here";
  ktune::testing::TempDir dir;
  const Ran r = shell(mpirun(2) + " tune " + kSpec + " --simulate " + kData + " --max-fevals 6 --profile-top 2 --db " +
                      dir.file("m.db") + " 2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--profile-top needs a GPU run; a replay has no counters"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("--gpus"), std::string::npos) << r.out;
  size_t rows = 0;
  stored_keys(dir.file("m.db"), rows);
  EXPECT_EQ(rows, 6u);
}
#endif

}  // namespace
