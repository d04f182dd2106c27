// The results store: schema, migration, refusal of foreign/newer/corrupt
// files, read-only errors, concurrent writers and crash safety.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "db/interchange/kerneltuner.h"
#include "db/store.h"
#include "db/interchange/t4.h"
#include "ktune/error.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace ktune;
using namespace ktune::db;

namespace {

using ktune::testing::TempDir;

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void sql(const std::string& path, const std::string& text) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

int64_t count_rows(const std::string& path, const std::string& table) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, ("SELECT count(*) FROM " + table).c_str(), -1, &s, nullptr);
  int64_t n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
  sqlite3_finalize(s);
  sqlite3_close(db);
  return n;
}

KernelInfo test_kernel() {
  return {"vector_add", "src123", "spec456", {"block_size_x", "alg", "use_shared", "factor"},
          {ValueType::Int, ValueType::String, ValueType::Bool, ValueType::Float}};
}

Evaluation make_eval(int bx, double time) {
  Evaluation e;
  e.config = {Value(bx), Value("alg_2"), Value(true), Value(2.45)};
  e.time_ms = time;
  e.samples = {time, time * 1.01, time * 0.99};
  e.complete_stats();
  e.metrics = {{"GB/s", 800.5}};
  e.registers = 32;
  e.shared_bytes = 4096;
  e.local_bytes = 0;
  e.occupancy = 0.75;
  e.sm_clock_mhz = 1755;
  e.compile_ms = 250.5;
  e.benchmark_ms = 3.2;
  e.timestamp = "2024-05-01T12:00:00.000Z";
  return e;
}

struct Fixture {
  SeriesIds ids;
  int64_t run = 0;
};

Fixture setup(Store& s, const std::string& device = "NVIDIA GeForce RTX 3090", ProblemSize ps = {4096}) {
  Fixture f;
  f.ids.kernel_id = s.upsert_kernel(test_kernel());
  f.ids.device_id = s.upsert_device({.name = device, .cc_major = 8, .cc_minor = 6});
  f.ids.psize_id = s.upsert_problem_size(ps);
  f.run = s.begin_run({.strategy = "random_sample", .seed = 1});
  return f;
}

