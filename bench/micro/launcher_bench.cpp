// ktune::Launcher against a raw cuLaunchKernel of the same cubin (targets: at
// most 1 µs more per launch after warm-up; a cold start with a warm cubin cache
// within 5 ms). Needs a GPU; without a driver every benchmark
// reports "no CUDA driver" and the program exits 0.
//
//   build/bench/launcher_bench [--benchmark_filter=...]
//
// Launch cost is CPU time spent in the launch call: batches of kLaunches
// launches (a tiny vector_add, n = 1024) are timed by hand, then the stream is
// drained outside the timed region, so a full launch queue never stalls the
// CPU inside a measurement.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>

#include "db/export/deploy.h"
#include "db/interchange/interchange.h"
#include "db/store.h"
#include "ktune/launcher.h"
#include "tuner/build/build.h"
#include "tuner/build/config_text.h"
#include "tuner/compile/compiler.h"
#include "tuner/gpu/driver.h"
#include "tuner/spec/spec.h"

namespace {

using namespace ktune;
using namespace ktune::gpu;
using Clock = std::chrono::steady_clock;

constexpr int kLaunches = 256;
constexpr int kN = 1024;
// The path in the source tree this was built from, else the same path
// relative to the working directory (a GPU host runs a copy of the tree from
// its root).
std::string in_tree(const std::string& built, const std::string& relative) {
  return std::filesystem::exists(built) ? built : relative;
}

const std::string kSpec =
    in_tree(std::string(KTUNE_TEMPLATES_DIR) + "/vector_add/vector_add.yaml", "templates/vector_add/vector_add.yaml");
const std::string kResults =
    in_tree(std::string(KTUNE_EXAMPLES_DIR) + "/data/vector_add_h100.json", "examples/data/vector_add_h100.json");

// One context, buffers and a warm cubin cache for all benchmarks.
struct Gpu {
  const CudaApi* api = nullptr;
  std::unique_ptr<PrimaryContext> context;
  std::unique_ptr<DeviceMemory> a, b, c;
  std::string cache_dir;
  std::string error;

  static Gpu& get() {
    static Gpu g;
    return g;
  }

 private:
  Gpu() {
    const DriverLoad& d = cuda_driver();
    if (!d.ready()) {
      error = "no CUDA driver: " + d.message;
      return;
    }
    api = d.api;
    context = std::make_unique<PrimaryContext>(*api, 0);
    a = std::make_unique<DeviceMemory>(*api, kN * 4);
    b = std::make_unique<DeviceMemory>(*api, kN * 4);
    c = std::make_unique<DeviceMemory>(*api, kN * 4);
    cache_dir = (std::filesystem::temp_directory_path() / ("ktune_launcher_bench_" + std::to_string(getpid()))).string();
  }
};

LauncherOptions options(const Gpu& g) {
  LauncherOptions o;
  o.spec = kSpec;
  o.results = kResults;
  o.cache_dir = g.cache_dir;
  o.report = nullptr;
  return o;
}

void drain(const Gpu& g) { check(*g.api, g.api->cuCtxSynchronize(), "cuCtxSynchronize"); }

void BM_RawLaunch(benchmark::State& state) {
  Gpu& g = Gpu::get();
  if (!g.api) return state.SkipWithError(g.error.c_str());
  // The launcher's own choice, compiled and loaded by hand.
  Launcher l(options(g));
  const Choice choice = l.prepare({{"n", kN}});
  std::string text;
  for (const auto& [name, v] : choice.config) text += (text.empty() ? "" : ",") + name + "=" + v;
  const Spec spec = load_spec(kSpec, {{"n", Value(kN)}});
  const std::vector<Value> config = parse_config_option(spec, text);
  CompilerOptions co;
  co.cache_dir = g.cache_dir;
  const CompileResult r = build_one(spec, config, Arch(choice.compute_capability), Compiler(co)).compile;
  Module module(*g.api, std::vector<std::uint8_t>(r.cubin.begin(), r.cubin.end()));
  CUfunction f = module.function(r.lowered_name);
  CUdeviceptr c = g.c->ptr(), a = g.a->ptr(), b = g.b->ptr();
  int n = kN;
  void* args[] = {&c, &a, &b, &n};
  double total_s = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    for (int i = 0; i < kLaunches; ++i)
      g.api->cuLaunchKernel(f, choice.grid[0], choice.grid[1], choice.grid[2], choice.block[0], choice.block[1],
                            choice.block[2], choice.shared_memory, nullptr, args, nullptr);
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    state.SetIterationTime(dt);
    total_s += dt;
    drain(g);
  }
  state.counters["us_per_launch"] = total_s * 1e6 / (double(state.iterations()) * kLaunches);
}

void BM_LauncherLaunch(benchmark::State& state) {
  Gpu& g = Gpu::get();
  if (!g.api) return state.SkipWithError(g.error.c_str());
  Launcher l(options(g));
  l.prepare({{"n", kN}});
  const Problem problem{{"n", kN}};
  CUdeviceptr c = g.c->ptr(), a = g.a->ptr(), b = g.b->ptr();
  double total_s = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    for (int i = 0; i < kLaunches; ++i) l(problem, nullptr, c, a, b, kN);
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    state.SetIterationTime(dt);
    total_s += dt;
    drain(g);
  }
  state.counters["us_per_launch"] = total_s * 1e6 / (double(state.iterations()) * kLaunches);
}

// From nothing to the first launch finished: read the spec and the results,
// select, find the cubin in the (warm) cache, load the module, launch, sync.
void BM_ColdStartWarmCache(benchmark::State& state) {
  Gpu& g = Gpu::get();
  if (!g.api) return state.SkipWithError(g.error.c_str());
  // Arg 1: the deployment format, the JSON export of the same results;
  // arg 0: the Kernel Tuner cache itself (imported into a scratch store).
  std::string results = kResults;
  if (state.range(0)) {
    results = g.cache_dir + "/tuned.json";
    std::filesystem::create_directories(g.cache_dir);
    db::Store store(g.cache_dir + "/tuned.db");
    db::import_file(store, kResults);
    std::ofstream(results) << db::deploy_json(db::collect_deploy(store, {}));
  }
  {
    Launcher warm(options(g));
    warm.prepare({{"n", kN}});  // the cubin cache is warm from here
  }
  CUdeviceptr c = g.c->ptr(), a = g.a->ptr(), b = g.b->ptr();
  for (auto _ : state) {
    LauncherOptions o = options(g);
    o.results = results;
    const auto t0 = Clock::now();
    Launcher l(o);
    l({{"n", kN}}, nullptr, c, a, b, kN);
    drain(g);
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - t0).count());
  }
}

}  // namespace

BENCHMARK(BM_RawLaunch)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LauncherLaunch)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ColdStartWarmCache)->Arg(0)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
