#include "tuner/gpu/worker.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <string_view>
#include <utility>

#include <nvtx3/nvToolsExt.h>

#include "tuner/gpu/counters.h"
#include "tuner/gpu/fill_device.h"
#include "tuner/gpu/protocol.h"
#include "tuner/gpu/verify_device.h"

namespace ktune::gpu {
namespace {

// Names each configuration's work in Nsight Systems / Compute timelines: the
// configuration's range holds "load", "verify", "measure" and "profile"
// (docs/profiling.md). nvtx3 is header-only and does nothing unless a tool
// injects itself.
class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

class Session {
 public:
  explicit Session(int fd) : fd_(fd) {}

  // Loads the driver and opens the GPU; the Ready message says how it went.
  Ready open(int gpu);
  // Runs one job; sets exit_after when the context is no longer usable.
  Result run(const Job& job, bool& exit_after);
  void set_expected(std::vector<HostBuffer> expected);

 private:
  void progress(int launches) { send_message(fd_, MessageType::Progress, encode_progress(launches)); }
  void execute(const Job& job, Result& r);
  // Why a launch of `fn` with geometry `g` cannot run on this device ("" where
  // it can): its resources go to `r`, and where it fits, the function's limits
  // are raised for `g` and its occupancy filled in.
  std::string fit_launch(CUfunction fn, const LaunchGeometry& g, Result& r);
  void profile(const Job& job, CUfunction fn, ArgumentSet& args, Result& r);
  CUfunction load(const Job& job);
  ArgumentSet& arguments(const Job& job);
  bool context_healthy() const;
  bool expected_on_device();
  // This run's outputs become the expected outputs (Job::keep_as_expected).
  void keep_expected(const ArgumentSet& args);

