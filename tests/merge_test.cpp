// ktune merge (db/merge.h): databases made by replays and imports folded into
// one, with their runs; merging again adds nothing; conflicts refuse the whole
// merge; damaged and foreign inputs are bad input. Then the command itself.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "db/interchange/interchange.h"
#include "db/merge.h"
#include "db/store.h"
#include "ktune/error.h"
#include "test_util.h"
#include "tuner/spec/spec.h"
#include "tuner/tune/replay_evaluator.h"
#include "tuner/tune/run.h"

namespace ktune {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

const std::string kRoot = fs::path(KTUNE_TESTS_DIR).parent_path().string();
const std::string kSpec = kRoot + "/templates/triad/triad.yaml";
const std::string kH100 = kRoot + "/examples/data/triad_h100.json";
const std::string kH200 = kRoot + "/examples/data/triad_h200.json";

// A database holding one replay of `data` (random sampling with `seed`, or
// everything when fevals is 0).
void replay_into(const std::string& db, const std::string& data, uint64_t seed, uint64_t fevals) {
  const Spec spec = load_spec(kSpec);
  ReplayEvaluator replay(spec, data);
  db::Store store(db);
  tune::RunOptions o;
  o.strategy = fevals ? "random_sample" : "brute_force";
  o.seed = seed;
  o.budget.max_fevals = fevals;
  tune::RunObserver quiet;
  tune::run(spec, replay, store, o, quiet);
}

size_t count_rows(const std::string& db) {
  db::StoreOptions ro;
  ro.read_only = true;
  db::Store s(db, ro);
  return s.results({}).size();
}

TEST(Merge, TwoReplaysAndAnImportMergeWithTheirRunsAndMergingAgainAddsNothing) {
  TempDir dir;
  const std::string a = dir.file("a.db"), b = dir.file("b.db"), out = dir.file("out.db");
  replay_into(a, kH100, 1, 0);   // every configuration, H100
  replay_into(a, kH100, 3, 20);  // a second run of the same series: reuses the first, stores nothing new
  replay_into(b, kH200, 2, 30);  // 30 random ones, H200
  {
    db::Store s(b);
    db::import_file(s, kH100);  // an import beside the replay
  }
  const size_t na = count_rows(a), nb = count_rows(b);
  ASSERT_GT(na, 30u);
  ASSERT_GT(nb, na);  // the import's H100 rows plus 30

  db::Store o(out);
  const db::MergeSummary first = db::merge_databases(o, {a, b});
  ASSERT_TRUE(first.merged);
  EXPECT_TRUE(first.conflicts.empty());
  EXPECT_EQ(first.inserted(), na + nb);
  EXPECT_EQ(first.runs_added(), 4u);  // a: two runs; b: a run and an import
  EXPECT_EQ(o.results({}).size(), na + nb);

  // Provenance: each run with its own fields, replays still replays.
  const std::vector<db::RunRow> runs = o.runs();
  ASSERT_EQ(runs.size(), 4u);
  db::StoreOptions ro;
  ro.read_only = true;
  db::Store in_a(a, ro);
  EXPECT_EQ(runs[0].info.started_at, in_a.runs()[0].info.started_at);
  EXPECT_EQ(runs[0].info.host, in_a.runs()[0].info.host);
  EXPECT_EQ(runs[0].info.ended_at, in_a.runs()[0].info.ended_at);
  EXPECT_TRUE(runs[0].info.replay);
  EXPECT_EQ(runs[0].info.replay_source, kH100);
  EXPECT_EQ(runs[3].info.imported_from, kH100);
  EXPECT_FALSE(runs[3].info.replay);
  EXPECT_EQ(runs[0].evaluations, in_a.runs()[0].evaluations);
  // The replayed rows stay replayed, the imported ones measurements.
  db::Filter replayed;
  replayed.replayed = true;
  EXPECT_EQ(o.results(replayed).size(), na + 30);
  EXPECT_EQ(o.devices().size(), 2u);
  // Every figure of a row comes through.
  db::Filter f;
  f.run_id = runs[0].id;
  f.sort = db::Filter::Sort::Id;
  db::Filter fa = f;
  fa.run_id = in_a.runs()[0].id;
  EXPECT_EQ(o.results(f).front().eval, in_a.results(fa).front().eval);

  // Again, and in the other order, and with the merged file as one more input: nothing new.
  const db::MergeSummary again = db::merge_databases(o, {b, a});
  ASSERT_TRUE(again.merged);
  EXPECT_EQ(again.inserted(), 0u);
  EXPECT_EQ(again.runs_added(), 0u);
  EXPECT_EQ(again.inputs[0].duplicates + again.inputs[1].duplicates, na + nb);
  EXPECT_EQ(o.results({}).size(), na + nb);
  const std::string out2 = dir.file("out2.db");
  db::Store o2(out2);
  const db::MergeSummary chained = db::merge_databases(o2, {a, out, b});
  ASSERT_TRUE(chained.merged);
  EXPECT_EQ(chained.inserted(), na + nb);
  EXPECT_EQ(o2.runs().size(), 4u);
  EXPECT_EQ(o2.integrity_check(), "ok");
}

TEST(Merge, AConfigurationMeasuredTwiceInOneRunIsKeptOnceTheLatest) {
  TempDir dir;
  const std::string a = dir.file("a.db"), out = dir.file("out.db");
  db::SeriesIds ids;
  {
    db::Store s(a);
    db::KernelInfo k{"k", "", "h1", {"x"}, {ValueType::Int}};
    ids = {s.upsert_kernel(k), s.upsert_device({.name = "GPU A"}), s.upsert_problem_size({64})};
    db::RunInfo r;
    r.strategy = "random_sample";
    r.host = "node1";
    const int64_t run = s.begin_run(r);
    db::Evaluation e;
    e.config = {Value(int64_t{1})};
    e.time_ms = 2.0;
    e.timestamp = "2026-01-01T00:00:01.000Z";
    s.add_evaluation(run, ids, e);
    e.time_ms = 1.5;  // re-measured later in the same run
    e.timestamp = "2026-01-01T00:00:09.000Z";
    s.add_evaluation(run, ids, e);
    e.config = {Value(int64_t{2})};
    e.time_ms = 3.0;
    s.add_evaluation(run, ids, e);
    s.add_evaluation(std::nullopt, ids, e);  // a row outside any run, of the same configuration
    s.end_run(run);
  }
  db::Store o(out);
  const db::MergeSummary s = db::merge_databases(o, {a});
  ASSERT_TRUE(s.merged);
  EXPECT_EQ(s.inputs[0].evaluations, 4u);
  EXPECT_EQ(s.inputs[0].collapsed, 1u);
  EXPECT_EQ(s.inputs[0].inserted, 3u);  // 1 and 2 in the run, 2 outside it
  db::Filter f;
  f.kernel = "k";
  f.sort = db::Filter::Sort::Id;
  const auto rows = o.results(f);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].config_key, "1");
  EXPECT_EQ(*rows[0].eval.time_ms, 1.5);
  EXPECT_FALSE(rows[2].run_id.has_value());
  EXPECT_EQ(db::merge_databases(o, {a}).inserted(), 0u);
}

