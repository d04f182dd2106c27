// End-to-end tests of the `ktune` binary on the CPU: exit statuses, JSON
// output, and the whole tuning loop replaying measurements recorded on an H100
// (examples/data), including resume and the strategy comparison.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <iterator>
#include <set>
#include <sstream>
#include <string>

#include "db/store.h"
#include "test_util.h"

namespace {

namespace fs = std::filesystem;

using ktune::testing::Ran;

// Runs ktune with `args`; stderr merged into the output when asked.
Ran ktune(const std::string& args, bool merge_stderr = false) { return ktune::testing::run_ktune(args, merge_stderr); }

const std::string kRoot = fs::path(KTUNE_TESTS_DIR).parent_path().string();
const std::string kVecSpec = kRoot + "/templates/vector_add/vector_add.yaml";
const std::string kVecData = kRoot + "/examples/data/vector_add_h100.json";

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ktune-cli-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "t.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string db_;
};

// Published T1 files and specs from other people arrive without their
// kernels: the space, replays and strategy comparisons need none; compile and
// a GPU run stop with the KernelFile's location, before anything runs.
TEST_F(Cli, ASpecWithoutItsKernelSourceDescribesAndReplaysButDoesNotCompile) {
  const fs::path t1 = dir_ / "matmul_t1.json";  // a T1 file without its matmul.cu beside it
  fs::copy_file(kRoot + "/tests/data/specs/t1/matmul_t1.json", t1);
  Ran space = ktune("space " + t1.string(), true);
  ASSERT_EQ(space.status, 0) << space.out;
  EXPECT_NE(space.out.find("valid:       17286"), std::string::npos) << space.out;
  EXPECT_NE(space.out.find("KernelFile '" + (dir_ / "matmul.cu").string() + "' (" + t1.string() + ":114:"),
            std::string::npos) << space.out;
  Ran compile = ktune("compile " + t1.string() + " --sample 1", true);
  EXPECT_EQ(compile.status, 2) << compile.out;
  EXPECT_NE(compile.out.find(t1.string() + ":114:"), std::string::npos) << compile.out;
  Ran tune = ktune("tune " + t1.string() + " --db " + db_, true);
  EXPECT_EQ(tune.status, 2) << tune.out;
  EXPECT_NE(tune.out.find("does not exist"), std::string::npos) << tune.out;
  EXPECT_FALSE(fs::exists(db_)) << "stopped before the database was opened";

  const fs::path yaml = dir_ / "vector_add.yaml";  // the template's spec without vector_add.cu
  fs::copy_file(kVecSpec, yaml);
  Ran cmp = ktune("strategies compare " + yaml.string() + " --simulate " + kVecData +
                  " --strategies model_rank --runs 2 --max-fevals 10 --json");
  ASSERT_EQ(cmp.status, 0) << cmp.out;
  EXPECT_EQ(nlohmann::json::parse(cmp.out)["strategies"][0]["max_evals_used"].get<int>(), 10);
  Ran replay = ktune("tune " + yaml.string() + " --simulate " + kVecData + " --max-fevals 10 --json --db " + db_);
  ASSERT_EQ(replay.status, 0) << replay.out;
  const auto run = nlohmann::json::parse(replay.out);
  EXPECT_EQ(run["evaluations"].get<int>(), 10);
  // The compile / GPU split adds up the stored rows' phases.
  const auto rows = nlohmann::json::parse(ktune("results --json --db " + db_).out);
  ASSERT_EQ(rows.size(), 10u);
  double compile_ms = 0, gpu_ms = 0;
  int compiled = 0;
  for (const auto& row : rows) {
    compile_ms += row.value("compile_ms", 0.0);
    compiled += row.value("compile_ms", 0.0) > 0;
    gpu_ms += row.value("load_ms", 0.0) + row.value("verify_ms", 0.0) + row.value("benchmark_ms", 0.0);
  }
  EXPECT_GT(compile_ms, 0);
  EXPECT_NEAR(run["time_split"]["compile_s"].get<double>(), compile_ms / 1000, 1e-6);
  EXPECT_NEAR(run["time_split"]["gpu_s"].get<double>(), gpu_ms / 1000, 1e-6);
  EXPECT_EQ(run["time_split"]["compiled"].get<int>(), compiled);
}

TEST_F(Cli, SpaceReportsExactCountsAsJson) {
  Ran r = ktune("space " + kVecSpec + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cartesian"].get<uint64_t>(), 300u);
  EXPECT_EQ(j["valid"].get<uint64_t>(), 246u);
}

TEST_F(Cli, BadInputExitsTwoWithFileLineAndColumn) {
  const fs::path spec = dir_ / "bad.yaml";
  std::FILE* f = std::fopen(spec.c_str(), "w");
  std::fputs("kernel: {name: k, source: k.cu}\nproblem_size: [64]\ntune_params:\n  x: [1, 2]\nrestrictions:\n  - x * y > 1\n", f);
  std::fclose(f);
  std::FILE* k = std::fopen((dir_ / "k.cu").c_str(), "w");
  std::fputs("extern \"C\" __global__ void k() {}\n", k);
  std::fclose(k);
  Ran r = ktune("space " + spec.string(), true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("bad.yaml:6:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'y'"), std::string::npos) << r.out;
  EXPECT_EQ(ktune("space --no-such-option " + spec.string()).status, 2);
  EXPECT_EQ(ktune("space " + (dir_ / "missing.yaml").string()).status, 2);
}

// What a new user trips on: a negative count wraps around to a huge one
// unless refused; a run without a budget says so before it starts; a
// throughput objective without higher_is_better is minimised, and said so.
TEST_F(Cli, NegativeCountsAreRefusedAndTheBudgetIsSaidAtTheStart) {
  for (const char* args : {"compile --sample -3 ", "space --sample -1 ", "tune --max-fevals -5 --simulate x.json "}) {
    Ran r = ktune(std::string(args) + kVecSpec, true);
    EXPECT_EQ(r.status, 2) << args << r.out;
    EXPECT_NE(r.out.find("a count, at least 0"), std::string::npos) << args << r.out;
  }
  Ran none = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --max-fevals 0 --strategy brute_force --db " + db_,
                   true);
  ASSERT_EQ(none.status, 0) << none.out;
  EXPECT_NE(none.out.find("budget: NONE"), std::string::npos) << none.out;
  EXPECT_NE(none.out.find("all 246 configurations"), std::string::npos) << none.out;
  Ran some = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --max-fevals 7 --time-limit 5s --db " + db_, true);
  EXPECT_NE(some.out.find("budget: 7 evaluations or 5.0 s"), std::string::npos) << some.out;
  // The spec minus its higher_is_better: GB/s is then minimised, with a note at the objective.
  std::ifstream in(kVecSpec);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = text.find("higher_is_better");
  ASSERT_NE(at, std::string::npos);
  text.erase(at, text.find('\n', at) - at + 1);
  const fs::path spec = dir_ / "vector_add.yaml";
  std::ofstream(spec) << text;
  fs::copy_file(fs::path(kVecSpec).parent_path() / "vector_add.cu", dir_ / "vector_add.cu");
  Ran noted = ktune("space " + spec.string(), true);
  EXPECT_EQ(noted.status, 0) << noted.out;
  EXPECT_NE(noted.out.find("is minimised (higher_is_better: false"), std::string::npos) << noted.out;
}

// Kernel Tuner users separate a strategy's options with commas.
TEST_F(Cli, StrategyOptionsSeparatedByCommasAreRead) {
  Ran r = ktune("tune " + kVecSpec + " --simulate " + kVecData +
                    " --strategy genetic_algorithm:popsize=4,maxiter=3 --max-fevals 8 --json --db " + db_,
                true);
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string compare = "strategies compare " + kVecSpec + " --simulate " + kVecData +
                              " --strategies genetic_algorithm:popsize=4,maxiter=3,random_sample --runs 2 --max-fevals 10 --json";
  Ran c = ktune(compare);
  ASSERT_EQ(c.status, 0) << c.out;
  EXPECT_EQ(nlohmann::json::parse(c.out)["strategies"].size(), 2u) << c.out;
}

