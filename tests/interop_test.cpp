// Kernel Tuner cache and T4 files: every quirk of reading, canonical writing,
// import into the store and export -> import round trips.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <zlib.h>

#include "db/interchange/device_names.h"
#include "db/interchange/interchange.h"
#include "db/interchange/kerneltuner.h"
#include "db/interchange/ktt.h"
#include "db/interchange/t4.h"
#include "ktune/error.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace ktune;
using namespace ktune::db;

namespace {

std::string data(const std::string& rel) { return std::string(KTUNE_TESTS_DIR) + "/data/" + rel; }

using ktune::testing::TempDir;

const Evaluation& by_key(const ResultSet& rs, const std::string& key) {
  for (const Evaluation& e : rs.evaluations)
    if (config_key(e.config) == key) return e;
  throw std::runtime_error("no record " + key);
}

// Same values and the same types (Value's == is Python's: 1 == 1.0 == True).
void expect_same_config(const std::vector<Value>& a, const std::vector<Value>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i], b[i]);
    EXPECT_EQ(a[i].type(), b[i].type()) << "value " << i << ": " << a[i].repr();
  }
}

std::string kt_header(const std::string& problem_size_line, const std::string& objective_line) {
  return "{\"device_name\": \"A100\", \"kernel_name\": \"k\"," + problem_size_line + objective_line +
         "\"tune_params_keys\": [\"bx\"], \"tune_params\": {\"bx\": [32, 64]}, \"cache\": {"
         "\"32\": {\"bx\": 32, \"time\": 1.5, \"times\": [1.5]}}}";
}

}  // namespace

TEST(KernelTuner, ReadsRealisticCache) {
  ResultSet rs = read_kernel_tuner(data("kt/rtx3090_vector_add.json"));
  EXPECT_EQ(rs.device_name, "NVIDIA GeForce RTX 3090");
  EXPECT_EQ(rs.kernel_name, "vector_add");
  EXPECT_EQ(rs.problem_size, ProblemSize{10000000});
  EXPECT_FALSE(rs.truncated);
  ASSERT_EQ(rs.param_names, (std::vector<std::string>{"block_size_x", "tile", "alg", "use_shared", "factor"}));
  EXPECT_EQ(rs.param_types, (std::vector<ValueType>{ValueType::Int, ValueType::Int, ValueType::String,
                                                    ValueType::Bool, ValueType::Float}));
  ASSERT_EQ(rs.evaluations.size(), 6u);

  // Keys recomputed from typed values match Kernel Tuner's own keys.
  const Evaluation& e = by_key(rs, "256,2,alg_2,False,2.45");
  expect_same_config(e.config, {Value(256), Value(2), Value("alg_2"), Value(false), Value(2.45)});
  EXPECT_EQ(e.status, Status::Ok);
  EXPECT_DOUBLE_EQ(*e.time_ms, 0.4812);
  EXPECT_EQ(e.samples.size(), 7u);
  EXPECT_EQ(e.sample_count, 7);
  EXPECT_DOUBLE_EQ(*e.min_ms, 0.4801);
  EXPECT_EQ(*e.registers, 20);
  EXPECT_DOUBLE_EQ(e.metrics.at("GFLOP/s"), 20.78);
  EXPECT_EQ(e.timestamp, "2022-12-23T12:11:27.102311+00:00");
  EXPECT_DOUBLE_EQ(*e.framework_ms, 0.9);
  EXPECT_FALSE(e.strategy_ms);

  const Evaluation& first = by_key(rs, "128,1,alg_1,True,1.5");
  EXPECT_DOUBLE_EQ(*first.power_w, 212.5);
  EXPECT_DOUBLE_EQ(*first.sm_clock_mhz, 1695);
  EXPECT_DOUBLE_EQ(*first.temperature_c, 61);
  EXPECT_DOUBLE_EQ(*first.energy_j, 0.111);  // NVMLObserver's energy per launch is ktune's energy_j
  EXPECT_EQ(first.metrics.count("nvml_energy"), 0u);
  EXPECT_DOUBLE_EQ(first.metrics.at("mem_freq"), 9751);
  EXPECT_FALSE(first.metrics.count("num_regs"));
  EXPECT_DOUBLE_EQ(*first.compile_ms, 265.35);
  EXPECT_DOUBLE_EQ(*first.strategy_ms, 0.02);

  // Python keeps 2 an int among floats: the key says "2", not "2.0".
  EXPECT_TRUE(by_key(rs, "512,4,alg_2,True,2").config[4].is_int());

  EXPECT_EQ(by_key(rs, "512,4,alg_1,False,2.45").status, Status::Invalid);
  EXPECT_EQ(by_key(rs, "256,4,alg_1,True,1.5").status, Status::CompileError);
  EXPECT_DOUBLE_EQ(*by_key(rs, "256,4,alg_1,True,1.5").compile_ms, 120.5);
  EXPECT_EQ(by_key(rs, "128,4,alg_2,False,1.5").status, Status::RuntimeError);
  EXPECT_FALSE(by_key(rs, "128,4,alg_2,False,1.5").time_ms);
}

