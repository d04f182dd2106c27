// Hardware counters of one kernel launch, through CUPTI's range profiler.
//
// CUPTI (libcupti.so from the CUDA toolkit) is loaded at run time, like the
// driver, so ktune runs where it is missing and says so. A profile replays
// the launch once per pass the metrics need (kernel replay: CUPTI saves and
// restores device memory between passes), so what the counters see is one
// launch of the configuration as it runs in the tuner. The metric names are
// Nsight Compute's; counters_to_evaluation() turns the standard set into the
// stored figures (db::Evaluation's Counter fields) and keeps any other metric
// under its own name.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "db/record/record.h"
#include "tuner/gpu/driver.h"

namespace ktune::gpu {

// The metrics behind ktune's stored counters (DRAM bytes and utilisation, L2
// hit rate, global load/store requests and sectors, achieved occupancy, SM
// and tensor-pipe utilisation, shared-memory bank conflicts, floating-point
// operations, the launch's time).
const std::vector<std::string>& standard_metrics();

class CounterProfiler {
 public:
  // Loads CUPTI and prepares `metrics` for the current context's device.
  // Metrics this device does not know are dropped (refused() lists them).
  // Throws Error::failed with one clear sentence when counters cannot be had:
  // no CUPTI, a driver that restricts counters to administrators, a device
  // CUPTI does not support, no metric left.
  CounterProfiler(CUcontext context, int device_ordinal, std::vector<std::string> metrics);
  ~CounterProfiler();
  CounterProfiler(const CounterProfiler&) = delete;
  CounterProfiler& operator=(const CounterProfiler&) = delete;

  // Runs `launch` (which launches the kernel once and synchronises) under the
  // profiler and returns each metric's value, in metrics() order. A CUDA
  // error of the kernel propagates as CudaError; a profiler failure throws
  // Error::failed.
  std::vector<double> profile(const std::function<void()>& launch);

  const std::vector<std::string>& metrics() const { return metrics_; }
  const std::vector<std::string>& refused() const { return refused_; }
  size_t passes() const { return passes_; }

  struct Cupti;  // the entry points of the loaded library (counters.cpp)

 private:
  CUcontext context_;
  std::vector<std::string> metrics_, refused_;
  std::vector<const char*> names_;
  std::vector<std::uint8_t> config_image_;
  size_t passes_ = 0;
  void* host_object_ = nullptr;
  const Cupti* cupti_ = nullptr;
};

// Stores the standard metrics' values in e's counter fields (fractions from
// Nsight Compute's percentages) and every other metric in e.metrics.
void counters_to_evaluation(const std::vector<std::string>& metrics, const std::vector<double>& values,
                            db::Evaluation& e);

}  // namespace ktune::gpu