TEST_F(Cli, AMisspeltParameterInConfigIsNamed) {
  Ran r = ktune("compile " + kVecSpec + " --config block_sise_x=64,tile_size_x=2", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("unknown parameter 'block_sise_x'; the parameters: block_size_x, items_per_thread"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ktune: --config: unknown parameter"), std::string::npos) << r.out;
}

// The library's errors name their inputs; the command line names the option
// that gives each ("objective: ..." becomes "--objective: ...").
TEST_F(Cli, ErrorsAboutAnInputNameItsOption) {
  Ran r = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --objective watts --db " + db_, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("ktune: --objective: 'watts' is neither time, energy nor a metric"), std::string::npos) << r.out;
  r = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --set n=1024 --db " + db_, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("; a replay answers only for the size it was recorded at (--set changes the spec's)"),
            std::string::npos) << r.out;
  r = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --set n --db " + db_, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("ktune: --set: 'n' is not NAME=VALUE"), std::string::npos) << r.out;
}

TEST_F(Cli, ReplayTunesFromRecordedH100DataAndSaysSo) {
  Ran r = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --max-fevals 40 --seed 3 --db " + db_, true);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("REPLAY"), std::string::npos);
  EXPECT_NE(r.out.find("NVIDIA H100"), std::string::npos);
  // What a replay reports are recorded times, not compiles made here, and how near the recording's optimum it came.
  EXPECT_EQ(r.out.find("time: compiles "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("recorded times of these configurations: compiles "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("% of the recording's optimum ("), std::string::npos) << r.out;
  Ran best = ktune("best --json --db " + db_);
  ASSERT_EQ(best.status, 0) << best.out;
  auto j = nlohmann::json::parse(best.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["kernel"], "vector_add");
  EXPECT_TRUE(j[0]["replay"].get<bool>());  // recorded data, not a measurement of this host
  EXPECT_NE(ktune("best --db " + db_).out.find("NVIDIA H100 80GB HBM3 (replay)"), std::string::npos);
  Ran all = ktune("results --json --db " + db_);
  EXPECT_EQ(nlohmann::json::parse(all.out).size(), 40u);
}

// A replay proposes brute_force's batches of 64 as a GPU run does; the time
// limit (recorded time) still ends the run at the evaluation that reaches it.
TEST_F(Cli, TimeLimitEndsARunInsideABatch) {
  Ran r = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --strategy brute_force --time-limit 10s --json --db " + db_);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stop"], "time_limit");
  const int n = j["evaluations"].get<int>();
  EXPECT_GT(n, 1);
  EXPECT_LT(n, 64) << "the first batch of 64 was cut at the limit";
  const double elapsed = j["elapsed_s"].get<double>();
  EXPECT_GE(elapsed, 10.0);
  // Every evaluation but the last started before the limit: without the last
  // one's recorded time the run is under it.
  const auto rows = nlohmann::json::parse(ktune("results --json --sort id --db " + db_).out);
  ASSERT_EQ(rows.size(), static_cast<size_t>(n));
  const auto& last = rows.back();
  const double last_s = (last.value("compile_ms", 0.0) + last.value("verify_ms", 0.0) + last.value("benchmark_ms", 0.0) +
                         last.value("framework_ms", 0.0)) / 1000.0;
  EXPECT_LT(elapsed - last_s, 10.0) << elapsed << " " << last_s;
}

// An interrupted run (here: stopped by its time limit) run again continues:
// the strategy retraces its path through the stored results, which are
// reused and count toward --max-fevals, as a Kernel Tuner cache's hits do.
TEST_F(Cli, ResumeReusesMeasuredConfigurationsAndNeverStoresTwice) {
  Ran first = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --max-fevals 50 --time-limit 20s --json --db " + db_);
  ASSERT_EQ(first.status, 0) << first.out;
  const int done = nlohmann::json::parse(first.out)["evaluations"].get<int>();
  ASSERT_GT(done, 5);
  ASSERT_LT(done, 50);
  Ran r = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --max-fevals 50 --json --db " + db_);
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["resumed"].get<int>(), done);
  EXPECT_EQ(j["evaluations"].get<int>(), 50 - done);
  EXPECT_TRUE(j["replay"].get<bool>());
  EXPECT_EQ(nlohmann::json::parse(ktune("results --json --db " + db_).out).size(), 50u);
}

// Another strategy on the same database is not starved by the first one's
// results: it spends its whole budget, reusing what it proposes that is stored.
TEST_F(Cli, ASecondStrategyOnTheSameDatabaseGetsItsWholeBudget) {
  ASSERT_EQ(ktune("tune " + kVecSpec + " --simulate " + kVecData + " --strategy brute_force --max-fevals 60 --db " + db_)
                .status,
            0);
  Ran r = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --strategy random_sample --max-fevals 40 --json --db " +
                db_, true);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("60 results of this kernel, device and problem size are in the database"), std::string::npos)
      << r.out;
  auto j = nlohmann::json::parse(r.out.substr(r.out.find("{\n")));
  EXPECT_EQ(j["resumed"].get<int>() + j["evaluations"].get<int>(), 40);
  EXPECT_GT(j["evaluations"].get<int>(), 0);
  EXPECT_EQ(j["reusable"].get<int>(), 60);
}

TEST_F(Cli, ReplayFindsTheRecordedOptimumExhaustively) {
  Ran r = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --strategy brute_force --max-fevals 0 --json --db " + db_);
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["evaluations"].get<int>(), 246);
  EXPECT_EQ(j["stop"], "space_exhausted");
  EXPECT_DOUBLE_EQ(j["best"][0]["ratio_to_best"].get<double>(), 1.0);
}

// Every recorded dataset in examples/data replays against its spec:
// every valid configuration is found in the recording (the spec and the data
// agree), and the exhaustive replay ends at the recorded optimum.
TEST_F(Cli, EveryRecordedDatasetReplaysExhaustively) {
  int datasets = 0;
  for (const auto& entry : fs::directory_iterator(kRoot + "/examples/data")) {
    // <template>_<gpu>.json, e.g. sgemm_h100.json, sgemm_h200.json
    const std::string file = entry.path().filename().string();
    const size_t cut = file.rfind('_');
    if (entry.path().extension() != ".json" || cut == std::string::npos) continue;
    // The spec: the template's own, else one of bench/gpu/specs (e.g. gemm_bf16_10k,
    // the template over a wider space).
    const std::string t = file.substr(0, cut);
    std::string spec = kRoot + "/templates/" + t + "/" + t + ".yaml";
    if (!fs::exists(spec)) spec = kRoot + "/bench/gpu/specs/" + t + ".yaml";
    ++datasets;
    Ran space = ktune("space " + spec + " --json");
    ASSERT_EQ(space.status, 0) << t;
    const int valid = nlohmann::json::parse(space.out)["valid"].get<int>();
    Ran r = ktune("tune " + spec + " --simulate " + entry.path().string() +
                  " --strategy brute_force --max-fevals 0 --json --db " + (dir_ / (file + ".db")).string());
    ASSERT_EQ(r.status, 0) << t << ": " << r.out;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["evaluations"].get<int>(), valid) << t;
    EXPECT_EQ(j["status_counts"].value("ok", 0), valid) << t;
    EXPECT_EQ(j["stop"], "space_exhausted") << t;
  }
  EXPECT_GE(datasets, 18);
}

TEST_F(Cli, ImportExportImportKeepsEveryRecord) {
  ASSERT_EQ(ktune("import " + kVecData + " --db " + db_).status, 0);
  const std::string out = (dir_ / "out.json").string();
  ASSERT_EQ(ktune("export --format kernel-tuner --kernel vector_add -o " + out + " --db " + db_).status, 0);
  const std::string db2 = (dir_ / "t2.db").string();
  Ran r = ktune("import " + out + " --json --db " + db2);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)[0]["inserted"].get<int>(), 246);
  EXPECT_EQ(ktune("export --format t4 --kernel nope -o x --db " + db_).status, 2);
}

