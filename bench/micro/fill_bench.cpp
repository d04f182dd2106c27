// Filling kernel inputs: on the host (fill_host, on every core), the host
// fill plus its upload (what an argument list cost before the device fill),
// and on the device (DeviceFiller, the kernel alone and its start-up from a
// warm cubin cache). The host benchmarks run anywhere; the others need a GPU
// and, without a driver, report "no CUDA driver" (bench/gpu/fill.sh runs them
// on a GPU host and prints the comparison).
//
//   build/bench/fill_bench [--benchmark_filter=...]
//
// Arguments: the ElemType code (2 = float, 3 = double, 0 = half, 8 = uint8)
// and log2 of the buffer's bytes (31 = 2 GiB).
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>

#include "tuner/gpu/devices.h"
#include "tuner/gpu/fill_device.h"

namespace {

using namespace ktune;
using namespace ktune::gpu;
using Clock = std::chrono::steady_clock;

ArgSpec input(const benchmark::State& state) {
  const auto type = static_cast<ElemType>(state.range(0));
  const std::uint64_t bytes = std::uint64_t{1} << state.range(1);
  return ArgSpec::buffer("a", type, bytes / elem_size(type));  // fill: random, seeded by the name
}

// One context and a filler for every benchmark.
struct Gpu {
  const CudaApi* api = nullptr;
  std::unique_ptr<PrimaryContext> context;
  std::unique_ptr<DeviceProperties> device;
  std::unique_ptr<DeviceFiller> filler;
  std::string error;

  static Gpu& get() {
    static Gpu g;
    return g;
  }

 private:
  Gpu() {
    const DriverLoad& d = cuda_driver();
    if (!d.ready()) {
      error = d.message;
      return;
    }
    try {
      context = std::make_unique<PrimaryContext>(*d.api, 0);
      device = std::make_unique<DeviceProperties>(query_device(*d.api, 0, d.cuda_version));
      filler = std::make_unique<DeviceFiller>(*d.api, *device);  // compiles once: later starts hit the cache
      api = d.api;
    } catch (const Error& e) {
      error = e.message();
    }
  }
};

void BM_FillHost(benchmark::State& state) {
  const ArgSpec a = input(state);
  for (auto _ : state) benchmark::DoNotOptimize(fill_host(a).data());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) << state.range(1));
}

void BM_FillHostAndUpload(benchmark::State& state) {
  Gpu& g = Gpu::get();
  if (!g.api) return state.SkipWithError(g.error.c_str());
  const ArgSpec a = input(state);
  const std::size_t bytes = std::size_t{1} << state.range(1);
  DeviceMemory m(*g.api, bytes);
  for (auto _ : state) {
    const auto t0 = Clock::now();
    const std::vector<std::uint8_t> data = fill_host(a);
    check(*g.api, g.api->cuMemcpyHtoD(m.ptr(), data.data(), bytes), "cuMemcpyHtoD");
    check(*g.api, g.api->cuCtxSynchronize(), "cuCtxSynchronize");
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) << state.range(1));
}

void BM_FillDevice(benchmark::State& state) {
  Gpu& g = Gpu::get();
  if (!g.api) return state.SkipWithError(g.error.c_str());
  const ArgSpec a = input(state);
  DeviceMemory m(*g.api, std::size_t{1} << state.range(1));
  g.filler->fill(a, m.ptr());  // the first launch's own costs, outside the timing
  check(*g.api, g.api->cuCtxSynchronize(), "cuCtxSynchronize");
  for (auto _ : state) {
    const auto t0 = Clock::now();
    g.filler->fill(a, m.ptr());
    check(*g.api, g.api->cuCtxSynchronize(), "cuCtxSynchronize");
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) << state.range(1));
}

// A worker's first fill: the kernel from the warm cubin cache, loaded.
void BM_FillerStart(benchmark::State& state) {
  Gpu& g = Gpu::get();
  if (!g.api) return state.SkipWithError(g.error.c_str());
  for (auto _ : state) {
    const auto t0 = Clock::now();
    DeviceFiller filler(*g.api, *g.device);
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - t0).count());
  }
}

// 64 MiB (a run on a CPU-only host) and 2 GiB (the vector add), per type.
void sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"type", "log2_bytes"});
  for (ElemType t : {ElemType::F32, ElemType::F64, ElemType::F16, ElemType::U8})
    for (int log2 : {26, 31}) b->Args({static_cast<int>(t), log2});
}

BENCHMARK(BM_FillHost)->Apply(sizes)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FillHostAndUpload)->Apply(sizes)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FillDevice)->Apply(sizes)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FillerStart)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