// The child process's exit status (0 = ok); runs body in a forked process.
template <class F>
int in_child(F body) {
  pid_t pid = fork();
  if (pid == 0) {
    int rc = 0;
    try {
      rc = body();
    } catch (const std::exception& e) {
      fprintf(stderr, "child: %s\n", e.what());
      rc = 99;
    }
    _exit(rc);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

}  // namespace

TEST(Store, CreatesSchema) {
  TempDir dir;
  Store s(dir.file("k.db"));
  EXPECT_EQ(s.schema_version(), 5);
  EXPECT_EQ(s.integrity_check(), "ok");
  EXPECT_EQ(count_rows(dir.file("k.db"), "meta"), 2);  // schema_version, created_at
  for (const char* t : {"devices", "kernels", "problem_sizes", "runs", "evaluations", "series", "best"})
    EXPECT_EQ(count_rows(dir.file("k.db"), t), 0) << t;
  EXPECT_TRUE(fs::exists(dir.file("k.db-wal")));  // WAL mode
}

TEST(Store, UpsertsAreIdempotent) {
  TempDir dir;
  Store s(dir.file("k.db"));
  int64_t d1 = s.upsert_device({.name = "A100", .cc_major = 8});
  int64_t d2 = s.upsert_device({.name = "A100", .sm_count = 108});
  EXPECT_EQ(d1, d2);
  auto devs = s.devices();
  ASSERT_EQ(devs.size(), 1u);
  EXPECT_EQ(devs[0].info.cc_major, 8);  // kept: the second record did not know it
  EXPECT_EQ(devs[0].info.sm_count, 108);
  EXPECT_EQ(s.upsert_kernel(test_kernel()), s.upsert_kernel(test_kernel()));
  EXPECT_EQ(s.upsert_problem_size({4096, 1, 1}), s.upsert_problem_size({4096}));
  EXPECT_NE(s.upsert_problem_size({4096, 2}), s.upsert_problem_size({4096}));
  EXPECT_THROW(s.upsert_problem_size({1, 2, 3, 4}), Error);
}

TEST(Store, EvaluationRoundTripsAndResumeFinds) {
  TempDir dir;
  Store s(dir.file("k.db"));
  Fixture f = setup(s);
  Evaluation e = make_eval(128, 0.5);
  s.add_evaluation(f.run, f.ids, e);
  Evaluation bad;
  bad.config = {Value(1024), Value("alg_1"), Value(false), Value(1.5)};
  bad.status = Status::CompileError;
  bad.reason = "too many resources requested";
  bad.log = "ptxas error: ...";
  s.add_evaluation(f.run, f.ids, bad);

  auto got = s.find(f.ids, "128,alg_2,True,2.45");
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, e);
  EXPECT_TRUE(got->config[0].is_int() && got->config[1].is_string() && got->config[2].is_bool() &&
              got->config[3].is_float());
  EXPECT_FALSE(s.find(f.ids, "256,alg_2,True,2.45"));

  // A later measurement of the same configuration wins in resume.
  Evaluation again = make_eval(128, 0.4);
  s.add_evaluation(f.run, f.ids, again);
  auto m = s.measured(f.ids);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(*m["128,alg_2,True,2.45"].time_ms, 0.4);
  EXPECT_EQ(m["1024,alg_1,False,1.5"].status, Status::CompileError);
  EXPECT_EQ(m["1024,alg_1,False,1.5"].log, "ptxas error: ...");
  EXPECT_EQ(s.measured("spec456", "NVIDIA GeForce RTX 3090", {4096}).size(), 2u);
  EXPECT_TRUE(s.measured("spec456", "NVIDIA GeForce RTX 3090", {8192}).empty());
  EXPECT_TRUE(s.measured("other", "NVIDIA GeForce RTX 3090", {4096}).empty());

  Evaluation wrong = make_eval(1, 1.0);
  wrong.config.pop_back();
  EXPECT_THROW(s.add_evaluation(f.run, f.ids, wrong), Error);
}

TEST(Store, ResumeKeepsReplaysAndMeasurementsApart) {
  // A replay is filed under the recorded device's name; a later live run on
  // such a device must measure, not take the replayed rows as its own.
  TempDir dir;
  Store s(dir.file("k.db"));
  Fixture f = setup(s);
  s.add_evaluation(f.run, f.ids, make_eval(128, 0.5));
  RunInfo replay;
  replay.strategy = "random_sample";
  replay.replay = true;
  replay.replay_source = "cache.json";
  const int64_t replay_run = s.begin_run(replay);
  s.add_evaluation(replay_run, f.ids, make_eval(256, 0.3));
  s.add_evaluation(replay_run, f.ids, make_eval(128, 0.2));
  s.add_evaluation(std::nullopt, f.ids, make_eval(512, 0.4));  // no run: a measurement

  auto live = s.measured(f.ids);
  ASSERT_EQ(live.size(), 2u);
  EXPECT_EQ(*live["128,alg_2,True,2.45"].time_ms, 0.5);  // not the replay's later 0.2
  EXPECT_TRUE(live.count("512,alg_2,True,2.45"));
  auto replayed = s.measured(f.ids, true);
  ASSERT_EQ(replayed.size(), 2u);
  EXPECT_EQ(*replayed["128,alg_2,True,2.45"].time_ms, 0.2);
  EXPECT_TRUE(replayed.count("256,alg_2,True,2.45"));
}