TEST(KernelTuner, RepairsInterruptedFiles) {
  ResultSet rs = read_kernel_tuner(data("kt/interrupted.json"));
  EXPECT_TRUE(rs.truncated);
  EXPECT_EQ(rs.dropped, 0u);
  EXPECT_EQ(rs.problem_size, (ProblemSize{4096, 4096}));
  ASSERT_EQ(rs.evaluations.size(), 3u);
  EXPECT_EQ(rs.evaluations[2].status, Status::Invalid);

  ResultSet cut = read_kernel_tuner(data("kt/interrupted_midrecord.json"));
  EXPECT_TRUE(cut.truncated);
  EXPECT_EQ(cut.dropped, 1u);
  ASSERT_EQ(cut.evaluations.size(), 1u);
  EXPECT_DOUBLE_EQ(*cut.evaluations[0].time_ms, 12.913);

  // Killed right after the header: no records yet.
  ResultSet empty = parse_kernel_tuner(
      "{\n\"device_name\": \"A100\",\n\"tune_params_keys\": [\"bx\"],\n\"tune_params\": {\"bx\": [1]},\n"
      "\"cache\": {\n",
      "header_only.json");
  EXPECT_TRUE(empty.truncated);
  EXPECT_TRUE(empty.evaluations.empty());
}

TEST(KernelTuner, ReadsLegacyErrorEncoding) {
  ResultSet rs = read_kernel_tuner(data("kt/legacy.json"));
  EXPECT_TRUE(rs.problem_size.empty());  // absent
  EXPECT_EQ(rs.objectives, std::vector<std::string>{"time"});
  EXPECT_EQ(by_key(rs, "16,1,0").status, Status::Ok);
  EXPECT_EQ(by_key(rs, "16,2,1").sample_count, 0);
  EXPECT_DOUBLE_EQ(*by_key(rs, "16,2,1").time_ms, 2.5512);
  EXPECT_EQ(by_key(rs, "48,4,0").status, Status::Invalid);
  EXPECT_EQ(by_key(rs, "32,4,1").status, Status::CompileError);
  EXPECT_EQ(by_key(rs, "32,2,0").status, Status::RuntimeError);
  EXPECT_TRUE(by_key(rs, "32,2,0").samples.empty());
}

