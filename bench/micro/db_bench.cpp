// Results-store throughput: inserting as a tuning run does (one commit per
// evaluation) and batched, `best` on a million evaluations, and importing a
// 4 MB Kernel Tuner cache. Targets: 100k inserts < 2 s, best < 50 ms,
// 4 MB import < 1 s.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "db/export/deploy.h"
#include "db/interchange/interchange.h"
#include "db/interchange/kerneltuner.h"
#include "db/store.h"

namespace fs = std::filesystem;
using namespace ktune;
using namespace ktune::db;

namespace {

std::string bench_dir() {
  static std::string dir = [] {
    std::string d = fs::temp_directory_path().string() + "/ktune_db_bench_" + std::to_string(getpid());
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

void remove_db(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
}

KernelInfo bench_kernel(int i) {
  return {"kernel_" + std::to_string(i), "src", "spec_" + std::to_string(i),
          {"block_size_x", "block_size_y", "tile", "alg", "unroll"},
          {ValueType::Int, ValueType::Int, ValueType::Int, ValueType::String, ValueType::Bool}};
}

// A realistic row: config, 7 samples with statistics, metrics, resources.
Evaluation bench_eval(std::mt19937_64& rng, int64_t i) {
  std::uniform_real_distribution<double> u(0.5, 5.0);
  Evaluation e;
  e.config = {Value(int64_t{32} << (i % 6)), Value(int64_t{1} << (i / 6 % 5)), Value(i / 30 % 64 + 1),
              Value((i % 3) ? "alg_2" : "alg_1"), Value(i % 2 == 0)};
  e.status = i % 10 == 9 ? Status::CompileError : Status::Ok;
  if (e.status == Status::Ok) {
    for (int s = 0; s < 7; ++s) e.samples.push_back(u(rng));
    e.time_ms = e.samples[3];
    e.complete_stats();
    e.metrics = {{"GB/s", 900.0 / *e.time_ms}, {"GFLOP/s", 12.5}};
  } else {
    e.reason = "ptxas: too many resources requested for launch";
  }
  e.registers = 32 + i % 64;
  e.shared_bytes = 4096;
  e.local_bytes = 0;
  e.occupancy = 0.5;
  e.compile_ms = 250.0;
  e.benchmark_ms = 4.0;
  e.timestamp = "2024-05-01T12:00:00.000Z";
  return e;
}

struct Series {
  SeriesIds ids;
  int64_t run;
};

Series open_series(Store& s, int kernel, int device, int64_t psize) {
  Series out;
  out.ids.kernel_id = s.upsert_kernel(bench_kernel(kernel));
  out.ids.device_id = s.upsert_device({.name = "GPU " + std::to_string(device), .cc_major = 9});
  out.ids.psize_id = s.upsert_problem_size({psize, psize});
  out.run = s.begin_run({.strategy = "bench"});
  return out;
}

void BM_Insert100kPerRowCommit(benchmark::State& state) {
  bool sync_full = state.range(0) != 0;
  std::mt19937_64 rng(1);
  std::vector<Evaluation> evals;
  for (int64_t i = 0; i < 100000; ++i) evals.push_back(bench_eval(rng, i));
  for (auto _ : state) {
    std::string path = bench_dir() + "/insert.db";
    remove_db(path);
    Store s(path, {.sync_full = sync_full});
    Series ser = open_series(s, 0, 0, 4096);
    for (const Evaluation& e : evals) s.add_evaluation(ser.run, ser.ids, e);  // one commit each
  }
  state.SetItemsProcessed(state.iterations() * 100000);
}
BENCHMARK(BM_Insert100kPerRowCommit)->Arg(0)->ArgName("sync_full")->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_Insert100kOneTransaction(benchmark::State& state) {
  std::mt19937_64 rng(1);
  std::vector<Evaluation> evals;
  for (int64_t i = 0; i < 100000; ++i) evals.push_back(bench_eval(rng, i));
  for (auto _ : state) {
    std::string path = bench_dir() + "/insert_tx.db";
    remove_db(path);
    Store s(path);
    Series ser = open_series(s, 0, 0, 4096);
    Store::Transaction tx(s);
    for (const Evaluation& e : evals) s.add_evaluation(ser.run, ser.ids, e);
    tx.commit();
  }
  state.SetItemsProcessed(state.iterations() * 100000);
}
BENCHMARK(BM_Insert100kOneTransaction)->Unit(benchmark::kMillisecond)->Iterations(1);

// 1,000,000 evaluations over 4 kernels x 3 devices x 5 problem sizes.
Store& million() {
  static std::unique_ptr<Store> store = [] {
    std::string path = bench_dir() + "/million.db";
    remove_db(path);
    auto s = std::make_unique<Store>(path);
    std::mt19937_64 rng(7);
    std::vector<Series> series;
    for (int k = 0; k < 4; ++k)
      for (int d = 0; d < 3; ++d)
        for (int p = 0; p < 5; ++p) series.push_back(open_series(*s, k, d, 1024 << p));
    Store::Transaction tx(*s);
    for (int64_t i = 0; i < 1000000; ++i) {
      const Series& ser = series[static_cast<size_t>(i) % series.size()];
      s->add_evaluation(ser.run, ser.ids, bench_eval(rng, i / static_cast<int64_t>(series.size())));
    }
    tx.commit();
    return s;
  }();
  return *store;
}

void BM_BestAllSeries1M(benchmark::State& state) {
  Store& s = million();
  size_t n = 0;
  for (auto _ : state) n = s.best({}).size();
  state.counters["series"] = static_cast<double>(n);
}
BENCHMARK(BM_BestAllSeries1M)->Unit(benchmark::kMillisecond);

void BM_BestOneKernelDevice1M(benchmark::State& state) {
  Store& s = million();
  for (auto _ : state) benchmark::DoNotOptimize(s.best({.kernel = "kernel_2", .device = "GPU 1"}));
}
BENCHMARK(BM_BestOneKernelDevice1M)->Unit(benchmark::kMillisecond);

void BM_ResumeLookup1M(benchmark::State& state) {
  Store& s = million();
  SeriesIds ids{3, 2, 5};
  for (auto _ : state) benchmark::DoNotOptimize(s.find(ids, "128,2,1,alg_2,True"));
}
BENCHMARK(BM_ResumeLookup1M)->Unit(benchmark::kMicrosecond);

// A Kernel Tuner cache of about 4 MB: ~9,000 records with times and observers.
std::string kt_cache_4mb() {
  ResultSet rs;
  rs.device_name = "NVIDIA GeForce RTX 3090";
  rs.kernel_name = "gemm";
  rs.problem_size = {4096, 4096};
  rs.param_names = bench_kernel(0).param_names;
  rs.param_types = bench_kernel(0).param_types;
  std::mt19937_64 rng(3);
  std::string text;
  for (int64_t i = 0; text.size() < 4'000'000; i += 1000) {
    for (int64_t j = i; j < i + 1000; ++j) {
      Evaluation e = bench_eval(rng, j);
      e.config[2] = Value(j);  // unique keys
      e.sm_clock_mhz = 1695;
      e.power_w = 212.5;
      rs.evaluations.push_back(std::move(e));
    }
    text = format_kernel_tuner(rs);
  }
  return text;
}

void BM_ImportKernelTuner4MB(benchmark::State& state) {
  std::string file = bench_dir() + "/cache_4mb.json";
  std::string text = kt_cache_4mb();
  write_text_file(file, text);
  size_t records = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::string path = bench_dir() + "/import.db";
    remove_db(path);
    Store s(path);
    state.ResumeTiming();
    records = import_file(s, file).inserted;
  }
  state.counters["MB"] = static_cast<double>(text.size()) / 1e6;
  state.counters["records"] = static_cast<double>(records);
}
BENCHMARK(BM_ImportKernelTuner4MB)->Unit(benchmark::kMillisecond)->Iterations(3);

// `ktune export --format header` over 1,000 kernels (target < 1 s): each
// kernel measured on 3 devices (two architectures) at 2 problem sizes, 10
// configurations per series, so the export picks 6 winners per kernel out of
// 60,000 rows. Timed: collecting the best rows, writing the header file.
void BM_HeaderExport1000Kernels(benchmark::State& state) {
  const std::string path = bench_dir() + "/export.db";
  remove_db(path);
  {
    Store s(path);
    std::mt19937_64 rng(3);
    Store::Transaction tx(s);
    for (int k = 0; k < 1000; ++k)
      for (int d = 0; d < 3; ++d)
        for (int64_t ps : {1024, 4096}) {
          Series series = open_series(s, k, d, ps);
          for (int64_t i = 0; i < 10; ++i) s.add_evaluation(series.run, series.ids, bench_eval(rng, i));
        }
    tx.commit();
  }
  Store s(path);
  size_t bytes = 0;
  for (auto _ : state) {
    const DeploySummary sum = export_deploy(s, {}, DeployFormat::Header, bench_dir() + "/tuned.h");
    benchmark::DoNotOptimize(sum.entries);
    bytes = fs::file_size(bench_dir() + "/tuned.h");
  }
  state.counters["kernels"] = 1000;
  state.counters["header_MB"] = static_cast<double>(bytes) / 1e6;
}
BENCHMARK(BM_HeaderExport1000Kernels)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  fs::remove_all(bench_dir());
  return 0;
}