TEST(Store, ArchitectureFilterMatchesMinorVersionZero) {
  // sm_90 is stored as major 9 and an unknown (NULL) minor: --arch sm_90 must find it.
  TempDir dir;
  Store s(dir.file("k.db"));
  SeriesIds ids;
  ids.kernel_id = s.upsert_kernel(test_kernel());
  ids.device_id = s.upsert_device({.name = "NVIDIA H100 80GB HBM3", .cc_major = 9, .cc_minor = 0});
  ids.psize_id = s.upsert_problem_size({4096});
  s.add_evaluation(s.begin_run({.strategy = "brute_force"}), ids, make_eval(256, 0.5));
  EXPECT_EQ(s.best({.compute_capability = 90}).size(), 1u);
  EXPECT_EQ(s.results({.compute_capability = 90}).size(), 1u);
  EXPECT_EQ(s.results({.compute_capability = 86}).size(), 0u);
}

TEST(Store, BestPerSeriesAndQueries) {
  TempDir dir;
  Store s(dir.file("k.db"));
  Fixture a = setup(s, "A100");
  Fixture b = setup(s, "H100");
  for (int i = 0; i < 20; ++i) s.add_evaluation(a.run, a.ids, make_eval(32 * (i + 1), 1.0 + (i * 7 % 20) / 10.0));
  Evaluation fast_but_failed = make_eval(4096, 0.01);
  fast_but_failed.status = Status::WrongResult;
  s.add_evaluation(a.run, a.ids, fast_but_failed);
  s.add_evaluation(b.run, b.ids, make_eval(64, 0.3));
  s.add_evaluation(b.run, b.ids, make_eval(128, 0.2));

  auto best = s.best({});
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[0].device, "A100");
  EXPECT_EQ(*best[0].eval.time_ms, 1.0);
  EXPECT_EQ(best[0].config_key, "32,alg_2,True,2.45");
  EXPECT_EQ(best[1].device, "H100");
  EXPECT_EQ(best[1].config_key, "128,alg_2,True,2.45");
  EXPECT_EQ(best[1].kernel, "vector_add");
  EXPECT_EQ(best[1].param_names, test_kernel().param_names);
  EXPECT_EQ(s.best({.device = "H100"}).size(), 1u);
  EXPECT_EQ(s.best({.compute_capability = 86}).size(), 2u);
  EXPECT_EQ(count_rows(dir.file("k.db"), "best"), 2);

  auto fastest3 = s.results({.kernel = "vector_add", .device = "A100", .limit = 3});
  ASSERT_EQ(fastest3.size(), 3u);
  EXPECT_LE(*fastest3[0].eval.time_ms, *fastest3[1].eval.time_ms);
  auto failed = s.results({.status = Status::WrongResult});
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].config_key, "4096,alg_2,True,2.45");
  EXPECT_EQ(s.results({.sort = Filter::Sort::Newest, .limit = 1})[0].device, "H100");
  EXPECT_EQ(s.results({.problem_size = ProblemSize{4096, 1}}).size(), 23u);

  try {
    s.require_known({.kernel = "matmul"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_status(), 2);
    EXPECT_NE(std::string(e.what()).find("unknown kernel matmul"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("known: vector_add"), std::string::npos);
  }
  EXPECT_THROW(s.require_known({.device = "V100"}), Error);
  EXPECT_NO_THROW(s.require_known({.kernel = "vector_add", .device = "A100"}));
}

TEST(Store, TransactionRollsBackUncommitted) {
  TempDir dir;
  Store s(dir.file("k.db"));
  Fixture f = setup(s);
  {
    Store::Transaction tx(s);
    for (int i = 0; i < 5; ++i) s.add_evaluation(f.run, f.ids, make_eval(i, 1.0));
  }
  EXPECT_TRUE(s.results({}).empty());
  {
    Store::Transaction tx(s);
    for (int i = 0; i < 5; ++i) s.add_evaluation(f.run, f.ids, make_eval(i, 1.0));
    tx.commit();
  }
  EXPECT_EQ(s.results({}).size(), 5u);
}

// Version 1 as ktune 0.1 created it, written out by hand.
TEST(Store, MigratesVersion1) {
  TempDir dir;
  std::string path = dir.file("v1.db");
  sql(path, R"sql(
    CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE devices(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, cc_major INTEGER, cc_minor INTEGER,
      sm_count INTEGER, memory_bytes INTEGER, sm_clock_mhz INTEGER, memory_clock_mhz INTEGER,
      driver_version TEXT, cuda_version TEXT, nvrtc_version TEXT, uuid TEXT);
    CREATE TABLE kernels(id INTEGER PRIMARY KEY, name TEXT NOT NULL, source_hash TEXT NOT NULL DEFAULT '',
      spec_hash TEXT NOT NULL DEFAULT '', params TEXT NOT NULL, UNIQUE(name, spec_hash));
    CREATE TABLE problem_sizes(id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, x INTEGER, y INTEGER, z INTEGER);
    CREATE TABLE runs(id INTEGER PRIMARY KEY, strategy TEXT, strategy_options TEXT, seed INTEGER, budget TEXT,
      started_at TEXT, ended_at TEXT, host TEXT, ktune_version TEXT, replay INTEGER NOT NULL DEFAULT 0,
      replay_source TEXT);
    CREATE TABLE evaluations(id INTEGER PRIMARY KEY, run_id INTEGER REFERENCES runs(id),
      kernel_id INTEGER NOT NULL REFERENCES kernels(id), device_id INTEGER NOT NULL REFERENCES devices(id),
      psize_id INTEGER NOT NULL REFERENCES problem_sizes(id), config_key TEXT NOT NULL, config TEXT NOT NULL,
      status TEXT NOT NULL, reason TEXT, log TEXT, time_ms REAL, min_ms REAL, mean_ms REAL, stddev_ms REAL,
      sample_count INTEGER, samples TEXT, metrics TEXT, registers INTEGER, shared_bytes INTEGER,
      local_bytes INTEGER, occupancy REAL, compile_ms REAL, verify_ms REAL, benchmark_ms REAL, strategy_ms REAL,
      framework_ms REAL, timestamp TEXT);
    CREATE INDEX evaluations_key ON evaluations(kernel_id, device_id, psize_id, config_key);
    CREATE VIEW best AS SELECT e.*, MIN(e.time_ms) AS best_time FROM evaluations e WHERE status = 'ok'
      GROUP BY kernel_id, device_id, psize_id;
    INSERT INTO meta VALUES ('schema_version', '1');
    INSERT INTO devices(id, name) VALUES (1, 'Tesla V100');
    INSERT INTO kernels(id, name, spec_hash, params) VALUES (1, 'vector_add', 'spec1',
      '[{"name":"block_size_x","type":"int"}]');
    INSERT INTO problem_sizes(id, key, x) VALUES (1, '[1024]', 1024);
    INSERT INTO runs(id, strategy) VALUES (1, 'brute_force');
    INSERT INTO evaluations(run_id, kernel_id, device_id, psize_id, config_key, config, status, time_ms)
      VALUES (1, 1, 1, 1, '128', '[128]', 'ok', 0.7), (1, 1, 1, 1, '256', '[256]', 'ok', 0.5),
             (1, 1, 1, 1, '512', '[512]', 'invalid', NULL);
    PRAGMA user_version = 1;
  )sql");

  Store s(path);
  EXPECT_EQ(s.schema_version(), 5);  // 1 -> 2 -> 3 -> 4 -> 5
  EXPECT_EQ(s.integrity_check(), "ok");
  auto best = s.best({});
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].config_key, "256");
  EXPECT_EQ(best[0].device, "Tesla V100");
  // The new columns exist and work on old rows' series.
  Evaluation e;
  e.config = {Value(64)};
  e.time_ms = 0.3;
  e.power_w = 250.0;
  e.temperature_c = 70.0;
  e.load_ms = 0.25;
  e.stopped_early = 1;
  e.energy_j = 0.002;
  e.store_sectors = 64;
  s.add_evaluation(1, {1, 1, 1}, e);
  EXPECT_EQ(s.best({})[0].config_key, "64");
  EXPECT_EQ(*s.find({1, 1, 1}, "64")->energy_j, 0.002);
  EXPECT_EQ(*s.find({1, 1, 1}, "64")->store_sectors, 64);
  EXPECT_EQ(*s.find({1, 1, 1}, "64")->power_w, 250.0);
  EXPECT_EQ(*s.find({1, 1, 1}, "64")->load_ms, 0.25);
  EXPECT_EQ(*s.find({1, 1, 1}, "64")->stopped_early, 1);
  EXPECT_EQ(s.results({}).size(), 4u);
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "5");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST(Store, RefusesNewerSchemaUntouched) {
  TempDir dir;
  std::string path = dir.file("new.db");
  { Store s(path); }
  sql(path, "PRAGMA user_version = 7;");
  std::string before = bytes_of(path);
  try {
    Store s(path);
    FAIL() << "opened a newer schema";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("version 7"), std::string::npos) << e.what();
  }
  EXPECT_EQ(bytes_of(path), before);
}

