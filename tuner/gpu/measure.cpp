#include "tuner/gpu/measure.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace ktune::gpu {
namespace {

constexpr std::uint32_t kDefaultSmemLimit = 48 * 1024;

std::string dims(const std::array<std::uint32_t, 3>& d) {
  std::string s = "(";  // appended, not "(" + ...: GCC 12 false -Wrestrict (PR 105329)
  s.append(std::to_string(d[0])).append(",").append(std::to_string(d[1])).append(",");
  return s.append(std::to_string(d[2])).append(")");
}

int func_attribute(const CudaApi& api, CUfunction fn, CUfunction_attribute attr,
                   const char* what) {
  int v = 0;
  check(api, api.cuFuncGetAttribute(&v, attr, fn), std::string("cuFuncGetAttribute(") + what + ")");
  return v;
}

// Registers a block really takes: allocated per warp in units of 256.
std::uint64_t block_registers(int regs_per_thread, std::uint64_t threads, int warp_size) {
  std::uint64_t warps = (threads + warp_size - 1) / warp_size;
  std::uint64_t per_warp = (std::uint64_t(regs_per_thread) * warp_size + 255) / 256 * 256;
  return warps * per_warp;
}

}  // namespace

std::string LaunchGeometry::str() const {
  return "grid " + dims(grid) + " block " + dims(block) + " smem " + std::to_string(dynamic_smem);
}

SampleStats summarize(const std::vector<double>& v) {
  SampleStats s;
  if (v.empty()) return s;
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  s.median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  s.min = sorted.front();
  s.max = sorted.back();
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(n);
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.stddev = n > 1 ? std::sqrt(ss / static_cast<double>(n - 1)) : 0.0;
  s.noise = s.mean > 0 ? s.stddev / s.mean : 0.0;
  return s;
}

std::string check_geometry(const DeviceProperties& d, const FunctionAttributes& r, const LaunchGeometry& g) {
  static const char* axis[] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    if (g.block[i] == 0 || g.grid[i] == 0)
      return "empty launch: " + g.str();
    if (g.block[i] > static_cast<std::uint32_t>(d.max_block_dim[i]))
      return "block." + std::string(axis[i]) + " = " + std::to_string(g.block[i]) +
             " exceeds the device limit " + std::to_string(d.max_block_dim[i]);
    if (g.grid[i] > static_cast<std::uint32_t>(d.max_grid_dim[i]))
      return "grid." + std::string(axis[i]) + " = " + std::to_string(g.grid[i]) +
             " exceeds the device limit " + std::to_string(d.max_grid_dim[i]);
  }
  const std::uint64_t threads = g.threads_per_block();
  if (threads > static_cast<std::uint64_t>(d.max_threads_per_block))
    return std::to_string(threads) + " threads per block exceed the device limit " +
           std::to_string(d.max_threads_per_block);
  if (r.max_threads_per_block > 0 && threads > static_cast<std::uint64_t>(r.max_threads_per_block))
    return std::to_string(threads) + " threads per block exceed the kernel's limit " +
           std::to_string(r.max_threads_per_block) + " (" + std::to_string(r.registers) +
           " registers per thread)";
  if (r.registers > 0 && d.warp_size > 0 &&
      block_registers(r.registers, threads, d.warp_size) > static_cast<std::uint64_t>(d.regs_per_block))
    return std::to_string(r.registers) + " registers x " + std::to_string(threads) +
           " threads exceed the " + std::to_string(d.regs_per_block) + " registers of a block";
  const std::uint64_t smem = std::uint64_t{g.dynamic_smem} + static_cast<std::uint64_t>(r.static_smem);
  if (smem > static_cast<std::uint64_t>(d.smem_per_block_optin))
    return "shared memory " + std::to_string(smem) + " bytes (" + std::to_string(r.static_smem) +
           " static + " + std::to_string(g.dynamic_smem) + " dynamic) exceeds the device's " +
           std::to_string(d.smem_per_block_optin) + " per block";
  return "";
}

FunctionAttributes query_resources(const CudaApi& api, CUfunction fn) {
  FunctionAttributes r;
  r.registers = func_attribute(api, fn, CU_FUNC_ATTRIBUTE_NUM_REGS, "NUM_REGS");
  r.static_smem = func_attribute(api, fn, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "SHARED_SIZE_BYTES");
  r.local_bytes = func_attribute(api, fn, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "LOCAL_SIZE_BYTES");
  r.const_bytes = func_attribute(api, fn, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, "CONST_SIZE_BYTES");
  r.max_threads_per_block =
      func_attribute(api, fn, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK");
  return r;
}

// The 48 KiB default caps static plus dynamic shared memory together: a kernel
// with 32 KiB of static arrays fails a 48 KiB dynamic request (BAT's GEMM T1)
// unless the dynamic limit is raised, which the device allows up to its opt-in
// maximum (check_geometry has checked the sum against it).
void prepare_function(const CudaApi& api, CUfunction fn, const LaunchGeometry& g, const FunctionAttributes& r) {
  if (g.dynamic_smem == 0 ||
      std::uint64_t{g.dynamic_smem} + static_cast<std::uint64_t>(r.static_smem) <= kDefaultSmemLimit)
    return;
  check(api,
        api.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                               static_cast<int>(g.dynamic_smem)),
        "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES = " + std::to_string(g.dynamic_smem) +
            ")");
}

