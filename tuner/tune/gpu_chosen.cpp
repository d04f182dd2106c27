// GpuEvaluator's work on a few chosen configurations, apart from the search's
// batches: one configuration run once and brought back (ktune run), the
// interleaved re-measure of the best, their hardware counters, and the
// device's two roofs for the roofline, measured with kernels of ktune's own.
#include <algorithm>
#include <span>

#include "ktune/error.h"
#include "tuner/gpu/counters.h"
#include "tuner/tune/gpu_evaluator.h"

namespace ktune {

GpuEvaluator::Ran GpuEvaluator::run_once(const std::vector<Value>& config, bool all_buffers) {
  Ran out;
  db::Evaluation& e = out.eval;
  e.config = config;
  e.timestamp = db::now_iso8601();
  const Build build = build_all(*spec_, std::span<const std::vector<Value>>(&config, 1), arch_, *pool_)[0];
  out.cache_hit = build.compile.cache_hit;
  record_build(build, e);
  if (!build.ok()) return out;
  // The job tuning would run, less the timing: the same arguments, fills,
  // tolerances and launch, through the worker's verified run.
  gpu::Job job = make_job(config, build);
  job.measure = false;
  job.capture_outputs = true;
  job.capture_every_buffer = all_buffers;
  out.verified = job.verify;
  gpu::Result r = run_job(std::move(job), false);
  e.status = r.status;
  e.reason = r.reason;
  e.load_ms = r.load_ms;
  if (r.verify_ms > 0) e.verify_ms = r.verify_ms;
  if (r.resources.registers) {
    e.registers = r.resources.registers;
    e.occupancy = r.resources.occupancy;
  }
  out.mismatch = std::move(r.mismatch);
  out.buffers = std::move(r.outputs);
  return out;
}

std::vector<Measured> GpuEvaluator::remeasure(std::span<const std::vector<Value>> configs, int rounds) {
  // Measured before, so these are cache hits, answered by the pool at once.
  const std::vector<Build> built = build_all(*spec_, configs, arch_, *pool_);
  std::vector<Measured> out(configs.size());
  std::vector<std::vector<double>> medians(configs.size()), energies(configs.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    db::Evaluation& e = out[i].eval;
    e.config = configs[i];
    e.timestamp = db::now_iso8601();
    if (!built[i].ok()) {
      e.status = built[i].status;
      e.reason = "re-measure: " + built[i].reason;
    }
  }
  for (int round = 0; round < rounds; ++round)
    for (size_t i = 0; i < configs.size(); ++i) {
      db::Evaluation& e = out[i].eval;
      if (e.status != db::Status::Ok) continue;
      gpu::Job job = make_job(configs[i], built[i]);
      job.verify = false;
      job.capture_outputs = false;
      const gpu::Result r = run_job(std::move(job), false);
      if (r.interrupted) throw Cancelled{};
      if (r.status != gpu::Status::Ok) {
        e.status = r.status;
        e.reason = "re-measure: " + r.reason;
        continue;
      }
      medians[i].push_back(r.timing.median_ms);
      e.benchmark_ms = e.benchmark_ms.value_or(0) + r.benchmark_ms;
      e.load_ms = e.load_ms.value_or(0) + r.load_ms;
      e.registers = r.resources.registers;
      e.occupancy = r.resources.occupancy;
      take_device_state(r, e);
      if (r.timing.energy_j > 0) energies[i].push_back(r.timing.energy_j);
    }
  for (size_t i = 0; i < configs.size(); ++i) {
    db::Evaluation& e = out[i].eval;
    if (e.status != db::Status::Ok) continue;
    e.samples = medians[i];
    std::vector<double> sorted = medians[i];
    std::sort(sorted.begin(), sorted.end());
    e.time_ms = sorted[sorted.size() / 2];
    e.complete_stats();
    e.reason = "re-measured: median of " + std::to_string(rounds) + " interleaved rounds";
    if (!energies[i].empty()) {
      std::sort(energies[i].begin(), energies[i].end());
      e.energy_j = energies[i][energies[i].size() / 2];
    }
    const auto metrics = spec_->evaluate_metrics(configs[i], *e.time_ms, e.energy_j);
    for (size_t m = 0; m < metrics.size(); ++m)
      if (metrics[m]) e.metrics[spec_->metrics[m].name] = *metrics[m];
    out[i].cost_s = (e.benchmark_ms.value_or(0) + e.load_ms.value_or(0)) / 1000.0;
  }
  return out;
}

std::vector<Measured> GpuEvaluator::profile(std::span<const std::vector<Value>> configs,
                                            const std::vector<std::string>& metrics) {
  const std::vector<Build> built = build_all(*spec_, configs, arch_, *pool_);
  std::vector<Measured> out(configs.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    db::Evaluation& e = out[i].eval;
    e.config = configs[i];
    e.timestamp = db::now_iso8601();
    if (!built[i].ok()) {
      e.status = built[i].status;
      e.reason = "profile: " + built[i].reason;
      continue;
    }
    gpu::Job job = make_job(configs[i], built[i]);
    job.verify = false;
    job.capture_outputs = false;
    job.measure = false;
    job.profile = true;
    job.metrics = metrics;
    const gpu::Result r = run_job(std::move(job), false);
    if (r.interrupted) throw Cancelled{};
    e.status = r.status;
    e.reason = r.status == db::Status::Ok ? r.counters_note : "profile: " + r.reason;
    gpu::counters_to_evaluation(r.counter_metrics, r.counter_values, e);
    out[i].cost_s = r.wall_ms / 1000.0;
  }
  return out;
}

namespace {

// The roofline's two roofs, measured with kernels of ktune's own: a float4
// copy (bytes read plus written, as bench/gpu/limits counts them) and FP32
// FMAs in eight independent chains per thread, b and c run-time values so
// that nothing folds.
constexpr const char* kLimitsSource = R"cuda(
extern "C" __global__ void ktune_copy(const float4* __restrict__ in, float4* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}
extern "C" __global__ void ktune_fma(float* out, float b, float c, int iters) {
  float a[8];
  for (int k = 0; k < 8; ++k) a[k] = threadIdx.x + k;
  for (int i = 0; i < iters; ++i)
#pragma unroll
    for (int k = 0; k < 8; ++k) a[k] = fmaf(a[k], b, c);
  float s = 0;
  for (int k = 0; k < 8; ++k) s += a[k];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
)cuda";

}  // namespace

db::DeviceInfo GpuEvaluator::measure_limits() {
  db::DeviceInfo info = device();
  const gpu::DeviceProperties& d = engine_->device();
  auto run = [&](const char* name, gpu::LaunchGeometry g, std::vector<gpu::ArgSpec> args) {
    CompileRequest request;
    request.source = kLimitsSource;
    request.kernel_name = name;
    request.arch = arch_;
    const CompileResult c = pool_->take(pool_->submit(std::move(request)));
    if (!c.ok) throw Error::failed(std::string("the limits kernel ") + name + " does not compile:\n" + c.log);
    gpu::Job job;
    job.label = name;
    job.cubin.assign(c.cubin.begin(), c.cubin.end());
    job.kernel_name = c.lowered_name;
    job.geometry = g;
    job.args = std::move(args);
    job.measure_options.warmup_ms = 100;  // clocks up before the roof is taken
    const gpu::Result r = engine_->run(job);
    if (r.status != gpu::Status::Ok) throw Error::failed(std::string("the limits kernel ") + name + " failed: " + r.reason);
    return r.timing.median_ms;
  };
  // 512 MiB each way (less on a small GPU): far beyond any L2.
  const int n = static_cast<int>(std::min<uint64_t>(uint64_t{1} << 25, d.total_memory / 8 / 16));
  const double copy_ms = run("ktune_copy", {{uint32_t((n + 255) / 256), 1, 1}, {256, 1, 1}, 0},
                             {gpu::ArgSpec::buffer("in", ElemType::F32, uint64_t(n) * 4, gpu::Fill::constant(1)),
                              gpu::ArgSpec::buffer("out", ElemType::F32, uint64_t(n) * 4, gpu::Fill::zeros()),
                              gpu::ArgSpec::scalar_int("n", ElemType::I32, n)});
  info.copy_gbs = 2.0 * n * 16 / (copy_ms * 1e6);
  const uint32_t blocks = static_cast<uint32_t>(std::max(d.sm_count, 1) * 8), threads = 256;
  const int iters = 4096;
  const double fma_ms = run("ktune_fma", {{blocks, 1, 1}, {threads, 1, 1}, 0},
                            {gpu::ArgSpec::buffer("out", ElemType::F32, uint64_t(blocks) * threads, gpu::Fill::zeros()),
                             gpu::ArgSpec::scalar("b", ElemType::F32, 0.999), gpu::ArgSpec::scalar("c", ElemType::F32, 0.5),
                             gpu::ArgSpec::scalar_int("iters", ElemType::I32, iters)});
  info.fp32_gflops = double(blocks) * threads * iters * 8 * 2 / (fma_ms * 1e6);
  return info;
}

}  // namespace ktune