TEST(KernelTuner, ProblemSizeAndObjectiveVariants) {
  EXPECT_EQ(parse_kernel_tuner(kt_header("\"problem_size\": 4096,", ""), "a").problem_size, ProblemSize{4096});
  EXPECT_EQ(parse_kernel_tuner(kt_header("\"problem_size\": [512, 256, 1],", ""), "a").problem_size,
            (ProblemSize{512, 256}));
  EXPECT_TRUE(parse_kernel_tuner(kt_header("\"problem_size\": \"callable\",", ""), "a").problem_size.empty());
  // A parameter's name (Kernel Tuner's reduction example): it sets each configuration's grid.
  EXPECT_TRUE(parse_kernel_tuner(kt_header("\"problem_size\": \"num_blocks\",", ""), "a").problem_size.empty());
  EXPECT_TRUE(parse_kernel_tuner(kt_header("\"problem_size\": [\"num_blocks\", 1],", ""), "a").problem_size.empty());
  EXPECT_TRUE(parse_kernel_tuner(kt_header("", ""), "a").problem_size.empty());
  EXPECT_EQ(parse_kernel_tuner(kt_header("", "\"objective\": \"GFLOP/s\","), "a").objectives,
            std::vector<std::string>{"GFLOP/s"});
  EXPECT_EQ(parse_kernel_tuner(kt_header("", "\"objective\": [\"time\", \"nvml_energy\"],"), "a").objectives,
            (std::vector<std::string>{"time", "nvml_energy"}));
  EXPECT_THROW(parse_kernel_tuner(kt_header("\"problem_size\": [1.5],", ""), "a"), Error);

  // Parameter values missing from a record are read from its key.
  ResultSet rs = parse_kernel_tuner(
      "{\"tune_params_keys\": [\"bx\", \"f\"], \"tune_params\": {\"bx\": [32], \"f\": [0.5]}, \"cache\": {"
      "\"32,0.5\": {\"time\": 1.0}}}",
      "keyonly.json");
  expect_same_config(rs.evaluations.at(0).config, {Value(32), Value(0.5)});
}