TEST(Merge, ConflictsRefuseTheWholeMergeAndNameEachOne) {
  TempDir dir;
  const std::string a = dir.file("a.db"), b = dir.file("b.db"), c = dir.file("c.db"), out = dir.file("out.db");
  replay_into(a, kH100, 1, 10);
  auto add = [](const std::string& path, db::KernelInfo k, db::DeviceInfo d) {
    db::Store s(path);
    db::SeriesIds ids{s.upsert_kernel(k), s.upsert_device(d), s.upsert_problem_size({8})};
    db::Evaluation e;
    e.config = std::vector<Value>(k.param_names.size(), Value(int64_t{1}));
    e.time_ms = 1;
    s.add_evaluation(s.begin_run({}), ids, e);
  };
  add(b, {"k", "", "h", {"x"}, {ValueType::Int}}, {.name = "GPU X", .cc_major = 9, .cc_minor = 0});
  add(c, {"k", "", "h", {"x", "y"}, {ValueType::Int, ValueType::Int}},  // same identity, other parameters
      {.name = "GPU X", .cc_major = 8, .cc_minor = 0});                 // same name, other compute capability
  db::Store o(out);
  const db::MergeSummary s = db::merge_databases(o, {a, b, c});
  EXPECT_FALSE(s.merged);
  ASSERT_EQ(s.conflicts.size(), 2u);
  EXPECT_EQ(s.conflicts[0].kind, "kernel");
  EXPECT_NE(s.conflicts[0].detail.find("[x:int] in " + b + ", [x:int, y:int] in " + c), std::string::npos)
      << s.conflicts[0].detail;
  EXPECT_EQ(s.conflicts[1].kind, "device");
  EXPECT_NE(s.conflicts[1].detail.find("sm_90 in " + b + ", sm_80 in " + c), std::string::npos)
      << s.conflicts[1].detail;
  EXPECT_TRUE(o.results({}).empty()) << "nothing half-merged";
  EXPECT_TRUE(o.runs().empty());
  // Without the conflicting file it goes through.
  EXPECT_TRUE(db::merge_databases(o, {a, b}).merged);
}