TEST(Store, RefusesNonSqliteAndForeignFilesUntouched) {
  TempDir dir;
  std::string text = dir.file("notes.db");
  { std::ofstream(text) << "these are my notes, not a database\n"; }
  std::string before = bytes_of(text);
  EXPECT_THROW(Store s(text), Error);
  EXPECT_THROW(Store s(text, {.read_only = true}), Error);
  EXPECT_EQ(bytes_of(text), before);
  EXPECT_FALSE(fs::exists(text + "-wal"));

  std::string foreign = dir.file("app.db");
  sql(foreign, "CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers VALUES (1, 'x');");
  before = bytes_of(foreign);
  try {
    Store s(foreign);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a ktune results database"), std::string::npos) << e.what();
  }
  EXPECT_EQ(bytes_of(foreign), before);

  // A ktune database whose pages were overwritten: SQLite's magic intact.
  std::string corrupt = dir.file("corrupt.db");
  {
    Store s(corrupt);
  }
  std::string bytes = bytes_of(corrupt);
  ASSERT_GT(bytes.size(), 4096u);
  for (size_t i = 100; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 31 + 7);
  { std::ofstream(corrupt, std::ios::binary | std::ios::trunc) << bytes; }
  EXPECT_THROW(Store s(corrupt), Error);
  EXPECT_EQ(bytes_of(corrupt), bytes);
}