// `-o -` writes to standard output (the summary to standard error), and
// compare and report take --device as best, results, export and tune do.
TEST_F(Cli, ExportToStandardOutputAndOneSpellingOfDevice) {
  ASSERT_EQ(ktune("import " + kVecData + " --db " + db_).status, 0);
  Ran header = ktune("export --format header -o - --db " + db_);
  ASSERT_EQ(header.status, 0) << header.out;
  EXPECT_EQ(header.out.rfind("// Generated by `ktune export --format header`", 0), 0u) << header.out;
  Ran cache = ktune("export --format kernel-tuner -o - --db " + db_);
  ASSERT_EQ(cache.status, 0);
  EXPECT_EQ(nlohmann::json::parse(cache.out)["kernel_name"], "vector_add");
  EXPECT_FALSE(fs::exists("-"));
  EXPECT_EQ(ktune("export --format wisdom -o - --db " + db_).status, 2);
  EXPECT_EQ(ktune("compare --device H100 --db " + db_, true).status, 0);
  EXPECT_EQ(ktune("report -o " + (dir_ / "r.html").string() + " --device H100 --db " + db_).status, 0);
}

TEST_F(Cli, StrategyComparisonReportsJsonAndPlot) {
  const std::string svg = (dir_ / "p.svg").string();
  Ran r = ktune("strategies compare " + kVecSpec + " --simulate " + kVecData +
                " --strategies random_sample,greedy_ils --runs 4 --max-fevals 40 --json --plot " + svg);
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.contains("optimum"));
  ASSERT_EQ(j["strategies"].size(), 2u);
  EXPECT_TRUE(j["strategies"][0].contains("p_score"));
  EXPECT_TRUE(j["strategies"][0]["evals_to_fraction"].contains("0.95"));
  EXPECT_TRUE(fs::exists(svg));
  // Options per strategy; a bad one is bad input.
  Ran opts = ktune("strategies compare " + kVecSpec + " --simulate " + kVecData +
                   " --strategies auto:switch_at=5,bayes_opt:initial_samples=4:acquisition=lcb --runs 2 --max-fevals 20 --json");
  ASSERT_EQ(opts.status, 0) << opts.out;
  auto jo = nlohmann::json::parse(opts.out);
  EXPECT_EQ(jo["strategies"][0]["name"], "auto:switch_at=5");
  EXPECT_EQ(ktune("strategies compare " + kVecSpec + " --simulate " + kVecData + " --strategies auto:no_such=1").status, 2);
  EXPECT_EQ(ktune("strategies compare " + kVecSpec + " --simulate " + kVecData + " --strategies nope").status, 2);
  // Batches as a GPU run proposes them; each strategy's recorded time per run.
  // Many spaces from a manifest (paths relative to it): each space's table and the aggregate.
  const fs::path manifest = fs::path(::testing::TempDir()) / "cmp_manifest.txt";
  {
    std::ofstream m(manifest);
    m << "# two spaces\nvec_a " << kVecSpec << " " << kVecData << "\n\nvec_b " << kVecSpec << " " << kVecData
      << "  # the same recording again\n";
  }
  Ran many = ktune("strategies compare --manifest " + manifest.string() +
                   " --strategies random_sample,portfolio --runs 2 --max-fevals 30 --json");
  ASSERT_EQ(many.status, 0) << many.out;
  const auto jm = nlohmann::json::parse(many.out);
  ASSERT_EQ(jm["spaces"].size(), 2u);
  EXPECT_EQ(jm["spaces"][1]["label"], "vec_b");
  EXPECT_EQ(jm["spaces"][0]["result"]["strategies"].size(), 2u);
  ASSERT_EQ(jm["aggregate"].size(), 2u);
  EXPECT_EQ(jm["aggregate"][1]["name"], "portfolio");
  EXPECT_EQ(jm["aggregate"][1]["spaces"].get<int>(), 2);
  const auto& vs = jm["aggregate"][1]["vs_random_exact"];
  EXPECT_EQ(vs["ahead"].get<int>() + vs["level"].get<int>() + vs["behind"].get<int>(), 2);  // 2 spaces x the budget 20
  Ran many_text = ktune("strategies compare --manifest " + manifest.string() + " --strategies random_sample --runs 2 --max-fevals 30");
  EXPECT_EQ(many_text.status, 0) << many_text.out;
  EXPECT_NE(many_text.out.find("over 2 spaces"), std::string::npos) << many_text.out;
  // A path with spaces in double quotes, as published caches sit in folders like "KernelTuner data".
  const fs::path spaced = fs::path(::testing::TempDir()) / "Kernel Tuner data";
  fs::create_directories(spaced);
  fs::copy_file(kVecData, spaced / fs::path(kVecData).filename(), fs::copy_options::overwrite_existing);
  {
    std::ofstream m(manifest);
    m << "vec_spaced " << kVecSpec << " \"" << (spaced / fs::path(kVecData).filename()).string() << "\"\n";
  }
  Ran quoted = ktune("strategies compare --manifest " + manifest.string() + " --strategies random_sample --runs 1 --max-fevals 10 --json");
  ASSERT_EQ(quoted.status, 0) << quoted.out;
  EXPECT_EQ(nlohmann::json::parse(quoted.out)["spaces"][0]["label"], "vec_spaced");
  {
    std::ofstream m(manifest);
    m << "only_two_words " << kVecSpec << "\n";
  }
  EXPECT_EQ(ktune("strategies compare --manifest " + manifest.string()).status, 2);
  EXPECT_EQ(ktune("strategies compare --manifest /no/such/manifest").status, 2);
  EXPECT_EQ(ktune("strategies compare " + kVecSpec).status, 2);  // neither --simulate nor --manifest

  Ran batched = ktune("strategies compare " + kVecSpec + " --simulate " + kVecData +
                      " --strategies model_rank,random_sample --runs 2 --max-fevals 24 --batch 8 --json");
  ASSERT_EQ(batched.status, 0) << batched.out;
  auto jb = nlohmann::json::parse(batched.out);
  EXPECT_EQ(jb["strategies"][1]["max_evals_used"].get<int>(), 24);
  EXPECT_GT(jb["strategies"][1]["mean_time_s"].get<double>(), 0.0);
  EXPECT_EQ(ktune("strategies compare " + kVecSpec + " --simulate " + kVecData + " --batch 0").status, 2);
}

