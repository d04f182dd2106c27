// gpu::Engine: runs jobs (one compiled configuration each) on one GPU, surviving any kernel.
//
// The tuning loop hands it one Job per configuration and gets a Result back:
// ok with timings, or invalid / runtime_error / wrong_result / timeout with a
// reason. Kernels run in a worker child (tuner/gpu/worker.h): a fresh exec of
// this same program, which turns into a worker before main() when it finds
// KTUNE_GPU_WORKER in its environment. Exec, not a bare fork, because this
// process may hold CUDA driver state without asking for it (NVRTC loads
// libcuda and calls cuInit), and a forked copy of that state cannot cuInit.
// So every program that links the engine is its own worker binary, and this
// process need never touch CUDA. A hang is caught by a
// deadline on each batch of launches: Job::timeout_s, else
// max(min_timeout_s, timeout_factor x the best per-launch time so far x the
// batch size), or first_timeout_s before anything has been timed. A worker
// that hangs, crashes or loses its context is killed (SIGKILL) and replaced
// on the next run(); the expected outputs live here and are re-sent, or, set
// by a reference job, are computed again in the fresh worker.
//
// SIGINT and SIGTERM: the worker ignores them, so Ctrl-C (or Slurm's SIGTERM
// to every process of a step) reaches only this process. Once
// EngineOptions::cancel is requested (by the caller's handler), a running job
// is abandoned (the worker is killed) and reported as Result::interrupted;
// without one the job finishes normally and the caller checks afterwards.
//
// Not thread-safe: one run() at a time. The worker is killed when the
// thread that started it exits (PR_SET_PDEATHSIG): use it from one long-lived thread.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "search/expr/cancel.h"
#include "tuner/gpu/protocol.h"

namespace ktune::gpu {

struct EngineOptions {
  double min_timeout_s = 1.0;
  double timeout_factor = 50;
  double first_timeout_s = 10;
  double setup_timeout_s = 600;  // module load, argument fill and upload, output copies
  Cancel::Token cancel;
};

// The devices as a throw-away worker sees them; this process stays CUDA-free.
struct DeviceProbe {
  DriverState state = DriverState::NoDriver;
  std::string message;  // why not Ready
  std::vector<DeviceProperties> devices;
};
DeviceProbe probe_devices();

class Engine {
 public:
  struct Started {
    std::unique_ptr<Engine> engine;  // null when the GPU could not be opened
    DriverState state = DriverState::NoDriver;
    std::string message;                   // why engine is null
  };
  // Forks a worker for GPU `gpu`; "no CUDA driver" comes back as a state.
  static Started start(int gpu, EngineOptions options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const DeviceProperties& device() const { return devices_.at(gpu_); }
  const std::vector<DeviceProperties>& devices() const { return devices_; }

  // Never throws for a configuration's failure; only for a broken engine
  // (e.g. a worker that cannot be restarted: Error, exit status 1).
  Result run(const Job& job);

  // The outputs verified jobs are compared with (by buffer name), e.g. a
  // reference kernel's captured outputs. Kept here across worker restarts.
  void set_expected(std::vector<HostBuffer> expected);
  const std::vector<HostBuffer>& expected() const { return expected_; }
  // The expected outputs as a reference job's outputs, computed in the
  // worker and kept there (on the device where there is room): no output
  // crosses the host. Runs `reference` now and returns its result; a worker
  // that replaces this one runs it again before its first verified job.
  Result set_reference(Job reference);

  double best_ms() const { return best_ms_; }  // 0 before the first ok timing
  void reset_best() { best_ms_ = 0; }
  int restarts() const { return restarts_; }   // workers replaced so far

 private:
  Engine(int gpu, EngineOptions options) : gpu_(gpu), options_(options) {}
  Ready spawn();  // a new worker; fills pid_/fd_ when it is Ready
  void stop_worker(bool graceful);
  Result await_result(const Job& job);
  double batch_timeout_s(const Job& job, int launches) const;
  std::string reap();  // waits for the dead worker; how it ended

  int gpu_;
  EngineOptions options_;
  std::vector<DeviceProperties> devices_;
  pid_t pid_ = -1;
  int fd_ = -1;
  bool worker_has_expected_ = false;
  std::vector<HostBuffer> expected_;
  std::optional<Job> reference_;  // set_reference's job, instead of expected_
  double best_ms_ = 0;
  int restarts_ = 0;
};

}  // namespace ktune::gpu
