// NVRTC compile cost, what the cubin cache saves, and how compilation scales
// over worker threads versus worker processes.
//
//   build/bench/compile_bench [--benchmark_filter=...]
//
// BM_Pool/<workers>/<compiles>/<processes>: compiles/s of the tuner's own
// CompilePool (tuner/compile/pool.h) over that many distinct configurations,
// with worker processes (1) or in-process threads (0), after the workers have
// started and compiled once (what a long run sees). items_per_second is the
// figure; e.g. --benchmark_filter='BM_Pool/16/'.
//
// Cold compiles bypass both ktune's cache and NVRTC's use of the driver's
// compute cache (--no-cache, always passed), and every compile in the scaling
// benchmarks gets a distinct -D value, so nothing is reused.
#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "tuner/compile/pool.h"
#include "tuner/gpu/worker.h"
#include "tuner/compile/compiler.h"


namespace {

using namespace ktune;

std::filesystem::path kernels_dir() {
  // Beside this source file; else relative to the repository root or a build folder in it.
  std::filesystem::path here = std::filesystem::path(__FILE__).parent_path().parent_path();
  for (std::filesystem::path p : {here / "tests/data/kernels", std::filesystem::path("tests/data/kernels"),
                                  std::filesystem::path("../tests/data/kernels"),
                                  std::filesystem::path("../../tests/data/kernels")}) {
    if (std::filesystem::exists(p / "vector_add.cu")) return p;
  }
  std::fprintf(stderr, "compile_bench: cannot find tests/data/kernels; run it from the repository\n");
  std::exit(2);
}

CompileRequest small_kernel(int salt) {
  CompileRequest r;
  r.source_path = kernels_dir() / "vector_add.cu";
  r.kernel_name = "vector_add";
  r.defines = {{"ELEMS_PER_THREAD", "4"}, {"KTUNE_BENCH_SALT", std::to_string(salt)}};
  return r;
}

Compiler uncached() {
  CompilerOptions o;
  o.use_cache = false;
  return Compiler(o);
}

std::atomic<int> g_salt{0};

void BM_ColdCompile(benchmark::State& state) {
  Compiler c = uncached();
  for (auto _ : state) {
    CompileResult r = c.compile(small_kernel(g_salt++));
    if (!r.ok) state.SkipWithError(r.log.c_str());
  }
}
BENCHMARK(BM_ColdCompile)->Unit(benchmark::kMillisecond)->Iterations(8);

void BM_CachedCompile(benchmark::State& state) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("ktune-bench-" + std::to_string(getpid()));
  CompilerOptions o;
  o.cache_dir = dir;
  Compiler c(o);
  CompileRequest r = small_kernel(-1);
  r.block_threads = 256;
  c.compile(r);
  for (auto _ : state) {
    CompileResult hit = c.compile(r);
    if (!hit.cache_hit) state.SkipWithError("expected a cache hit");
    benchmark::DoNotOptimize(hit.cubin.data());
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_CachedCompile)->Unit(benchmark::kMicrosecond);

void BM_CacheKey(benchmark::State& state) {
  CompileRequest r = small_kernel(0);
  std::string source = "#include \"vector_add_helpers.cuh\"\n" + std::string(4000, ' ');
  for (auto _ : state) benchmark::DoNotOptimize(compile_cache_key(r, source));
}
BENCHMARK(BM_CacheKey)->Unit(benchmark::kMicrosecond);

void BM_ReadResources(benchmark::State& state) {
  CompileResult r = uncached().compile(small_kernel(-2));
  for (auto _ : state) benchmark::DoNotOptimize(read_kernel_resources(r.cubin, r.lowered_name));
}
BENCHMARK(BM_ReadResources)->Unit(benchmark::kMicrosecond);

constexpr int kCompilesPerWorker = 2;

// N threads of one process, each compiling its own kernels.
void BM_ParallelThreads(benchmark::State& state) {
  int workers = static_cast<int>(state.range(0));
  Compiler c = uncached();
  for (auto _ : state) {
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; ++w) {
      threads.emplace_back([&] {
        for (int i = 0; i < kCompilesPerWorker; ++i) c.compile(small_kernel(g_salt++));
      });
    }
    for (auto& t : threads) t.join();
  }
  state.SetItemsProcessed(state.iterations() * workers * kCompilesPerWorker);
}
BENCHMARK(BM_ParallelThreads)->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);

// N forked processes, each compiling its own kernels.
void BM_ParallelProcesses(benchmark::State& state) {
  int workers = static_cast<int>(state.range(0));
  for (auto _ : state) {
    std::vector<pid_t> children;
    for (int w = 0; w < workers; ++w) {
      int base = g_salt.fetch_add(kCompilesPerWorker);
      pid_t pid = fork();
      if (pid == 0) {
        Compiler c = uncached();
        bool ok = true;
        for (int i = 0; i < kCompilesPerWorker; ++i) ok = c.compile(small_kernel(base + i)).ok && ok;
        _exit(ok ? 0 : 1);
      }
      children.push_back(pid);
    }
    for (pid_t pid : children) {
      int status = 0;
      waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) state.SkipWithError("a compile worker failed");
    }
  }
  state.SetItemsProcessed(state.iterations() * workers * kCompilesPerWorker);
}
BENCHMARK(BM_ParallelProcesses)->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);

// The compile pool, processes vs threads: distinct cold compiles, all
// submitted at once (a tuning batch), results taken in order.
void BM_Pool(benchmark::State& state) {
  const auto workers = static_cast<unsigned>(state.range(0));
  const auto compiles = static_cast<int>(state.range(1));
  CompilePoolOptions o;
  o.workers = workers;
  o.compiler.use_cache = false;
  o.in_process = state.range(2) == 0;
  CompilePool pool(o);
  // Start-up outside the timing: children exec and NVRTC loads once per worker.
  std::vector<CompileRequest> warm;
  for (unsigned w = 0; w < workers; ++w) warm.push_back(small_kernel(g_salt++));
  pool.compile(warm);
  if (!o.in_process && pool.in_process()) state.SkipWithError("no compile worker process could start");
  for (auto _ : state) {
    std::vector<CompileRequest> batch;
    for (int i = 0; i < compiles; ++i) batch.push_back(small_kernel(g_salt++));
    for (const CompileResult& r : pool.compile(batch))
      if (!r.ok) state.SkipWithError(r.log.c_str());
  }
  state.SetItemsProcessed(state.iterations() * compiles);
  state.counters["workers"] = workers;
}
BENCHMARK(BM_Pool)
    ->ArgNames({"workers", "compiles", "processes"})
    ->ArgsProduct({{1, 2, 4, 8, 16}, {64}, {1, 0}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

// A cache hit through the pool: answered in this process, no child involved;
// the pool's share of the warm per-configuration overhead.
void BM_PoolCacheHit(benchmark::State& state) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("ktune-bench-pool-" + std::to_string(getpid()));
  CompilePoolOptions o;
  o.workers = 2;
  o.compiler.cache_dir = dir;
  CompilePool pool(o);
  CompileRequest r = small_kernel(-3);
  r.block_threads = 256;
  pool.take(pool.submit(r));
  for (auto _ : state) {
    CompileResult hit = pool.take(pool.submit(r));
    if (!hit.cache_hit) state.SkipWithError("expected a cache hit");
    benchmark::DoNotOptimize(hit.cubin.data());
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_PoolCacheHit)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  ktune::enter_worker_if_requested();  // the compile pool's children are this program
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