TEST(KernelTuner, MalformedInputPointsAtTheLine) {
  try {
    parse_kernel_tuner("{\"cache\": {}}\n garbage", "bad.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_status(), 2);
    EXPECT_EQ(e.where().file, "bad.json");
    EXPECT_EQ(e.where().line, 2);
  }
  EXPECT_THROW(parse_kernel_tuner("{\"device_name\": \"x\"}", "nocache.json"), Error);
}

TEST(KernelTuner, WritesCanonicalTerminatedFile) {
  ResultSet rs = read_kernel_tuner(data("kt/rtx3090_vector_add.json"));
  std::string text = format_kernel_tuner(rs);
  EXPECT_EQ(text.substr(text.size() - 4), "}\n}\n");
  EXPECT_NE(text.find("\n\"256,2,alg_2,False,2.45\": {\"block_size_x\":256,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"__error__\":\"InvalidConfig\""), std::string::npos);
  ResultSet back = parse_kernel_tuner(text, "written.json");
  EXPECT_FALSE(back.truncated);
  ASSERT_EQ(back.evaluations.size(), rs.evaluations.size());
  for (size_t i = 0; i < rs.evaluations.size(); ++i) {
    EXPECT_EQ(back.evaluations[i], rs.evaluations[i]) << i;
    expect_same_config(back.evaluations[i].config, rs.evaluations[i].config);
  }
  EXPECT_EQ(back.param_values, rs.param_values);
}

TEST(KernelTuner, KeepsKtuneOnlyStatuses) {
  ResultSet rs;
  rs.device_name = "A100";
  rs.kernel_name = "k";
  rs.param_names = {"bx"};
  rs.param_types = {ValueType::Int};
  Evaluation hung;
  hung.config = {Value(32)};
  hung.status = Status::Timeout;
  hung.reason = "kernel exceeded 1000 ms";
  Evaluation wrong;
  wrong.config = {Value(64)};
  wrong.status = Status::WrongResult;
  rs.evaluations = {hung, wrong};
  ResultSet back = parse_kernel_tuner(format_kernel_tuner(rs), "x");
  EXPECT_EQ(back.evaluations[0].status, Status::Timeout);
  EXPECT_EQ(back.evaluations[0].reason, "kernel exceeded 1000 ms");
  EXPECT_EQ(back.evaluations[1].status, Status::WrongResult);
}

TEST(T4, ReadsKernelTunerCompilationField) {
  ResultSet rs = read_t4(data("t4/kt_compilation.json"));
  EXPECT_EQ(rs.format, "t4");
  EXPECT_EQ(rs.param_names, (std::vector<std::string>{"block_size_x", "tile", "alg", "unroll", "factor"}));
  EXPECT_EQ(rs.param_types[3], ValueType::Bool);
  EXPECT_EQ(rs.param_types[4], ValueType::Float);
  ASSERT_EQ(rs.evaluations.size(), 3u);
  const Evaluation& e = rs.evaluations[0];
  EXPECT_EQ(config_key(e.config), "128,2,alg_2,True,2.45");
  EXPECT_DOUBLE_EQ(*e.compile_ms, 301.5);
  EXPECT_DOUBLE_EQ(*e.framework_ms, 1.25);
  EXPECT_DOUBLE_EQ(*e.strategy_ms, 0.031);
  EXPECT_DOUBLE_EQ(*e.verify_ms, 12.0);
  EXPECT_DOUBLE_EQ(*e.time_ms, 0.91);
  EXPECT_DOUBLE_EQ(*e.min_ms, 0.9);
  EXPECT_EQ(*e.registers, 28);
  EXPECT_DOUBLE_EQ(e.metrics.at("GB/s"), 812.4);
  EXPECT_EQ(rs.evaluations[1].status, Status::Invalid);
  EXPECT_EQ(rs.evaluations[2].status, Status::CompileError);
  EXPECT_TRUE(rs.device_name.empty());
}

TEST(T4, MapsEveryInvalidity) {
  ResultSet rs = read_t4(data("t4/all_statuses.json"));
  EXPECT_EQ(rs.device_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(rs.problem_size, (ProblemSize{4096, 4096, 4096}));
  std::vector<Status> want = {Status::Ok,      Status::CompileError, Status::RuntimeError,
                              Status::Invalid, Status::Timeout,      Status::WrongResult};
  ASSERT_EQ(rs.evaluations.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(rs.evaluations[i].status, want[i]) << i;
  EXPECT_DOUBLE_EQ(*rs.evaluations[0].compile_ms, 410.0);

  // And back: each status is written with its own invalidity.
  ResultSet back = parse_t4(format_t4(rs), "x");
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(back.evaluations[i].status, want[i]) << i;
  EXPECT_NE(format_t4(rs).find("\"compilation_time\""), std::string::npos);
  EXPECT_EQ(format_t4(rs).find("\"compilation\""), std::string::npos);
}

TEST(T4, ConvertsTimeUnits) {
  ResultSet rs = parse_t4(
      "{\"schema_version\": \"1.0.0\", \"metadata\": {\"timeunit\": \"seconds\"}, \"results\": ["
      "{\"configuration\": {\"bx\": 32}, \"times\": {\"compilation_time\": 0.25, \"runtimes\": [0.002]},"
      " \"invalidity\": \"correct\", \"correctness\": 1, \"measurements\": [{\"name\": \"time\", \"value\": 0.002}]}]}",
      "s.json");
  EXPECT_DOUBLE_EQ(*rs.evaluations[0].compile_ms, 250.0);
  EXPECT_DOUBLE_EQ(*rs.evaluations[0].time_ms, 2.0);
  EXPECT_THROW(parse_t4("{\"results\": [{\"configuration\": {}, \"times\": {}, \"invalidity\": \"weird\"}]}", "w"),
               Error);
}

// The shape of the T4 files Kernel Tuner writes (file_utils.store_output_file,
// and the benchmark hub's recordings made with it): one line, the results list
// first and "schema_version" after it (far past the first 4 KB), "miliseconds"
// as it spelled the unit, measurement units left empty, and a failed
// configuration's time given as the failure's name.
TEST(T4, ReadsKernelTunersOwnLayout) {
  std::string text = "{\"results\": [";
  for (int i = 0; i < 60; ++i) {
    const bool failed = i % 7 == 3;
    text += std::string(i ? ", " : "") + "{\"timestamp\": \"2023-12-22 09:54:05.502007+00:00\", \"configuration\": " +
            "{\"block_size_x\": " + std::to_string(16 * (i + 1)) + ", \"use_shmem\": " + std::to_string(i % 2) +
            "}, \"times\": {\"compilation\": 918.6, \"framework\": 105.2, \"search_algorithm\": 0, " +
            "\"validation\": 0" + (failed ? "" : ", \"runtimes\": [3.97, 3.87, 3.88]") + "}, \"invalidity\": \"" +
            (failed ? "runtime" : "correct") + "\", \"correctness\": " + (failed ? "0" : "1") +
            ", \"measurements\": [{\"name\": \"time\", \"value\": " +
            (failed ? std::string("\"RuntimeFailedConfig\"") : std::to_string(3.0 + i)) +
            ", \"unit\": \"\"}], \"objectives\": [\"time\"]}";
  }
  text += "], \"schema_version\": \"1.0.0\", \"metadata\": {\"timeunit\": \"miliseconds\"}}";
  ASSERT_GT(text.find("\"schema_version\""), 4096u);
  TempDir dir;
  const std::string path = dir.file("kt_t4.json");
  std::ofstream(path) << text;
  ResultSet rs = read_results_file(path);
  EXPECT_EQ(rs.format, "t4");
  EXPECT_EQ(rs.param_names, (std::vector<std::string>{"block_size_x", "use_shmem"}));
  ASSERT_EQ(rs.evaluations.size(), 60u);
  EXPECT_EQ(rs.evaluations[3].status, Status::RuntimeError);
  EXPECT_EQ(rs.evaluations[3].reason, "RuntimeFailedConfig");
  EXPECT_FALSE(rs.evaluations[3].time_ms);
  EXPECT_EQ(rs.evaluations[4].status, Status::Ok);
  EXPECT_DOUBLE_EQ(*rs.evaluations[4].time_ms, 7.0);  // milliseconds, as "miliseconds" says
  EXPECT_DOUBLE_EQ(*rs.evaluations[4].compile_ms, 918.6);
  EXPECT_EQ(rs.evaluations[4].samples.size(), 3u);

  // Strict where it would be a wrong answer: a result that ran needs a number.
  const std::string ran_without_time =
      "{\"results\": [{\"configuration\": {\"bx\": 32}, \"times\": {}, \"invalidity\": \"correct\","
      " \"measurements\": [{\"name\": \"time\", \"value\": \"RuntimeFailedConfig\"}]}], \"schema_version\": \"1.0.0\"}";
  EXPECT_THROW(parse_t4(ran_without_time, "r.json"), Error);
  // And a unit nobody wrote is still refused.
  EXPECT_THROW(parse_t4("{\"schema_version\": \"1.0.0\", \"metadata\": {\"timeunit\": \"minutes\"}, \"results\": []}",
                        "m.json"),
               Error);
}

TEST(Import, RecordsARunAndSkipsDuplicates) {
  TempDir dir;
  Store store(dir.file("k.db"));
  ImportSummary s = import_file(store, data("kt/rtx3090_vector_add.json"));
  EXPECT_EQ(s.format, "kernel-tuner");
  EXPECT_EQ(s.inserted, 6u);
  EXPECT_EQ(s.device, "NVIDIA GeForce RTX 3090");
  auto best = store.best({.kernel = "vector_add"});
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].config_key, "256,2,alg_2,False,2.45");
  EXPECT_EQ(best[0].problem_size, ProblemSize{10000000});
  EXPECT_EQ(store.results({.status = Status::CompileError}).size(), 1u);
  auto kernels = store.kernels();
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].info.param_types[2], ValueType::String);

  ImportSummary again = import_file(store, data("kt/rtx3090_vector_add.json"));
  EXPECT_EQ(again.inserted, 0u);
  EXPECT_EQ(again.duplicates, 6u);
  EXPECT_EQ(store.results({}).size(), 6u);

  ImportSummary other = import_file(store, data("kt/rtx3090_vector_add.json"), {.device = "NVIDIA A100"});
  EXPECT_EQ(other.inserted, 6u);
  EXPECT_EQ(store.best({}).size(), 2u);
  EXPECT_EQ(store.results({.run_id = s.run_id}).size(), 6u);
  // The compute capabilities come from the device names.
  EXPECT_EQ(store.best({.compute_capability = 86}).size(), 1u);
  EXPECT_EQ(store.best({.compute_capability = 80}).size(), 1u);

  // T4 without a device needs one; with it, the kernel name is required too.
  EXPECT_THROW(import_file(store, data("t4/kt_compilation.json")), Error);
  EXPECT_THROW(import_file(store, data("t4/kt_compilation.json"), {.device = "A100"}), Error);
  EXPECT_EQ(import_file(store, data("t4/kt_compilation.json"), {.device = "A100", .kernel = "vadd"}).inserted, 3u);
  EXPECT_THROW(import_file(store, data("kernels/vector_add.cu")), Error);
}