TEST(Merge, DamagedForeignAndMissingInputsAreBadInputAndLeaveTheOutputAlone) {
  TempDir dir;
  const std::string a = dir.file("a.db"), out = dir.file("out.db");
  replay_into(a, kH100, 1, 10);
  std::ofstream(dir.file("notes.txt")) << "not a database\n";
  // A ktune database with its pages after the header overwritten.
  fs::copy_file(a, dir.file("damaged.db"));
  {
    db::Store checkpoint(dir.file("damaged.db"));  // folds the WAL into the file
  }
  {
    std::fstream f(dir.file("damaged.db"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    const std::string junk(8192, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  db::Store o(out);
  for (const std::string& bad : {dir.file("notes.txt"), dir.file("damaged.db"), dir.file("absent.db"), out}) {
    try {
      db::merge_databases(o, {a, bad});
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_status(), 2) << e.what();
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
    EXPECT_TRUE(o.results({}).empty()) << bad;
  }
}

struct Ran {
  int status = -1;
  std::string out;
};

Ran ktune(const std::string& args) {
  Ran r;
  FILE* p = popen((std::string(KTUNE_BINARY) + " " + args).c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TEST(Merge, TheCommandReportsInJsonAndOnStderrAndRefusesConflictsWithStatus2) {
  TempDir dir;
  const std::string a = dir.file("a.db"), b = dir.file("b.db"), out = dir.file("out.db");
  replay_into(a, kH100, 1, 10);
  replay_into(b, kH200, 1, 10);
  Ran ok = ktune("merge " + a + " " + b + " --db " + out + " --json");
  ASSERT_EQ(ok.status, 0) << ok.out;
  const auto j = nlohmann::json::parse(ok.out);
  EXPECT_TRUE(j["merged"].get<bool>());
  EXPECT_EQ(j["inserted"].get<int>(), 20);
  EXPECT_EQ(j["inputs"][1]["file"], b);
  Ran again = ktune("merge " + a + " " + b + " --db " + out);
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_NE(again.out.find("merged into " + out + ": 0 evaluations, 0 runs"), std::string::npos) << again.out;

  const std::string c = dir.file("c.db");
  {
    db::Store s(b);  // the H200 claims compute capability 8.6 in one file, 9.0 in another
    s.upsert_device({.name = "NVIDIA H200", .cc_major = 8, .cc_minor = 6});
    db::Store t(c);
    t.upsert_device({.name = "NVIDIA H200", .cc_major = 9, .cc_minor = 0});
  }
  const std::string fresh = dir.file("fresh.db");
  Ran clash = ktune("merge " + c + " " + b + " --db " + fresh + " --json 2>&1");
  EXPECT_EQ(clash.status, 2) << clash.out;
  EXPECT_NE(clash.out.find("merge refused, nothing written"), std::string::npos) << clash.out;
  EXPECT_NE(clash.out.find("\"kind\": \"device\""), std::string::npos) << clash.out;
  EXPECT_EQ(count_rows(fresh), 0u);
  Ran junk = ktune("merge " + kSpec + " --db " + fresh + " 2>&1");
  EXPECT_EQ(junk.status, 2) << junk.out;
  EXPECT_NE(junk.out.find(kSpec + " is not a SQLite database"), std::string::npos) << junk.out;
}

}  // namespace
}  // namespace ktune