  int fd_;
  const CudaApi* api_ = nullptr;
  DeviceProperties device_;
  std::unique_ptr<PrimaryContext> context_;
  std::unique_ptr<Measurer> measurer_;
  NvmlDevice nvml_;
  std::unique_ptr<Module> module_;
  std::vector<std::uint8_t> module_image_;
  std::vector<std::uint8_t> args_key_;
  std::unique_ptr<ArgumentSet> args_;
  // Made by the first argument list with a buffer to fill on the device. A
  // kernel that cannot be had (this NVRTC cannot target the GPU) leaves the
  // fills to the host, which gives the same bytes: asked once per worker.
  std::unique_ptr<DeviceFiller> filler_;
  bool filler_failed_ = false;
  // The expected outputs arrive between jobs; the first verified job uploads
  // them (inside a job, so a failure is that job's result, not the worker's
  // end) and the host copy is dropped. They stay here, and verification runs
  // on the host, only where the device has no room for them.
  std::vector<HostBuffer> expected_;
  bool upload_pending_ = false;
  // Modules load every function up front (serve_if_gpu_worker sets it unless
  // the user set CUDA_MODULE_LOADING): no launch is spent on lazy set-up.
  const bool eager_loading_ = [] {
    const char* mode = std::getenv("CUDA_MODULE_LOADING");
    return mode && std::string_view(mode) == "EAGER";
  }();
  std::unique_ptr<DeviceVerifier> verifier_;
  // Made by the first profiled job, one per metric set, kept while jobs ask
  // for the same metrics.
  std::vector<std::unique_ptr<CounterProfiler>> counters_;
  std::vector<std::string> counters_wanted_;
  std::string counters_failed_;  // why counters cannot be had here: asked once per worker
};

void Session::profile(const Job& job, CUfunction fn, ArgumentSet& args, Result& r) {
  const std::vector<std::string>& wanted = job.metrics.empty() ? standard_metrics() : job.metrics;
  if (!counters_failed_.empty()) {
    r.counters_note = counters_failed_;
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<std::vector<std::string>> sets = metric_sets(wanted);
  try {
    if (counters_wanted_ != wanted) {
      counters_.clear();
      for (const auto& set : sets)
        counters_.push_back(std::make_unique<CounterProfiler>(context_->get(), device_.ordinal, set));
      counters_wanted_ = wanted;
    }
  } catch (const Error& e) {
    counters_.clear();
    counters_wanted_.clear();
    counters_failed_ = e.message();
    r.counters_note = counters_failed_;
    return;
  }
  NvtxRange range("profile");
  std::vector<std::string> refused;
  for (const auto& profiler : counters_) {
    progress(static_cast<int>(profiler->passes()));
    try {
      const std::vector<double> values =
          profiler->profile([&] { measurer_->run_once(fn, job.geometry, args.kernel_params()); });
      r.counter_values.insert(r.counter_values.end(), values.begin(), values.end());
      r.counter_metrics.insert(r.counter_metrics.end(), profiler->metrics().begin(), profiler->metrics().end());
    } catch (const CudaError&) {
      throw;  // the kernel's own failure: the job's status, as without the profiler
    } catch (const Error& e) {
      r.counters_note = e.message();
      r.counter_values.clear();
      r.counter_metrics.clear();
      return;
    }
    refused.insert(refused.end(), profiler->refused().begin(), profiler->refused().end());
  }
  r.profile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!refused.empty()) {
    r.counters_note = "metrics this GPU does not have:";
    for (const std::string& m : refused) r.counters_note.append(" ").append(m);
  }
}

void Session::set_expected(std::vector<HostBuffer> expected) {
  if (verifier_) verifier_->clear();
  expected_ = std::move(expected);
  upload_pending_ = !expected_.empty();
}

bool Session::expected_on_device() {
  if (upload_pending_) {
    try {
      if (!verifier_) verifier_ = std::make_unique<DeviceVerifier>(*api_, device_);
      verifier_->set_expected(expected_);
      std::vector<HostBuffer>().swap(expected_);  // frees the memory, not just the size
    } catch (const CudaError& e) {
      if (e.code() != CUDA_ERROR_OUT_OF_MEMORY) throw;  // left pending: the next job says it again
    }
    upload_pending_ = false;
  }
  return verifier_ && !verifier_->empty();
}

void Session::keep_expected(const ArgumentSet& args) {
  std::vector<HostBuffer>().swap(expected_);
  upload_pending_ = false;
  try {
    if (!verifier_) verifier_ = std::make_unique<DeviceVerifier>(*api_, device_);
    verifier_->adopt(args.device_outputs());
    return;
  } catch (const CudaError& e) {
    if (e.code() != CUDA_ERROR_OUT_OF_MEMORY) throw;
  }
  // No room for a second copy on the device: the host keeps them and compares.
  expected_ = args.read_outputs();
}

Ready Session::open(int gpu) {
  Ready ready;
  const DriverLoad& driver = cuda_driver();
  ready.state = driver.state;
  ready.message = driver.message;
  if (!driver.ready()) return ready;
  try {
    api_ = driver.api;
    ready.devices = query_all_devices(*api_, driver.cuda_version);
    if (gpu < 0) return ready;
    if (gpu >= static_cast<int>(ready.devices.size())) {
      ready.state = DriverState::Unusable;
      ready.message = "GPU " + std::to_string(gpu) + " not found: " +
                      std::to_string(ready.devices.size()) + " CUDA device(s)";
      return ready;
    }
    device_ = ready.devices[gpu];
    context_ = std::make_unique<PrimaryContext>(*api_, gpu);
    measurer_ = std::make_unique<Measurer>(*api_, device_);
    nvml_ = NvmlDevice::open(device_.uuid);
    ready.gpu = gpu;
  } catch (const Error& e) {
    ready.state = DriverState::Unusable;
    ready.message = e.message();
  }
  return ready;
}

CUfunction Session::load(const Job& job) {
  if (!module_ || module_image_ != job.cubin) {
    module_.reset();
    module_image_.clear();
    module_ = std::make_unique<Module>(*api_, job.cubin);
    module_image_ = job.cubin;
  }
  return module_->function(job.kernel_name);
}

ArgumentSet& Session::arguments(const Job& job) {
  std::vector<std::uint8_t> key = encode(job.args);
  if (!args_ || key != args_key_) {
    args_.reset();  // free the old buffers before allocating the new ones
    args_key_.clear();
    const bool wanted = std::any_of(job.args.begin(), job.args.end(), fills_on_device);
    if (wanted && !filler_ && !filler_failed_) {
      try {
        filler_ = std::make_unique<DeviceFiller>(*api_, device_);
      } catch (const Error&) {
        filler_failed_ = true;
      }
    }
    args_ = std::make_unique<ArgumentSet>(*api_, job.args, filler_.get());
    args_key_ = std::move(key);
  }
  return *args_;
}

std::string Session::fit_launch(CUfunction fn, const LaunchGeometry& g, Result& r) {
  r.resources = query_resources(*api_, fn);
  std::string why = check_geometry(device_, r.resources, g);
  if (why.empty()) {
    try {
      prepare_function(*api_, fn, g, r.resources);
    } catch (const CudaError& e) {
      why = e.message();
    }
  }
  if (why.empty()) fill_occupancy(*api_, fn, device_, g, r.resources);
  return why;
}

void Session::execute(const Job& job, Result& r) {
  progress(0);
  NvtxRange range(job.label);
  std::optional<NvtxRange> phase(std::in_place, "load");
  auto t0 = std::chrono::steady_clock::now();
  auto lap = [&t0] {  // ms since the last lap
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - t0).count();
    t0 = now;
    return ms;
  };
  CUfunction fn = load(job);
  const LaunchGeometry& g = job.geometry;
  if (std::string why = fit_launch(fn, g, r); !why.empty()) {
    r.status = Status::Invalid;
    r.reason = why;
    return;
  }
  r.load_ms = lap();
  ArgumentSet& args = arguments(job);
  // Each configuration's module has its own __constant__ arrays: fill them.
  if (std::string why_not = args.upload_constants(*module_); !why_not.empty()) {
    r.status = Status::Invalid;
    r.reason = why_not;
    return;
  }
  phase.reset();
  lap();  // argument set-up (once per worker, normally) counts as framework time
  const bool runs_once = job.verify || job.capture_outputs || job.keep_as_expected;
  if (runs_once) {
    NvtxRange verify_range("verify");
    const bool on_device = job.verify && expected_on_device();
    if (job.verify && !on_device && expected_.empty())
      throw Error::failed("verification asked for, but no expected outputs are set");
    args.prepare_verified_run();
    progress(1);
    measurer_->run_once(fn, g, args.kernel_params());
    progress(0);
    // Outputs come to the host only for the parent (capture) or a host compare.
    std::vector<HostBuffer> outputs;
    const bool capture_outputs_only = job.capture_outputs && !job.capture_every_buffer;
    if (capture_outputs_only || (job.verify && !on_device)) outputs = args.read_outputs();
    // What the parent asked to see, wrong results included.
    auto capture = [&] {
      if (job.capture_outputs) r.outputs = job.capture_every_buffer ? args.read_buffers() : std::move(outputs);
    };
    if (job.verify) {
      VerifyOutcome v = on_device ? verifier_->compare(args.device_outputs(), job.tolerance)
                                  : compare_outputs(outputs, expected_, job.tolerance);
      if (!v.ok) {
        capture();
        r.verify_ms = lap();
        r.status = Status::WrongResult;
        r.reason = v.reason;
        r.mismatch = v.worst;
        return;
      }
    }
    if (job.keep_as_expected) keep_expected(args);
    capture();
    r.verify_ms = lap();
  }
  if (job.measure) {
    NvtxRange measure_range("measure");
    const bool ran_before = eager_loading_ || runs_once;
    r.timing = measurer_->measure(fn, g, args.kernel_params(), job.measure_options,
                                  [this](int n) { progress(n); }, &nvml_, ran_before);
    r.benchmark_ms = lap();
  }
  r.sensors = nvml_.read();
  if (job.profile) profile(job, fn, args, r);
}

bool Session::context_healthy() const {
  return api_->cuCtxSynchronize() == CUDA_SUCCESS;
}

Result Session::run(const Job& job, bool& exit_after) {
  Result r;
  exit_after = false;
  if (!context_) {
    r.status = Status::RuntimeError;
    r.reason = "the GPU worker has no device open";
    return r;
  }
  try {
    execute(job, r);
  } catch (const CudaError& e) {
    // Too many registers or threads for this launch is the configuration's
    // fault, known before anything ran: invalid, like an over-limit block.
    r.status = e.code() == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ? Status::Invalid : Status::RuntimeError;
    r.reason = e.message();
    exit_after = e.sticky() || !context_healthy();
  } catch (const Error& e) {
    r.status = Status::RuntimeError;
    r.reason = e.message();
  } catch (const std::bad_alloc&) {
    r.status = Status::RuntimeError;
    r.reason = "the GPU worker ran out of host memory";
  }
  if (exit_after) r.reason += " (the CUDA context is lost; a fresh worker takes over)";
  return r;
}

}  // namespace

[[noreturn]] void worker_main(int fd, int gpu) {
  // Lives until _exit: destructors would call into a possibly broken context.
  auto* session = new Session(fd);
  if (!send_message(fd, MessageType::Ready, encode(session->open(gpu)))) _exit(0);
  for (;;) {
    try {
      std::optional<Message> m = receive_message(fd);
      if (!m || m->type == MessageType::Shutdown) _exit(0);
      if (m->type == MessageType::Expected) {
        session->set_expected(decode_buffers(m->payload));
        continue;
      }
      if (m->type != MessageType::Job) _exit(4);
      bool exit_after = false;
      Result r = session->run(decode_job(m->payload), exit_after);
      if (!send_message(fd, MessageType::Result, encode(r, exit_after))) _exit(0);
      if (exit_after) _exit(3);
    } catch (...) {
      _exit(4);  // a malformed message or a failure outside any job: the parent sees EOF
    }
  }
}

}  // namespace ktune::gpu

namespace ktune {

void enter_worker_if_requested(const CompileChildHooks& hooks) {
  serve_if_compile_child(hooks);
  gpu::serve_if_gpu_worker();
}

}  // namespace ktune