TEST(Import, ExportImportGivesSameRecords) {
  TempDir dir;
  for (ExportFormat fmt : {ExportFormat::KernelTuner, ExportFormat::T4}) {
    for (const char* src : {"kt/rtx3090_vector_add.json", "kt/legacy.json", "t4/all_statuses.json"}) {
      SCOPED_TRACE(std::string(src) + (fmt == ExportFormat::T4 ? " via t4" : " via kernel-tuner"));
      std::string tag = std::to_string(static_cast<int>(fmt)) + fs::path(src).stem().string();
      Store a(dir.file(tag + "a.db"));
      import_file(a, data(src), {.device = "GPU", .kernel = "k"});
      std::string out = dir.file(tag + "export.json");
      export_file(a, {.kernel = "k"}, fmt, out);
      Store b(dir.file(tag + "b.db"));
      import_file(b, out);  // device and kernel now come from the file
      std::string out2 = dir.file(tag + "export2.json");
      export_file(b, {}, fmt, out2);
      Store c(dir.file(tag + "c.db"));
      import_file(c, out2);

      auto rb = b.results({.sort = Filter::Sort::Id});
      auto rc = c.results({.sort = Filter::Sort::Id});
      ASSERT_EQ(rb.size(), rc.size());
      ASSERT_EQ(rb.size(), a.results({}).size());
      for (size_t i = 0; i < rb.size(); ++i) {
        EXPECT_EQ(rb[i].eval, rc[i].eval) << i;
        expect_same_config(rb[i].eval.config, rc[i].eval.config);
        EXPECT_EQ(rb[i].config_key, rc[i].config_key);
        EXPECT_EQ(rb[i].problem_size, rc[i].problem_size);
      }
      EXPECT_EQ(b.kernels()[0].info, c.kernels()[0].info);
      if (fmt == ExportFormat::KernelTuner) {  // lossless from the first import on
        auto ra = a.results({.sort = Filter::Sort::Id});
        for (size_t i = 0; i < ra.size(); ++i) EXPECT_EQ(ra[i].eval, rb[i].eval) << i;
      }
    }
  }
}