// A database that holds the kernel's results on another GPU gives the
// strategy its prior: the first configuration tried on the new GPU is the
// best one there. --no-prior and --prior override that.
TEST_F(Cli, TuneStartsFromTheDatabasesResultsOnAnotherGpu) {
  const std::string h200 = kRoot + "/examples/data/vector_add_h200.json";
  Ran first = ktune("tune " + kVecSpec + " --simulate " + h200 + " --max-fevals 60 --json --db " + db_);
  ASSERT_EQ(first.status, 0) << first.out;
  const auto j200 = nlohmann::json::parse(first.out);
  EXPECT_TRUE(j200["prior"].is_null()) << "an empty database has no prior";

  Ran second = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --max-fevals 1 --json --db " + db_);
  ASSERT_EQ(second.status, 0) << second.out;
  const auto j100 = nlohmann::json::parse(second.out);
  ASSERT_TRUE(j100["prior"].is_object()) << second.out;
  EXPECT_EQ(j100["prior"]["device"], "NVIDIA H200");
  EXPECT_EQ(j100["prior"]["results"].get<int>(), 60);
  EXPECT_EQ(j100["prior"]["successful"].get<int>(), 60);
  EXPECT_EQ(j100["prior"]["problem_size"], "[67108864]");
  EXPECT_EQ(j100["prior"]["source"], db_);
  // The H200's best by the objective (GB/s), not by the report's order, which
  // prefers occupancy between results within noise of each other.
  nlohmann::json best200;
  for (const auto& row : nlohmann::json::parse(ktune("results --json --device 'NVIDIA H200' --db " + db_).out))
    if (best200.is_null() || row["metrics"]["GB/s"].get<double>() > best200["metrics"]["GB/s"].get<double>()) best200 = row;
  const auto tried = nlohmann::json::parse(ktune("results --json --device 'NVIDIA H100 80GB HBM3' --db " + db_).out);
  ASSERT_EQ(tried.size(), 1u);
  EXPECT_EQ(tried[0]["config"], best200["config"]) << "the H200's best is tried first";

  const std::string db2 = (dir_ / "t2.db").string();
  ASSERT_EQ(ktune("tune " + kVecSpec + " --simulate " + h200 + " --max-fevals 5 --db " + db2).status, 0);
  Ran without = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --max-fevals 1 --no-prior --json --db " + db2);
  ASSERT_EQ(without.status, 0) << without.out;
  EXPECT_TRUE(nlohmann::json::parse(without.out)["prior"].is_null());

  // --prior: a file; its best comes first whatever the database holds.
  Ran from_file = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --max-fevals 1 --prior " + h200 +
                        " --json --db " + (dir_ / "t3.db").string());
  ASSERT_EQ(from_file.status, 0) << from_file.out;
  const auto jf = nlohmann::json::parse(from_file.out);
  EXPECT_EQ(jf["prior"]["results"].get<int>(), 246) << jf["prior"];
  EXPECT_EQ(jf["prior"]["source"], h200);

  // A prior whose parameters are not the spec's, or none at all, is bad input.
  const std::string other = kRoot + "/examples/data/reduce_sum_h200.json";
  Ran wrong = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --max-fevals 1 --prior " + other + " --db " + db2, true);
  EXPECT_EQ(wrong.status, 2) << wrong.out;
  EXPECT_EQ(ktune("tune " + kVecSpec + " --simulate " + kVecData + " --prior /no/such.json --db " + db2).status, 2);
  EXPECT_EQ(ktune("tune " + kVecSpec + " --simulate " + kVecData + " --prior " + h200 + " --no-prior --db " + db2).status, 2);

  // A database with the kernel on several devices: --prior-device picks one.
  Ran several = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --max-fevals 1 --prior " + db_ +
                      " --db " + (dir_ / "t4.db").string(), true);
  EXPECT_EQ(several.status, 2) << several.out;
  EXPECT_NE(several.out.find("ktune: --prior-device: " + db_), std::string::npos) << several.out;
  EXPECT_NE(several.out.find("on several devices; choose one: NVIDIA H100 80GB HBM3, NVIDIA H200"), std::string::npos)
      << several.out;
  Ran picked = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --max-fevals 1 --prior " + db_ +
                     " --prior-device 'NVIDIA H200' --json --db " + (dir_ / "t4.db").string());
  ASSERT_EQ(picked.status, 0) << picked.out;
  EXPECT_EQ(nlohmann::json::parse(picked.out)["prior"]["device"], "NVIDIA H200");
  // The text run says which prior it used.
  Ran said = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --max-fevals 1 --prior " + h200 +
                   " --db " + (dir_ / "t5.db").string(), true);
  EXPECT_NE(said.out.find("ktune: prior: 246 results on NVIDIA H200 from"), std::string::npos) << said.out;

  // The comparison takes one too, and says so.
  Ran cmp = ktune("strategies compare " + kVecSpec + " --simulate " + kVecData + " --prior " + h200 +
                  " --strategies model_rank --runs 2 --max-fevals 10");
  ASSERT_EQ(cmp.status, 0) << cmp.out;
  EXPECT_NE(cmp.out.find("prior given to the strategies: 246 results on NVIDIA H200"), std::string::npos) << cmp.out;
}

TEST_F(Cli, CompileWorksWithoutAGpu) {
  Ran r = ktune("compile " + kVecSpec + " --arch sm_80 --sample 2 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["configurations"].size(), 2u);
  EXPECT_EQ(j["configurations"][0]["status"], "ok");
  EXPECT_GT(j["configurations"][0]["registers"].get<int>(), 0);
}

// docs/from-kernel-tuner.md: Kernel Tuner's reduction and stencil examples,
// translated, load with the spaces Kernel Tuner's scripts define and compile offline.
TEST_F(Cli, KernelTunerExamplesTranslateAndCompile) {
  const std::string dir = kRoot + "/examples/from-kernel-tuner/";
  struct Example {
    const char* name;
    int valid;
  };
  for (const Example& e : {Example{"reduction", 2376}, Example{"stencil", 31}}) {
    const std::string name = e.name;
    Ran space = ktune("space " + dir + name + ".yaml --json", true);
    ASSERT_EQ(space.status, 0) << space.out;
    const std::string json = space.out.substr(space.out.find('{'));
    EXPECT_EQ(nlohmann::json::parse(json)["valid"].get<int>(), e.valid) << name;
    if (name == "reduction") {
      EXPECT_NE(space.out.find("problem_size names the tunable parameter 'num_blocks'"), std::string::npos) << space.out;
    }
    Ran r = ktune("compile " + dir + name + ".yaml --arch sm_90 --sample 4 --json");
    ASSERT_EQ(r.status, 0) << name << r.out;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["configurations"].size(), 4u) << name;
    for (const auto& c : j["configurations"]) EXPECT_EQ(c["status"], "ok") << name << " " << c.dump();
  }
}

// A template written for sm_90a (kernel.archs) compiles for it when sm_90 is
// asked for, and --arch sm_80 is bad input naming what it is written for.
TEST_F(Cli, CompileHonoursKernelArchs) {
  const std::string spec = kRoot + "/templates/gemm_wgmma/gemm_wgmma.yaml";
  Ran r = ktune("compile " + spec + " --arch sm_90 --sample 1 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["arch"], "sm_90a");
  EXPECT_EQ(j["configurations"][0]["status"], "ok");
  EXPECT_EQ(ktune("compile " + spec + " --sample 1 --compile-timeout soon").status, 2);
  r = ktune("compile " + spec + " --arch sm_80 --sample 1", true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("written for sm_90a"), std::string::npos) << r.out;
}

TEST_F(Cli, DevicesWithoutADriverIsANormalCondition) {
  Ran r = ktune("devices --json");
  auto j = nlohmann::json::parse(r.out);
  if (j["driver"] == "ready") GTEST_SKIP() << "a CUDA driver is present";
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(j["driver"], "no CUDA driver");
}

}  // namespace

