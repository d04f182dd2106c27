// Timing one kernel configuration on the GPU.
//
// The flow for a loaded kernel: check_geometry() rejects a launch the device or
// the compiled function cannot take (that configuration is `invalid`, with the
// reason); prepare_function() raises the dynamic shared memory limit when a
// launch needs more than the default 48 KiB; Measurer::measure() warms up, then
// takes samples timed with CUDA events until their noise (stddev / mean) is
// below a threshold, a GPU-time cap is reached, or max_samples are taken.
//
// Hot mode (default) batches back-to-back launches so that one sample lasts at
// least min_sample_ms, which keeps event resolution and launch gaps out of
// short kernels' numbers. The launch that estimates the cost is itself warm:
// it counts toward the warm-up, and for a kernel long enough to fill a sample
// alone it is the first sample, so a long kernel pays no launch it does not
// use. Cold mode flushes L2 (writes a buffer twice its
// size) before every sample and times single launches. Samples are stored per
// launch (sample time / launches in it). When NVML is there, each sample is
// checked for power or thermal throttling and the count is reported.
//
// Failures throw CudaError (tuner/gpu/driver.h); the worker turns them into data.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tuner/gpu/devices.h"
#include "tuner/gpu/driver.h"
#include "tuner/gpu/nvml.h"

namespace ktune::gpu {

struct LaunchGeometry {
  std::array<std::uint32_t, 3> grid{1, 1, 1};
  std::array<std::uint32_t, 3> block{1, 1, 1};
  std::uint32_t dynamic_smem = 0;  // bytes

  std::uint64_t threads_per_block() const {
    return std::uint64_t{block[0]} * block[1] * block[2];
  }
  std::string str() const;  // "grid (4096,1,1) block (256,1,1) smem 0"
};

// What the driver reports of a loaded function (cuFuncGetAttribute and the
// occupancy API): what it uses, and what that allows on this device. The
// compiler's view of the same kernel, read from the cubin without a GPU, is
// KernelResources (tuner/compile/cubin_info.h).
struct FunctionAttributes {
  int registers = 0;              // per thread
  int static_smem = 0;            // bytes per block
  int local_bytes = 0;            // per thread; > 0 usually means spills
  int const_bytes = 0;
  int max_threads_per_block = 0;  // the function's own limit (registers, launch bounds)
  int active_blocks_per_sm = 0;   // cuOccupancyMaxActiveBlocksPerMultiprocessor
  double occupancy = 0;           // active warps / the SM's maximum warps, 0..1
};

struct MeasureOptions {
  double warmup_ms = 20;
  double min_sample_ms = 0.5;      // hot mode: batch launches up to this per sample
  int max_launches_per_sample = 1000;
  int min_samples = 10;
  int max_samples = 500;
  double max_noise = 0.02;         // stop when stddev / mean of samples is below this
  double time_cap_ms = 200;        // stop after this much sampled GPU time
  bool cold = false;
  // Racing: > 0 stops sampling once race_samples samples have a minimum above
  // this (the best median so far times a margin the noise cannot close): the
  // configuration cannot rank near the best, so more samples buy nothing.
  double race_above_ms = 0;
  int race_samples = 3;
  // > 0: the one-sample rule, a wider bound that stops sampling as soon as
  // the first sample lies above it (a configuration far behind the best).
  double race_first_above_ms = 0;
  // > 0: after the samples, keep the kernel running back to back for about
  // this long while reading NVML's energy counter (Timing::energy_j).
  double energy_ms = 0;
};

// Whether the racing rule stops sampling after `samples_ms` (see MeasureOptions).
bool race_lost(const std::vector<double>& samples_ms, const MeasureOptions& options);

struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0, mean_ms = 0, stddev_ms = 0;
  double noise = 0;                // stddev / mean
  int launches_per_sample = 0;
  int throttled_samples = 0;       // samples taken while NVML reported throttling
  bool converged = false;          // noise went below max_noise
  bool stopped_early = false;      // the racing rule ended sampling
  bool cold = false;
  std::vector<double> samples_ms;  // per launch, in the order taken
  // The energy window (MeasureOptions::energy_ms): average power of the kernel
  // run back to back, and that power times median_ms; 0 when not measured.
  double power_w = 0;
  double energy_j = 0;
  double energy_window_ms = 0;     // host time between the first and last counter step used
  std::string energy_note;         // why energy is missing where it was asked for
};

struct SampleStats {
  double median = 0, min = 0, max = 0, mean = 0, stddev = 0, noise = 0;
};
// Sample statistics; stddev is the sample (n - 1) standard deviation.
SampleStats summarize(const std::vector<double>& samples);

// Why this launch cannot run here, or "" when it can. function_max_threads is
// CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK (0: unknown, not checked).
std::string check_geometry(const DeviceProperties& device, const FunctionAttributes& resources,
                           const LaunchGeometry& geometry);

// The function's attributes (registers, shared/local/const bytes, thread limit).
FunctionAttributes query_resources(const CudaApi& api, CUfunction fn);

// Theoretical occupancy of this launch into r.
// REQUIRES: check_geometry passed and prepare_function ran.
void fill_occupancy(const CudaApi& api, CUfunction fn, const DeviceProperties& device,
                    const LaunchGeometry& geometry, FunctionAttributes& r);

// Raises CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES when the launch needs
// it: when its dynamic plus the function's static shared memory pass 48 KiB.
void prepare_function(const CudaApi& api, CUfunction fn, const LaunchGeometry& geometry, const FunctionAttributes& resources);

// Runs and times launches on its own stream. Owns the events and the L2 flush
// buffer, so one Measurer serves every configuration of a worker.
class Measurer {
 public:
  // Called before each batch of launches with its size: lets the worker tell
  // its parent how long the next stretch may take.
  using OnBatch = std::function<void(int launches)>;

  Measurer(const CudaApi& api, const DeviceProperties& device);

  // One launch followed by a synchronisation, every error checked.
  void run_once(CUfunction fn, const LaunchGeometry& g, void** params);

  // ran_before: the function already ran since it was loaded (the verified
  // run), or its module was loaded eagerly: no lazy set-up is left to pay,
  // so no launch is spent on it here.
  Timing measure(CUfunction fn, const LaunchGeometry& g, void** params,
                 const MeasureOptions& options, const OnBatch& on_batch,
                 const NvmlDevice* sensors, bool ran_before = false);

 private:
  void launch(CUfunction fn, const LaunchGeometry& g, void** params);
  // The energy window of measure(): fills t's power_w, energy_j, energy_window_ms.
  void measure_energy(CUfunction fn, const LaunchGeometry& g, void** params, const MeasureOptions& o,
                      const OnBatch& on_batch, const NvmlDevice& sensors, Timing& t);
  // Milliseconds for `launches` back-to-back launches (after an L2 flush in cold mode).
  double timed_batch(CUfunction fn, const LaunchGeometry& g, void** params, int launches,
                     bool flush);

  const CudaApi& api_;
  const DeviceProperties& device_;
  Stream stream_;
  Event start_, stop_;
  std::optional<DeviceMemory> flush_;
  unsigned flush_round_ = 0;
};

}  // namespace ktune::gpu