TEST(Store, ReadOnlyFileOrDirectoryFailsAtOpen) {
  TempDir dir;
  std::string path = dir.file("k.db");
  {
    Store s(path);
    Fixture f = setup(s);
    s.add_evaluation(f.run, f.ids, make_eval(128, 0.5));
  }
  chmod(path.c_str(), 0444);
  chmod(dir.path().c_str(), 0555);
  // Root ignores permission bits, so the check runs as an ordinary user.
  int rc = in_child([&] {
    if (geteuid() == 0 && setuid(65534) != 0) return 10;
    try {
      Store s(path);
      return 1;
    } catch (const Error& e) {
      if (std::string(e.what()).find("read-only") == std::string::npos) return 2;
    }
    try {
      Store s(dir.file("fresh.db"));
      return 3;
    } catch (const Error& e) {
      if (std::string(e.what()).find("not writable") == std::string::npos) return 4;
    }
    Store ro(path, {.read_only = true});  // queries still work
    return ro.results({}).size() == 1 ? 0 : 5;
  });
  EXPECT_EQ(rc, 0);
  EXPECT_THROW(Store s(dir.file("missing.db"), {.read_only = true}), Error);
}

TEST(Store, ConcurrentWritersLoseNothing) {
  TempDir dir;
  std::string path = dir.file("k.db");
  { Store s(path); }
  auto writer = [&](int base) {
    return [&, base] {
      Store s(path);
      Fixture f = setup(s);
      for (int i = 0; i < 500; ++i) s.add_evaluation(f.run, f.ids, make_eval(base + i, 1.0 + i));
      return 0;
    };
  };
  std::vector<pid_t> kids;
  for (int w = 0; w < 2; ++w) {
    pid_t pid = fork();
    if (pid == 0) {
      int rc = 99;
      try {
        rc = writer(w * 1000)();
      } catch (const std::exception& e) {
        fprintf(stderr, "writer: %s\n", e.what());
      }
      _exit(rc);
    }
    kids.push_back(pid);
  }
  for (pid_t p : kids) {
    int status = 0;
    waitpid(p, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  Store s(path);
  EXPECT_EQ(s.results({}).size(), 1000u);
  EXPECT_EQ(s.kernels().size(), 1u);
  EXPECT_EQ(s.integrity_check(), "ok");
}

TEST(Store, KillMidRunKeepsEveryCommittedRow) {
  TempDir dir;
  std::string path = dir.file("k.db");
  { Store s(path); }
  pid_t pid = fork();
  if (pid == 0) {
    try {
      Store s(path);
      Fixture f = setup(s);
      for (int i = 0;; ++i) s.add_evaluation(f.run, f.ids, make_eval(i, 1.0 + i));
    } catch (...) {
    }
    _exit(1);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (count_rows(path, "evaluations") < 300 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));

  Store s(path);
  EXPECT_EQ(s.integrity_check(), "ok");
  auto rows = s.results({.sort = Filter::Sort::Id});
  ASSERT_GE(rows.size(), 300u);
  for (size_t i = 0; i < rows.size(); ++i) {  // every row whole, none missing in between
    Evaluation want = make_eval(static_cast<int>(i), 1.0 + static_cast<double>(i));
    ASSERT_EQ(rows[i].eval, want) << "row " << i;
  }
  // Resume: the store takes new rows after the crash.
  Fixture f = setup(s);
  s.add_evaluation(f.run, f.ids, make_eval(-1, 0.1));
  EXPECT_EQ(s.results({}).size(), rows.size() + 1);
}

// Every entry of the field table reaches the store's columns and comes back,
// and reaches each interchange format that names it.
TEST(Store, EveryFieldOfTheTableRoundTrips) {
  TempDir dir;
  Store s(dir.file("k.db"));
  Fixture f = setup(s);
  Evaluation e = make_eval(128, 0.5);
  double value = 1;
  for (const EvaluationField& field : evaluation_fields()) field.set(e, value++);  // distinct, integral
  s.add_evaluation(f.run, f.ids, e);
  auto got = s.find(f.ids, "128,alg_2,True,2.45");
  ASSERT_TRUE(got);
  for (const EvaluationField& field : evaluation_fields()) EXPECT_EQ(field.get(*got), field.get(e)) << field.column;

  ResultSet rs;
  rs.param_names = test_kernel().param_names;
  rs.param_types = test_kernel().param_types;
  rs.device_name = "NVIDIA GeForce RTX 3090";
  rs.kernel_name = "k";
  rs.problem_size = {4096};
  rs.evaluations = {e};
  const Evaluation kt = parse_kernel_tuner(format_kernel_tuner(rs), "kt.json").evaluations.at(0);
  const Evaluation t4 = parse_t4(format_t4(rs), "t4.json").evaluations.at(0);
  for (const EvaluationField& field : evaluation_fields()) {
    if (*field.kernel_tuner) {
      EXPECT_EQ(field.get(kt), field.get(e)) << "kernel-tuner " << field.column;
    }
    if (*field.t4) {
      EXPECT_EQ(field.get(t4), field.get(e)) << "t4 " << field.column;
    }
  }
}