namespace {

// A replay answers only for the problem size it was recorded at, as Kernel
// Tuner refuses a cache of another size: nothing is stored under a size the
// times were never measured at.
TEST_F(Cli, AReplayAtAnotherProblemSizeIsRefused) {
  Ran r = ktune("tune " + kVecSpec + " --set n=1048576 --simulate " + kVecData + " --max-fevals 5 --db " + db_, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("recorded at problem size 67108864, not at the spec's 1048576"), std::string::npos) << r.out;
  Ran rows = ktune("results --json --db " + db_, true);
  EXPECT_EQ(rows.out.find("vector_add\""), std::string::npos) << rows.out;
  // From a database too: the recording is in it, at its own size only.
  ASSERT_EQ(ktune("import " + kVecData + " --db " + db_).status, 0);
  r = ktune("tune " + kVecSpec + " --set n=1048576 --simulate " + db_ + " --max-fevals 5 --db " + (dir_ / "o.db").string(),
            true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("at problem size 67108864, not at the spec's 1048576"), std::string::npos) << r.out;
}

// Replayed rows are recorded data, not measurements: exports leave them out
// unless asked, and then say what they are.
TEST_F(Cli, ExportsLeaveReplaysOutUnlessAskedAndThenMarkThem) {
  ASSERT_EQ(ktune("tune " + kVecSpec + " --simulate " + kVecData + " --max-fevals 10 --db " + db_).status, 0);
  const std::string header = (dir_ / "tuned.h").string();
  Ran r = ktune("export --format header -o " + header + " --db " + db_, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--include-replays"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(header));
  r = ktune("export --format header --include-replays -o " + header + " --db " + db_, true);
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream in(header);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("REPLAYED from recorded data"), std::string::npos);
  const std::string json = (dir_ / "best.json").string();
  ASSERT_EQ(ktune("export --format json --include-replays -o " + json + " --db " + db_).status, 0);
  std::ifstream jin(json);
  const auto j = nlohmann::json::parse(jin);
  EXPECT_EQ(j["kernels"][0]["entries"][0]["replay"], true);
  const std::string kt = (dir_ / "kt.json").string();
  ASSERT_EQ(ktune("export --format kernel-tuner --include-replays -o " + kt + " --db " + db_).status, 0);
  std::ifstream kin(kt);
  EXPECT_EQ(nlohmann::json::parse(kin)["device_name"], "NVIDIA H100 80GB HBM3 (replay)");
  // A measurement (here: imported from a cache) is exported as before, replays left out.
  ASSERT_EQ(ktune("import " + kVecData + " --device 'NVIDIA A100-PCIE-40GB' --db " + db_).status, 0);
  r = ktune("export --format json -o " + json + " --db " + db_, true);
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream jin2(json);
  const auto j2 = nlohmann::json::parse(jin2);
  ASSERT_EQ(j2["kernels"][0]["entries"].size(), 1u);
  EXPECT_EQ(j2["kernels"][0]["entries"][0]["device"], "NVIDIA A100-PCIE-40GB");
}

// Static plus dynamic shared memory past what sm_90 allows a block is found
// offline, from the cubin: invalid, before any GPU could be asked.
TEST_F(Cli, CompileFindsSharedMemoryTheArchitectureCannotGive) {
  std::ofstream(dir_ / "s.cu") << "extern \"C\" __global__ void s(float* a) {\n"
                                  "  __shared__ float tile[8192];\n  extern __shared__ float dyn[];\n"
                                  "  tile[threadIdx.x] = a[threadIdx.x]; dyn[threadIdx.x] = tile[threadIdx.x];\n"
                                  "  __syncthreads(); a[threadIdx.x] = dyn[threadIdx.x ^ 1]; }\n";
  std::ofstream(dir_ / "s.yaml") << "kernel: {name: s, source: s.cu}\nproblem_size: [1024]\n"
                                    "tune_params: {block_size_x: [256], dyn_kib: [16, 160, 200]}\n"
                                    "shared_memory: dyn_kib * 1024\n"
                                    "arguments:\n  - {name: a, type: float*, size: 1024, fill: random}\n";
  Ran r = ktune("compile " + (dir_ / "s.yaml").string() + " --arch sm_90 --all --json", true);
  const auto j = nlohmann::json::parse(r.out.substr(r.out.find("{\n")));
  ASSERT_EQ(j["configurations"].size(), 3u);
  EXPECT_EQ(j["configurations"][0]["status"], "ok");   // 32 + 16 KiB: the 48 KiB default
  EXPECT_EQ(j["configurations"][1]["status"], "ok");   // 32 + 160 KiB
  EXPECT_EQ(j["configurations"][2]["status"], "invalid") << j.dump(1);  // 32 + 200 KiB
  EXPECT_NE(j["configurations"][2]["reason"].get<std::string>().find("shared memory"), std::string::npos);
}

}  // namespace

namespace {

// An interrupted recording (the first 60 records of an exhaustive one): a
// replay keeps to what it holds, and the comparison is of the recorded part.
TEST_F(Cli, APartialRecordingIsReplayedAsTheRecordedPart) {
  std::ifstream in(kVecData);
  nlohmann::json cache = nlohmann::json::parse(in);
  nlohmann::json part = nlohmann::json::object();
  for (auto it = cache["cache"].begin(); it != cache["cache"].end() && part.size() < 60; ++it) part[it.key()] = it.value();
  cache["cache"] = part;
  const std::string partial = (dir_ / "partial.json").string();
  std::ofstream(partial) << cache.dump();
  Ran r = ktune("tune " + kVecSpec + " --simulate " + partial + " --strategy random_sample --max-fevals 30 --json --db " +
                db_, true);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("a PARTIAL recording (60 of 246"), std::string::npos) << r.out;
  auto j = nlohmann::json::parse(r.out.substr(r.out.find("{\n")));
  EXPECT_EQ(j["evaluations"].get<int>(), 30);
  EXPECT_EQ(j["partial_recording"]["recorded"].get<int>(), 60);
  EXPECT_EQ(j["partial_recording"]["valid"].get<int>(), 246);
  EXPECT_EQ(j["status_counts"].value("ok", 0) + j["status_counts"].value("compile_error", 0) +
                j["status_counts"].value("runtime_error", 0) + j["status_counts"].value("invalid", 0),
            30);
  Ran c = ktune("strategies compare " + kVecSpec + " --simulate " + partial +
                " --strategies random_sample,model_rank --runs 3 --max-fevals 60 --json", false);
  ASSERT_EQ(c.status, 0) << c.out;
  auto cj = nlohmann::json::parse(c.out);
  EXPECT_TRUE(cj["partial"].get<bool>());
  EXPECT_EQ(cj["recorded"].get<int>(), 60);
  EXPECT_EQ(cj["valid"].get<int>(), 246);
  Ran text = ktune("strategies compare " + kVecSpec + " --simulate " + partial + " --strategies mls --runs 2 --max-fevals 60");
  EXPECT_NE(text.out.find("a PARTIAL recording"), std::string::npos) << text.out;
}

}  // namespace

namespace {

// `tune --strategy` takes Kernel Tuner's names and the name:option=value form
// strategies compare takes; a strategy ktune lacks is refused naming the closest.
TEST_F(Cli, TuneTakesKernelTunerStrategyNamesAndOptions) {
  Ran r = ktune("tune " + kVecSpec + " --simulate " + kVecData +
                " --strategy firefly_algorithm:popsize=10:maxiter=20 --max-fevals 12 --json --db " + db_, true);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("'firefly_algorithm' (Kernel Tuner's name) is ktune's 'firefly'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'maxiter' (Kernel Tuner's) is not used"), std::string::npos) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out.substr(r.out.find("{\n")))["evaluations"].get<int>(), 12);
  r = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --strategy dual_annealing --db " + db_, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("closest is 'simulated_annealing'"), std::string::npos) << r.out;
  r = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --strategy pso:nosuch=1 --db " + db_, true);
  EXPECT_EQ(r.status, 2) << r.out;
}

}  // namespace

namespace {

// Queries as a user types them: part of a device's name, a configuration's
// values, and tables that say which parameter is which.
TEST_F(Cli, QueriesTakePartOfADeviceNameAndConfigurationValues) {
  ASSERT_EQ(ktune("import " + kVecData + " --db " + db_).status, 0);
  ASSERT_EQ(ktune("import " + kVecData + " --device 'NVIDIA H200' --db " + db_).status, 0);
  Ran r = ktune("best --device h100 --json --db " + db_);
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["device"], "NVIDIA H100 80GB HBM3");
  r = ktune("best --device nvidia --db " + db_, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("matches 2 devices"), std::string::npos) << r.out;
  r = ktune("results --device H100 --config block_size_x=256,vector_width=4 --json --db " + db_);
  ASSERT_EQ(r.status, 0) << r.out;
  j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j.empty());
  for (const auto& row : j) {
    EXPECT_EQ(row["config"]["block_size_x"], 256);
    EXPECT_EQ(row["config"]["vector_width"], 4);
  }
  EXPECT_EQ(nlohmann::json::parse(ktune("results --device H100 --config block_size_x=256 --limit 3 --json --db " + db_).out)
                .size(),
            3u);
  r = ktune("results --config nosuch=1 --db " + db_, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("has no parameter 'nosuch'"), std::string::npos) << r.out;
  r = ktune("results --limit 2 --db " + db_);
  EXPECT_NE(r.out.find("configuration (block_size_x,items_per_thread,vector_width,unroll,grid_stride)"),
            std::string::npos)
      << r.out;
}

}  // namespace

namespace {

TEST_F(Cli, AnArchitectureNvrtcCannotTargetIsRefusedOnce) {
  Ran r = ktune("compile " + kVecSpec + " --arch sm_52 --sample 3", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--arch sm_52: NVRTC"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sm_90"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("FAILED"), std::string::npos) << r.out;  // no configuration was tried
}

}  // namespace