void fill_occupancy(const CudaApi& api, CUfunction fn, const DeviceProperties& d,
                    const LaunchGeometry& g, FunctionAttributes& r) {
  const int threads = static_cast<int>(g.threads_per_block());
  check(api,
        api.cuOccupancyMaxActiveBlocksPerMultiprocessor(&r.active_blocks_per_sm, fn, threads,
                                                        g.dynamic_smem),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  const int warp = d.warp_size > 0 ? d.warp_size : 32;
  const double max_warps = static_cast<double>(d.max_threads_per_sm) / warp;
  const int warps_per_block = (threads + warp - 1) / warp;
  r.occupancy = max_warps > 0 ? r.active_blocks_per_sm * warps_per_block / max_warps : 0.0;
}

Measurer::Measurer(const CudaApi& api, const DeviceProperties& device)
    : api_(api), device_(device), stream_(api), start_(api), stop_(api) {}

void Measurer::launch(CUfunction fn, const LaunchGeometry& g, void** params) {
  check(api_,
        api_.cuLaunchKernel(fn, g.grid[0], g.grid[1], g.grid[2], g.block[0], g.block[1],
                            g.block[2], g.dynamic_smem, stream_.get(), params, nullptr),
        "cuLaunchKernel(" + g.str() + ")");
}

void Measurer::run_once(CUfunction fn, const LaunchGeometry& g, void** params) {
  launch(fn, g, params);
  check(api_, api_.cuStreamSynchronize(stream_.get()), "kernel execution");
}

double Measurer::timed_batch(CUfunction fn, const LaunchGeometry& g, void** params, int launches,
                             bool flush) {
  if (flush) {
    if (!flush_) flush_.emplace(api_, std::max<std::size_t>(2 * std::size_t(device_.l2_bytes), 1 << 20));
    // A changing byte makes each flush a real write of every line.
    check(api_,
          api_.cuMemsetD8Async(flush_->ptr(), static_cast<unsigned char>(++flush_round_),
                               flush_->size(), stream_.get()),
          "cuMemsetD8Async(L2 flush)");
  }
  check(api_, api_.cuEventRecord(start_.get(), stream_.get()), "cuEventRecord");
  for (int i = 0; i < launches; ++i) launch(fn, g, params);
  check(api_, api_.cuEventRecord(stop_.get(), stream_.get()), "cuEventRecord");
  check(api_, api_.cuEventSynchronize(stop_.get()), "kernel execution");
  float ms = 0;
  check(api_, api_.cuEventElapsedTime(&ms, start_.get(), stop_.get()), "cuEventElapsedTime");
  return ms;
}

bool race_lost(const std::vector<double>& samples, const MeasureOptions& o) {
  if (samples.empty()) return false;
  if (o.race_first_above_ms > 0 && samples.front() > o.race_first_above_ms) return true;
  if (!(o.race_above_ms > 0) || static_cast<int>(samples.size()) < std::max(o.race_samples, 1)) return false;
  return *std::min_element(samples.begin(), samples.end()) > o.race_above_ms;
}

Timing Measurer::measure(CUfunction fn, const LaunchGeometry& g, void** params,
                         const MeasureOptions& o, const OnBatch& on_batch,
                         const NvmlDevice* sensors, bool ran_before) {
  Timing t;
  t.cold = o.cold;
  auto batch = [&](int n, bool flush) {
    if (on_batch) on_batch(n);
    return timed_batch(fn, g, params, n, flush);
  };
  // The first launch of a freshly loaded function pays for its lazy set-up;
  // the next one, warm, estimates the cost.
  if (!ran_before) batch(1, false);
  const double estimate_ms = batch(1, false);
  const double one = std::max(estimate_ms, 1e-4);
  const int warmups = static_cast<int>(std::clamp((o.warmup_ms - one) / one, 0.0, 1000.0));
  if (warmups > 0) batch(warmups, false);
  const double per_sample = o.cold ? 1.0 : std::ceil(o.min_sample_ms / one);
  t.launches_per_sample =
      static_cast<int>(std::clamp(per_sample, 1.0, double(std::max(o.max_launches_per_sample, 1))));
  double spent_ms = 0;
  SampleStats stats;
  const int max_samples = std::max({o.max_samples, o.min_samples, 1});
  // A hot sample is one timed batch after warm launches: with one launch a
  // sample and no warm-up left, the estimate was exactly that.
  const bool estimate_is_sample = !o.cold && t.launches_per_sample == 1 && warmups == 0;
  while (static_cast<int>(t.samples_ms.size()) < max_samples) {
    const bool reuse = estimate_is_sample && t.samples_ms.empty();
    double ms = reuse ? estimate_ms : batch(t.launches_per_sample, o.cold);
    spent_ms += ms;
    t.samples_ms.push_back(ms / t.launches_per_sample);
    if (sensors && sensors->valid() && (sensors->reasons() & throttle_mask())) ++t.throttled_samples;
    if (race_lost(t.samples_ms, o)) {
      t.stopped_early = true;
      break;
    }
    if (static_cast<int>(t.samples_ms.size()) < o.min_samples) continue;
    stats = summarize(t.samples_ms);
    if (stats.noise < o.max_noise) {
      t.converged = true;
      break;
    }
    if (spent_ms >= o.time_cap_ms) break;
  }
  stats = summarize(t.samples_ms);
  t.median_ms = stats.median;
  t.min_ms = stats.min;
  t.max_ms = stats.max;
  t.mean_ms = stats.mean;
  t.stddev_ms = stats.stddev;
  t.noise = stats.noise;
  if (o.energy_ms > 0 && !t.stopped_early) {
    if (sensors && sensors->valid() && sensors->energy_mj())
      measure_energy(fn, g, params, o, on_batch, *sensors, t);
    else
      t.energy_note = "no NVML energy counter on this device";
  }
  return t;
}

// NVML's energy counter advances in steps (on the H100 about every 100 ms),
// so a reading before and after a short run can be off by a whole step. The
// kernel is kept running back to back, two batches in flight, while the
// counter is read without pause: the energy between its first and last step
// inside that busy stretch, over the host time between them, is the kernel's
// average power, free of the idle power before and the tail after. Times the
// median launch time it is the energy of one launch.
void Measurer::measure_energy(CUfunction fn, const LaunchGeometry& g, void** params, const MeasureOptions& o,
                              const OnBatch& on_batch, const NvmlDevice& sensors, Timing& t) {
  using Clock = std::chrono::steady_clock;
  const int per_batch = std::max(t.launches_per_sample, 1);
  Event done[2] = {Event(api_), Event(api_)};
  auto enqueue = [&](int slot) {
    if (on_batch) on_batch(per_batch);
    for (int i = 0; i < per_batch; ++i) launch(fn, g, params);
    check(api_, api_.cuEventRecord(done[slot].get(), stream_.get()), "cuEventRecord");
  };
  std::optional<std::uint64_t> first_mj, last_mj, seen = sensors.energy_mj();
  Clock::time_point first_at, last_at;
  const Clock::time_point start = Clock::now();
  const double give_up_ms = 4 * o.energy_ms + 2000;  // a counter that never steps
  // Host time between the counter's first and last step seen so far.
  auto busy_ms = [&] {
    return last_mj ? std::chrono::duration<double, std::milli>(last_at - first_at).count() : 0.0;
  };
  int slot = 0;
  enqueue(0);
  enqueue(1);
  for (;;) {
    // Read the counter until the older batch is done, then replace it.
    for (;;) {
      const CUresult q = api_.cuEventQuery(done[slot].get());
      if (q != CUDA_ERROR_NOT_READY) {
        check(api_, q, "kernel execution");
        break;
      }
      std::optional<std::uint64_t> mj = sensors.energy_mj();
      if (mj && seen && *mj != *seen) {
        const Clock::time_point now = Clock::now();
        if (!first_mj) {
          first_mj = mj;
          first_at = now;
        } else {
          last_mj = mj;
          last_at = now;
        }
      }
      seen = mj;
    }
    const double spent_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (busy_ms() >= o.energy_ms || spent_ms >= give_up_ms) break;
    enqueue(slot);
    slot ^= 1;
  }
  check(api_, api_.cuStreamSynchronize(stream_.get()), "kernel execution");
  const double busy = busy_ms();
  if (!last_mj || busy <= 0) {
    t.energy_note = "NVML's energy counter did not step twice within " + std::to_string(int(give_up_ms)) + " ms";
    return;
  }
  t.energy_window_ms = busy;
  t.power_w = static_cast<double>(*last_mj - *first_mj) / busy;  // mJ / ms = W
  t.energy_j = t.power_w * t.median_ms / 1000.0;
}

}  // namespace ktune::gpu