TEST(Export, RefusesSeveralSeries) {
  TempDir dir;
  Store store(dir.file("k.db"));
  import_file(store, data("kt/rtx3090_vector_add.json"));
  import_file(store, data("kt/rtx3090_vector_add.json"), {.device = "NVIDIA A100"});
  try {
    export_file(store, {}, ExportFormat::KernelTuner, dir.file("x.json"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NVIDIA A100"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.file("x.json")));
  EXPECT_EQ(export_file(store, {.device = "NVIDIA A100"}, ExportFormat::KernelTuner, dir.file("x.json")), 6u);
  EXPECT_THROW(export_file(store, {.kernel = "nope"}, ExportFormat::T4, dir.file("y.json")), Error);
}

// Kernel Tuner and T4 files carry no compute capability: a known device name
// supplies it, so imported results join the architecture fallback.
TEST(DeviceNames, KnownGpusHaveTheirComputeCapability) {
  using ktune::db::known_compute_capability;
  EXPECT_EQ(known_compute_capability("NVIDIA H100 80GB HBM3"), 90);
  EXPECT_EQ(known_compute_capability("NVIDIA H200"), 90);
  EXPECT_EQ(known_compute_capability("NVIDIA GH200 480GB"), 90);
  EXPECT_EQ(known_compute_capability("NVIDIA A100-SXM4-80GB"), 80);
  EXPECT_EQ(known_compute_capability("NVIDIA A100-PCIE-40GB"), 80);
  EXPECT_EQ(known_compute_capability("NVIDIA A10G"), 86);
  EXPECT_EQ(known_compute_capability("NVIDIA RTX A6000"), 86);
  EXPECT_EQ(known_compute_capability("NVIDIA GeForce RTX 4090"), 89);
  EXPECT_EQ(known_compute_capability("NVIDIA RTX 6000 Ada Generation"), 89);
  EXPECT_EQ(known_compute_capability("NVIDIA L40S"), 89);
  EXPECT_EQ(known_compute_capability("NVIDIA GeForce RTX 3090"), 86);
  EXPECT_EQ(known_compute_capability("Tesla V100-SXM2-32GB"), 70);
  EXPECT_EQ(known_compute_capability("Tesla T4"), 75);
  EXPECT_EQ(known_compute_capability("NVIDIA GeForce GTX 1080 Ti"), 61);
  EXPECT_EQ(known_compute_capability("NVIDIA B200"), 100);
  EXPECT_EQ(known_compute_capability("AMD Instinct MI250X"), 0);
  EXPECT_EQ(known_compute_capability("my-gpu"), 0);
}

namespace {

void gzip_to(const std::string& path, const std::string& text, size_t keep = std::string::npos) {
  const std::string full = path + ".full";
  gzFile f = gzopen(full.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  std::ifstream in(full, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(path, std::ios::binary) << bytes.substr(0, std::min(keep, bytes.size()));
}

std::string text_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

}  // namespace

// Caches are published gzipped (A100.json.gz): read as they are, under any
// name, and a copy cut short reads as the interrupted run it then is.
TEST(KernelTuner, ReadsGzippedCachesWholeAndCutShort) {
  TempDir dir;
  const std::string plain = text_of(data("kt/rtx3090_vector_add.json"));
  gzip_to(dir.file("cache.json.gz"), plain);
  const ResultSet whole = read_results_file(dir.file("cache.json.gz"));
  EXPECT_EQ(whole.evaluations.size(), read_results_file(data("kt/rtx3090_vector_add.json")).evaluations.size());
  EXPECT_FALSE(whole.truncated);
  gzip_to(dir.file("renamed.json"), plain);  // the magic bytes decide, not the name
  EXPECT_EQ(read_results_file(dir.file("renamed.json")).evaluations.size(), whole.evaluations.size());

  // A streamed (unterminated) cache, gzipped and then cut inside the stream.
  std::string streamed = plain.substr(0, plain.rfind("}\n}"));
  std::string big = streamed;
  big.resize(big.find("\"cache\""));
  big += "\"cache\": {";
  for (int i = 0; i < 2000; ++i)
    big += std::string(i ? "," : "") + "\n\"" + std::to_string(32 + i) + ",1,alg_1,True,1.5\": {\"block_size_x\": " +
           std::to_string(32 + i) + ", \"time\": " + std::to_string(1.0 + i * 0.001) + ", \"times\": [1.0]}";
  gzip_to(dir.file("cut.json.gz"), big, 6000);
  Store store(dir.file("k.db"));
  try {
    const ImportSummary s = import_file(store, dir.file("cut.json.gz"));
    EXPECT_TRUE(s.truncated);
    EXPECT_GT(s.inserted, 0u);
    EXPECT_LT(s.inserted, 2000u);
  } catch (const Error& e) {
    ADD_FAILURE() << e.what();
  }
  std::ofstream(dir.file("bad.json.gz"), std::ios::binary) << std::string("\x1f\x8b\x08\x00garbage-not-deflate", 24);
  EXPECT_THROW(read_results_file(dir.file("bad.json.gz")), Error);
}

// A record without a timestamp was measured at a time nobody knows: it is
// stored without one, not with the import's date.
TEST(Import, ARecordWithoutATimestampKeepsNone) {
  TempDir dir;
  std::ofstream(dir.file("c.json")) << kt_header("\"problem_size\": 1024,", "");
  Store store(dir.file("k.db"));
  import_file(store, dir.file("c.json"));
  const auto rows = store.results({});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].eval.timestamp, "");
}

// A KTT 2.x output file (a recording of our own making, shaped as KTT writes
// one): Metadata with the device and time unit, one result per
// configuration with its parameters as {Name, Value, ValueType}, its status
// and its total duration; KTT's OpenCL names for the compiler's memories.
TEST(Ktt, ReadsAnOutputFileAsKttWritesIt) {
  const std::string text = R"json({
  "Metadata": {"ComputeApi": "CUDA", "Device": "NVIDIA H100 80GB HBM3", "GlobalSizeType": "CUDA",
               "KttVersion": "2.1.0", "Platform": "NVIDIA CUDA", "TimeUnit": "Microseconds"},
  "Results": [
    {"ComputationResults": [{"CompilationData": {"ConstantMemorySize": 0, "LocalMemorySize": 2048,
       "MaxWorkGroupSize": 1024, "PrivateMemorySize": 8, "RegistersCount": 40}, "Duration": 1250.5,
       "GlobalSize": {"X": 4096, "Y": 1, "Z": 1}, "KernelFunction": "scale", "LocalSize": {"X": 128, "Y": 1, "Z": 1},
       "Overhead": 900.0}],
     "Configuration": [{"Name": "BLOCK", "Value": 128, "ValueType": "UnsignedInt"},
                       {"Name": "UNROLL", "Value": 2, "ValueType": "UnsignedInt"},
                       {"Name": "N", "Value": 4096, "ValueType": "UnsignedInt"}],
     "KernelName": "scale", "Status": "Ok", "TotalDuration": 1250.5},
    {"ComputationResults": [],
     "Configuration": [{"Name": "BLOCK", "Value": 1024, "ValueType": "UnsignedInt"},
                       {"Name": "UNROLL", "Value": 4, "ValueType": "UnsignedInt"},
                       {"Name": "N", "Value": 4096, "ValueType": "UnsignedInt"}],
     "KernelName": "scale", "Status": "ComputationFailed", "TotalDuration": 0.0},
    {"ComputationResults": [],
     "Configuration": [{"Name": "BLOCK", "Value": 64, "ValueType": "UnsignedInt"},
                       {"Name": "UNROLL", "Value": 8, "ValueType": "UnsignedInt"},
                       {"Name": "N", "Value": 4096, "ValueType": "UnsignedInt"}],
     "KernelName": "scale", "Status": "CompilationFailed", "TotalDuration": 0.0}
  ]
})json";
  TempDir dir;
  std::ofstream(dir.file("out.json")) << text;
  const ResultSet rs = read_results_file(dir.file("out.json"));
  EXPECT_EQ(rs.format, "ktt");
  EXPECT_EQ(rs.device_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(rs.kernel_name, "scale");
  EXPECT_EQ(rs.param_names, (std::vector<std::string>{"BLOCK", "UNROLL", "N"}));
  ASSERT_EQ(rs.evaluations.size(), 3u);
  const Evaluation& ok = rs.evaluations[0];
  EXPECT_EQ(ok.status, Status::Ok);
  EXPECT_DOUBLE_EQ(*ok.time_ms, 1.2505);  // microseconds
  EXPECT_EQ(*ok.registers, 40);
  EXPECT_EQ(*ok.shared_bytes, 2048);  // OpenCL's local memory
  EXPECT_EQ(*ok.local_bytes, 8);      // OpenCL's private memory
  EXPECT_EQ(rs.evaluations[1].status, Status::RuntimeError);
  EXPECT_FALSE(rs.evaluations[1].time_ms);
  EXPECT_EQ(rs.evaluations[2].status, Status::CompileError);

  // Imported, it is one series of its device.
  Store store(dir.file("k.db"));
  import_file(store, dir.file("out.json"));
  EXPECT_EQ(store.results({}).size(), 3u);

  // Where a mistake would be a wrong answer: an unknown time unit or status,
  // an Ok result without its duration; each at its line.
  auto refused = [&](const std::string& from, const std::string& to) {
    std::string bad = text;
    bad.replace(bad.find(from), from.size(), to);
    return ktune::testing::error_of([&] { parse_ktt(bad, "bad.json"); });
  };
  const Error unit = refused("\"Microseconds\"", "\"Ticks\"");
  EXPECT_EQ(unit.where().line, 3) << unit.what();
  EXPECT_NE(unit.message().find("Ticks"), std::string::npos);
  const Error status = refused("\"ComputationFailed\"", "\"Lost\"");
  EXPECT_NE(status.message().find("unknown Status \"Lost\""), std::string::npos) << status.what();
  EXPECT_GT(status.where().line, 10);
  const Error no_time = refused("\"Status\": \"Ok\", \"TotalDuration\": 1250.5", "\"Status\": \"Ok\"");
  EXPECT_NE(no_time.message().find("Results[0] is Ok but has no TotalDuration"), std::string::npos) << no_time.what();
}