namespace {

// compile --all streams: every valid configuration once, in the space's order,
// in a JSON document that says it was not interrupted.
TEST_F(Cli, CompileAllStreamsEveryConfigurationInOrder) {
  std::ofstream(dir_ / "k.cu") << "extern \"C\" __global__ void k(float* a) { a[threadIdx.x] = scale; }\n";
  std::ofstream(dir_ / "k.yaml") << "kernel: {name: k, source: k.cu}\nproblem_size: [1024]\n"
                                    "tune_params: {block_size_x: [32, 64, 128], scale: [1, 2, 3, 4, 5, 6, 7]}\n"
                                    "restrictions: [\"block_size_x * scale <= 512\"]\n"
                                    "arguments:\n  - {name: a, type: float*, size: 1024, fill: zeros}\n";
  Ran r = ktune("compile " + (dir_ / "k.yaml").string() + " --all -j 2 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["interrupted"].get<bool>());
  ASSERT_EQ(j["configurations"].size(), 7u + 7u + 4u);  // scale <= 16, 8, 4: all 7, all 7, 4
  std::set<std::string> seen;
  for (const auto& c : j["configurations"]) {
    EXPECT_EQ(c["status"], "ok") << c.dump();
    EXPECT_TRUE(seen.insert(c["config"].dump()).second) << c.dump();
  }
  Ran text = ktune("compile " + (dir_ / "k.yaml").string() + " --all -j 2");
  EXPECT_NE(text.out.find("k for sm_90, 18 configurations"), std::string::npos) << text.out;
}

}  // namespace

namespace {

// A replay with simulated GPUs (`--workers N`) says so, reports the wall time
// the recorded times imply for them, and finds what one worker finds;
// `--workers` and `--gpus` each belong to one kind of run.
TEST_F(Cli, SimulatedWorkersPredictTheWallTimeAndWorkerOptionsAreChecked) {
  const std::string base = "tune " + kVecSpec + " --simulate " + kVecData + " --strategy brute_force --max-fevals 0 --json";
  Ran one = ktune(base + " --db " + db_);
  Ran three = ktune(base + " --workers 3 --db " + (dir_ / "three.db").string());
  ASSERT_EQ(one.status, 0) << one.out;
  ASSERT_EQ(three.status, 0) << three.out;
  const auto j1 = nlohmann::json::parse(one.out), j3 = nlohmann::json::parse(three.out);
  EXPECT_EQ(j1["workers"], 1);
  EXPECT_EQ(j3["workers"], 3);
  EXPECT_TRUE(j3["replay"].get<bool>());
  EXPECT_EQ(j3["evaluations"], j1["evaluations"]);
  EXPECT_EQ(j3["best"][0]["config"], j1["best"][0]["config"]);
  // The same GPU work and compiles, on three GPUs in less wall time, no less than a third.
  const double busy = j1["parallel"]["busy_s"].get<double>(), wall1 = j1["predicted_wall_s"].get<double>();
  EXPECT_NEAR(j3["parallel"]["busy_s"].get<double>(), busy, 1e-6 * busy);
  EXPECT_EQ(j3["parallel"]["compiles"], j1["parallel"]["compiles"]);
  EXPECT_LE(j1["elapsed_s"].get<double>(), wall1);  // the budget's clock is the predicted one (the run ends after it)
  EXPECT_GE(wall1, busy);
  EXPECT_GE(j3["predicted_wall_s"].get<double>(), busy / 3 * (1 - 1e-9));
  EXPECT_LT(j3["predicted_wall_s"].get<double>(), wall1);
  Ran text = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --max-fevals 20 --workers 2 --db " +
                   (dir_ / "text.db").string(), true);
  EXPECT_NE(text.out.find("2 SIMULATED GPUs and compile processes"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("predicted for 2 GPUs (simulated)"), std::string::npos) << text.out;

  for (const std::string& bad : {std::string("--workers 3"), std::string("--gpus 0,x"), std::string("--gpus ''"),
                                 std::string("--simulate ") + kVecData + " --gpus 0,1",
                                 std::string("--simulate ") + kVecData + " --workers 0",
                                 std::string("--simulate ") + kVecData + " --compile-slots 0",
                                 std::string("--compile-slots 4"),
                                 std::string("--gpu 1 --gpus 0,1")}) {
    Ran r = ktune("tune " + kVecSpec + " " + bad + " --db " + (dir_ / "bad.db").string(), true);
    EXPECT_EQ(r.status, 2) << bad << "\n" << r.out;
  }
}

// A replay offers no profiler, over one simulated GPU or several: asked for
// counters, the run says why, with its results stored.
TEST_F(Cli, AReplayRefusesProfileTopAsAReplay) {
  for (const std::string workers : {"1", "2"}) {
    const std::string path = (dir_ / ("counters" + workers + ".db")).string();
    Ran r = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --max-fevals 5 --workers " + workers +
                      " --profile-top 2 --db " + path,
                  true);
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("--profile-top needs a GPU run; a replay has no counters"), std::string::npos) << r.out;
    EXPECT_EQ(ktune::db::Store(path).results({}).size(), 5u);
  }
}

// Kernel Tuner's hyper-parameter tuning records a `score` per setting of a
// strategy's options (higher is better, here negative) and no time, in its
// cache and T4 files; its T1 files say Language Hypertuner. Replays and
// comparisons rank by the recorded score; a record with neither is refused
// with its line; `best`, which ranks by time, says why it finds none.
TEST_F(Cli, AHyperParameterRecordingIsReplayedByItsRecordedScore) {
  const fs::path t1 = dir_ / "meta_anneal.json";
  std::ofstream(t1) << R"json({
  "General": {"BenchmarkName": "hyper_anneal", "OutputFormat": "JSON"},
  "ConfigurationSpace": {"TuningParameters": [
    {"Name": "restarts", "Type": "int", "Values": "[1, 2, 4]", "Default": 2},
    {"Name": "cooling", "Type": "float", "Values": "[0.9, 0.95, 0.99]", "Default": 0.95},
    {"Name": "neighbour", "Type": "string", "Values": "['Hamming', 'adjacent']", "Default": "Hamming"}],
    "Conditions": []},
  "KernelSpecification": {"Language": "Hypertuner", "KernelName": "hyper_anneal", "KernelFile": "dummy.cu",
    "LocalSize": {"X": "block_size_x", "Y": "1", "Z": "1"}, "GridDivX": ["block_size_x", "tile_size_x"],
    "ProblemSize": [4096, 1, 1], "Arguments": []}
})json";
  // score: -0.25 at (2, 0.95, adjacent), lower the further from it.
  nlohmann::json cache = {{"device_name", "x86_64"}, {"kernel_name", "hyper_anneal"}, {"problem_size", nlohmann::json::array()},
                          {"tune_params_keys", {"restarts", "cooling", "neighbour"}},
                          {"tune_params", {{"restarts", {1, 2, 4}}, {"cooling", {0.9, 0.95, 0.99}},
                                           {"neighbour", {"Hamming", "adjacent"}}}},
                          {"objective", "score"}, {"cache", nlohmann::json::object()}};
  nlohmann::json t4 = {{"metadata", {{"timeunit", "milliseconds"}}}, {"results", nlohmann::json::array()},
                       {"schema_version", "1.0.0"}};
  for (int r : {1, 2, 4})
    for (const char* c : {"0.9", "0.95", "0.99"})
      for (const char* n : {"Hamming", "adjacent"}) {
        const double score = -0.25 - 0.2 * std::abs(r - 2) - std::abs(std::stod(c) - 0.95) * 10 -
                             (std::string(n) == "Hamming" ? 0.1 : 0);
        const std::string key = std::to_string(r) + "," + c + "," + n;
        cache["cache"][key] = {{"restarts", r}, {"cooling", std::stod(c)}, {"neighbour", n}, {"score", score},
                               {"scores", {score}}, {"benchmark_time", 1.5e6}, {"compile_time", 40.0}};
        t4["results"].push_back({{"configuration", {{"restarts", r}, {"cooling", std::stod(c)}, {"neighbour", n}}},
                                 {"times", {{"compilation", 40.0}, {"runtimes", {1.5e6}}}},
                                 {"invalidity", "correct"}, {"correctness", 1},
                                 {"measurements", {{{"name", "score"}, {"value", score}, {"unit", ""}}}},
                                 {"objectives", {"score"}}});
      }
  const fs::path kt = dir_ / "hyper_cache.json", t4file = dir_ / "hyper_T4.json";
  std::ofstream(kt) << cache.dump(1);
  std::ofstream(t4file) << t4.dump(1);

  for (const fs::path& data : {kt, t4file}) {
    const Ran cmp = ktune("strategies compare " + t1.string() + " --simulate " + data.string() +
                         " --strategies portfolio,random_sample --runs 3 --max-fevals 18 --json");
    ASSERT_EQ(cmp.status, 0) << data << ktune("strategies compare " + t1.string() + " --simulate " + data.string() +
                                              " --runs 1 --strategies random_sample", true).out;
    const auto c = nlohmann::json::parse(cmp.out);
    EXPECT_DOUBLE_EQ(c["optimum"].get<double>(), -0.25) << data;
    EXPECT_TRUE(c["higher_is_better"].get<bool>());
    EXPECT_EQ(c["valid"].get<int>(), 18);
    // Fractions of the optimum stay within [0, 1] for negative scores (a
    // ratio to the optimum, -0.45 / -0.25, would put a worse one above 1).
    for (const auto& strategy : c["strategies"]) {
      const auto& at10 = strategy["fraction_at_budget"]["10"];
      EXPECT_LE(at10["max"].get<double>(), 1.0) << strategy["name"];
      EXPECT_GE(at10["min"].get<double>(), 0.0) << strategy["name"];
    }
  }
  const Ran run = ktune("tune " + t1.string() + " --simulate " + kt.string() +
                        " --strategy brute_force --json --db " + db_);
  ASSERT_EQ(run.status, 0) << run.out;
  const auto best = nlohmann::json::parse(run.out)["best"];
  EXPECT_EQ(best[0]["config"]["restarts"].get<int>(), 2);
  EXPECT_EQ(best[0]["config"]["neighbour"].get<std::string>(), "adjacent");
  EXPECT_DOUBLE_EQ(best[0]["objective"].get<double>(), -0.25);
  EXPECT_TRUE(best[0]["time_ms"].is_null());
  EXPECT_TRUE(best[1]["ratio_to_best"].is_null());  // a ratio of negative scores would read as better
  EXPECT_LT(best[1]["difference_to_best"].get<double>(), 0);
  const Ran text = ktune("tune " + t1.string() + " --simulate " + kt.string() + " --strategy brute_force --db " + db_);
  EXPECT_NE(text.out.find("-0.2500"), std::string::npos) << text.out;

  // Imported, the results are there but `best` (by time) has none to rank.
  const std::string imported = (dir_ / "imported.db").string();
  ASSERT_EQ(ktune("import " + kt.string() + " --db " + imported).status, 0);
  const Ran b = ktune("best --db " + imported, true);
  EXPECT_EQ(b.status, 1);
  EXPECT_NE(b.out.find("18 successful results match but record no time (recorded: score)"), std::string::npos) << b.out;
  // Given the spec, `best` ranks by its recorded score.
  const Ran by_score = ktune("best " + t1.string() + " --json --db " + imported);
  ASSERT_EQ(by_score.status, 0) << by_score.out;
  const auto top = nlohmann::json::parse(by_score.out);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0]["config"]["restarts"].get<int>(), 2);
  EXPECT_EQ(top[0]["config"]["neighbour"].get<std::string>(), "adjacent");
  EXPECT_DOUBLE_EQ(top[0]["metrics"]["score"].get<double>(), -0.25);

  // A record with neither its time nor the cache's objective is no measurement.
  std::string broken = cache.dump(1);
  broken.replace(broken.find("\"score\": -0.25,"), 15, "");
  std::ofstream(dir_ / "broken.json") << broken;
  const Ran refused = ktune("import " + (dir_ / "broken.json").string() + " --db " + imported, true);
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.out.find("has neither a time nor a number for the cache's objective 'score'"), std::string::npos)
      << refused.out;
}

// `ktune best SPEC` ranks by the spec's objective where it is no time: here
// a metric of each stored configuration (work done per time, which a longer
// unroll raises while it slows the kernel). An imported cache lists the
// parameters in its own order and lacks one the spec holds at one value:
// the values are read by name. Without the spec, `best` ranks by time.
TEST_F(Cli, BestRanksByTheSpecsMetricReadingParametersByName) {
  std::ofstream(dir_ / "scale.cu") << "extern \"C\" __global__ void scale(float* x, int n) {}\n";
  const std::string text = R"(kernel:
  name: scale
  source: scale.cu
constants:
  n: 4096
problem_size: [n]
tune_params:
  block_size_x: [32, 64, 128]
  unroll: [1, 2, 4]
  vec: [1]
arguments:
  - {name: x, type: float*, size: n, fill: zeros, output: true}
  - {name: n, type: int32, value: n}
metrics:
  work: unroll * n / (time_ms * 1e6)
)";
  const fs::path spec = dir_ / "scale.yaml", energy = dir_ / "scale_energy.yaml";
  std::ofstream(spec) << text << "objective: work\nhigher_is_better: true\n";
  std::ofstream(energy) << text << "objective: energy\n";
  nlohmann::json cache = {{"device_name", "NVIDIA H100 80GB HBM3"}, {"kernel_name", "scale"},
                          {"problem_size", {4096}}, {"tune_params_keys", {"unroll", "block_size_x"}},
                          {"tune_params", {{"unroll", {1, 2, 4}}, {"block_size_x", {32, 64, 128}}}},
                          {"objective", "time"}, {"cache", nlohmann::json::object()}};
  for (int u : {1, 2, 4})
    for (int b : {32, 64, 128}) {
      const double t = 1.0 + 0.5 * u + 0.1 * std::abs(b - 64) / 32.0;  // work: best at unroll 4, block 64
      cache["cache"][std::to_string(u) + "," + std::to_string(b)] = {
          {"unroll", u}, {"block_size_x", b}, {"time", t}, {"times", {t, t}}, {"compile_time", 40.0}};
    }
  const fs::path kt = dir_ / "scale_cache.json";
  std::ofstream(kt) << cache.dump(1);
  const std::string db = (dir_ / "scale.db").string();
  ASSERT_EQ(ktune("import " + kt.string() + " --db " + db).status, 0);

  const auto best_config = [&](const std::string& args) {
    const Ran r = ktune("best " + args + " --json --db " + db);
    EXPECT_EQ(r.status, 0) << r.out;
    const auto rows = nlohmann::json::parse(r.out);
    EXPECT_EQ(rows.size(), 1u) << r.out;
    return rows[0]["config"];
  };
  const nlohmann::json by_work = best_config(spec.string());
  EXPECT_EQ(by_work["unroll"].get<int>(), 4) << by_work;
  EXPECT_EQ(by_work["block_size_x"].get<int>(), 64) << by_work;
  const nlohmann::json by_time = best_config("--kernel scale");
  EXPECT_EQ(by_time["unroll"].get<int>(), 1) << by_time;
  EXPECT_EQ(by_time["block_size_x"].get<int>(), 64) << by_time;

  // An objective none of the results gives: said, not an empty answer.
  const Ran none = ktune("best " + energy.string() + " --db " + db, true);
  EXPECT_EQ(none.status, 1);
  EXPECT_NE(none.out.find("9 successful results match, none with a value of the spec's objective 'energy' (no "
                          "energy was measured)"),
            std::string::npos)
      << none.out;
}

// KTT's output names Kernel Tuner's parameters in capitals and adds the
// problem's constants as parameters of one value: a replay against the
// spec's lower-case names reads them as the spec's (noted) and sets the
// constant aside (noted); a name that matches nothing is still a mismatch.
TEST_F(Cli, AKttRecordingReplaysAgainstTheSpecsNames) {
  const fs::path t1 = dir_ / "scale_t1.json";
  std::ofstream(t1) << R"json({
  "General": {"BenchmarkName": "scale"},
  "ConfigurationSpace": {"TuningParameters": [
    {"Name": "block_size_x", "Type": "int", "Values": "[32, 64, 128, 256]"},
    {"Name": "unroll", "Type": "int", "Values": "[1, 2, 4]"}], "Conditions": []},
  "KernelSpecification": {"Language": "CUDA", "KernelName": "scale", "KernelFile": "scale.cu",
    "GlobalSizeType": "CUDA", "LocalSize": {"X": "block_size_x", "Y": "1", "Z": "1"},
    "GridDivX": ["block_size_x"], "ProblemSize": [4096, 1, 1], "Arguments": []}
})json";
  nlohmann::json ktt = {{"Metadata", {{"Device", "NVIDIA H100 80GB HBM3"}, {"KttVersion", "2.1.0"},
                                      {"TimeUnit", "Nanoseconds"}}},
                        {"Results", nlohmann::json::array()}};
  for (int b : {32, 64, 128, 256})
    for (int u : {1, 2, 4}) {
      const bool fails = b == 256 && u == 4;
      ktt["Results"].push_back(
          {{"Configuration", {{{"Name", "BLOCK_SIZE_X"}, {"Value", b}, {"ValueType", "UnsignedInt"}},
                              {{"Name", "UNROLL"}, {"Value", u}, {"ValueType", "UnsignedInt"}},
                              {{"Name", "N"}, {"Value", 4096}, {"ValueType", "UnsignedInt"}}}},
           {"ComputationResults", nlohmann::json::array()}, {"KernelName", "scale"},
           {"Status", fails ? "ComputationFailed" : "Ok"},
           {"TotalDuration", fails ? 0.0 : 1000.0 * (1 + std::abs(b - 128) / 32.0 + std::abs(u - 2))}});
    }
  const fs::path data = dir_ / "KTScaleOutput.json";
  std::ofstream(data) << ktt.dump(2);
  const Ran cmp = ktune("strategies compare " + t1.string() + " --simulate " + data.string() +
                        " --strategies random_sample --runs 2 --max-fevals 5", true);
  ASSERT_EQ(cmp.status, 0) << cmp.out;
  EXPECT_NE(cmp.out.find("recorded parameter 'BLOCK_SIZE_X' is read as the spec's 'block_size_x' (the names differ "
                         "in case only)"),
            std::string::npos)
      << cmp.out;
  EXPECT_NE(cmp.out.find("recorded parameter 'N' holds one value (4096) in every record and is no parameter of the "
                         "spec: set aside"),
            std::string::npos)
      << cmp.out;
  EXPECT_NE(cmp.out.find("12 valid configurations (12 recorded, 1 of them failed); optimum 0.00100 ms"),
            std::string::npos)
      << cmp.out;
  const Ran run = ktune("tune " + t1.string() + " --simulate " + data.string() +
                        " --strategy brute_force --json --db " + db_);
  ASSERT_EQ(run.status, 0) << run.out;
  const auto best = nlohmann::json::parse(run.out)["best"][0];
  EXPECT_EQ(best["config"]["block_size_x"].get<int>(), 128);
  EXPECT_EQ(best["config"]["unroll"].get<int>(), 2);
  EXPECT_DOUBLE_EQ(best["time_ms"].get<double>(), 0.001);

  // Given as the prior of another run, the file is read by the same rule,
  // and the run says so as a replay does.
  const Ran with_prior = ktune("tune " + t1.string() + " --simulate " + data.string() + " --prior " +
                                   data.string() + " --max-fevals 3 --db " + (dir_ / "prior.db").string(),
                               true);
  ASSERT_EQ(with_prior.status, 0) << with_prior.out;
  EXPECT_NE(with_prior.out.find("ktune: note: --prior: " + data.string() +
                                ": recorded parameter 'BLOCK_SIZE_X' is read as the spec's 'block_size_x'"),
            std::string::npos)
      << with_prior.out;

  // A parameter of several values that the spec lacks is no constant to drop.
  std::string other = ktt.dump(2);
  for (size_t at = other.find("\"UNROLL\""); at != std::string::npos; at = other.find("\"UNROLL\"", at))
    other.replace(at, 8, "\"UNROLL_Y\"");
  std::ofstream(dir_ / "other.json") << other;
  const Ran mismatch = ktune("strategies compare " + t1.string() + " --simulate " + (dir_ / "other.json").string() +
                             " --strategies random_sample --runs 1", true);
  EXPECT_EQ(mismatch.status, 2);
  EXPECT_NE(mismatch.out.find("missing from the data: unroll; not in the spec: UNROLL_Y"), std::string::npos)
      << mismatch.out;
}

// The first table a user sees (scripts/demo.sh's replay) shows what it ranks
// by first after the configuration, and beside it the time that objective was
// computed from (the median of the samples), so that neither column is out of
// order.
TEST_F(Cli, TheTuneTableShowsWhatItRanksBy) {
  const Ran r = ktune("tune " + kVecSpec + " --simulate " + kVecData + " --max-fevals 60 --db " + db_);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("ranked by GB/s (higher is better)"), std::string::npos) << r.out;
  const size_t head = r.out.find("\n#  ");
  ASSERT_NE(head, std::string::npos) << r.out;
  std::istringstream lines(r.out.substr(head + 1));
  std::string line;
  std::getline(lines, line);
  std::istringstream h(line);
  std::vector<std::string> cols{std::istream_iterator<std::string>(h), {}};
  ASSERT_GE(cols.size(), 6u) << line;
  EXPECT_EQ(cols[2], "GB/s") << line;
  EXPECT_EQ(cols[5], "median") << line;  // "vs best", "median ms"
  std::getline(lines, line);             // the rule
  double last_gbs = 1e300, last_ms = 0;
  int rows = 0;
  while (std::getline(lines, line) && !line.empty() && line[0] != '(') {
    std::istringstream row(line);
    std::string rank, config, share;
    double gbs = 0, ms = 0;
    row >> rank >> config >> gbs >> share >> ms;
    EXPECT_LE(gbs, last_gbs) << line;
    EXPECT_GE(ms, last_ms) << line;
    EXPECT_NEAR(3 * 4 * 67108864.0 / (ms * 1e6), gbs, 0.5) << line;
    last_gbs = gbs;
    last_ms = ms;
    ++rows;
  }
  EXPECT_EQ(rows, 10) << r.out;
  // `best` and `results` say what they rank by.
  EXPECT_NE(ktune("best --db " + db_).out.find("by time ms (lowest)"), std::string::npos);
  EXPECT_NE(ktune("best " + kVecSpec + " --db " + db_).out.find("by GB/s (higher is better)"), std::string::npos);
}

// A parameter with one value would repeat it on every row: tables show the
// parameters that vary, and name the others once; compile names the order.
TEST_F(Cli, TablesLeaveOutParametersOfOneValue) {
  std::ifstream in(kVecSpec);
  std::string text{std::istreambuf_iterator<char>(in), {}};
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"unroll: [0, 1]", "unroll: [1]"},
                                 {"grid_stride: [0, 1]", "grid_stride: [0]"},
                                 {"source: vector_add.cu", "source: " + kRoot + "/templates/vector_add/vector_add.cu"}}) {
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  }
  const std::string spec = (dir_ / "fixed.yaml").string();
  std::ofstream(spec) << text;
  const std::string left_out = "the same in every configuration, not shown: unroll=1, grid_stride=0";
  const Ran tune = ktune("tune " + spec + " --simulate " + kVecData + " --max-fevals 5 --db " + db_);
  ASSERT_EQ(tune.status, 0) << tune.out;
  EXPECT_NE(tune.out.find("configuration: block_size_x,items_per_thread,vector_width\n" + left_out), std::string::npos)
      << tune.out;
  EXPECT_EQ(tune.out.find(",1,0 "), std::string::npos) << tune.out;
  const Ran results = ktune("results " + spec + " --db " + db_);
  EXPECT_NE(results.out.find(left_out + "\n"), std::string::npos) << results.out;
  EXPECT_NE(results.out.find("configuration (block_size_x,items_per_thread,vector_width)"), std::string::npos)
      << results.out;
  // Without a spec, the stored rows say which parameters vary: every one of
  // vector_add's here, though the three fastest share two values.
  const std::string all = (dir_ / "all.db").string();
  ASSERT_EQ(ktune("import " + kVecData + " --db " + all).status, 0);
  const Ran three = ktune("results --limit 3 --db " + all);
  EXPECT_EQ(three.out.find("not shown"), std::string::npos) << three.out;
  const Ran compile = ktune("compile " + spec + " --sample 2");
  EXPECT_NE(compile.out.find("configuration: block_size_x,items_per_thread,vector_width\n" + left_out),
            std::string::npos)
      << compile.out;
}

}  // namespace
