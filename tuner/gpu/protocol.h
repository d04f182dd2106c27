// What the tuning process and its GPU worker say to each other.
//
// The worker is a child process that owns the CUDA context, so a kernel that
// corrupts the context, crashes the process or never returns costs one worker,
// not the run. They talk over a socket pair in length-prefixed binary messages:
// frames of tuner/base/wire.h.
//
// Job and Result are also the engine's public vocabulary (tuner/gpu/engine.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/record/record.h"
#include "ktune/error.h"
#include "tuner/gpu/devices.h"
#include "tuner/gpu/args.h"
#include "tuner/gpu/measure.h"
#include "tuner/gpu/nvml.h"
#include "tuner/gpu/verify.h"

namespace ktune::gpu {

// A job's outcome, in the stored vocabulary (db/record/record.h); the engine
// never reports CompileError (it gets compiled code).
using db::Status;

// One configuration to evaluate.
struct Job {
  // For logs and the NVTX range: a configuration's config_key, or a name for a
  // job of no configuration (the reference, a limits kernel), hence not a key.
  std::string label;
  std::vector<std::uint8_t> cubin;   // the compiled module image
  std::string kernel_name;           // lowered (mangled) name in the cubin
  LaunchGeometry geometry;
  std::vector<ArgSpec> args;         // in kernel-parameter order
  bool verify = false;               // compare outputs with the engine's expected outputs
  Tolerance tolerance;
  bool capture_outputs = false;      // return the outputs (to become the reference)
  // With capture_outputs: every buffer argument as the run left it, not only
  // the outputs (a one-off run that shows its inputs too). A run whose
  // verification fails returns them all the same.
  bool capture_every_buffer = false;
  // Keep the outputs in the worker as the expected outputs of later verified
  // jobs (a reference run), on the device where there is room.
  bool keep_as_expected = false;
  bool measure = true;               // false: one verified/captured run, no timing
  MeasureOptions measure_options;
  double timeout_s = 0;              // per launch batch; 0: derived from the best time so far
  // Hardware counters of one launch (tuner/gpu/counters.h), after any
  // verification and measurement; metrics empty: standard_metrics().
  bool profile = false;
  std::vector<std::string> metrics;
};

struct Result {
  Status status = Status::Ok;
  bool interrupted = false;          // stopped by the engine's interrupt flag (status RuntimeError)
  std::string reason;                // "" for ok
  Timing timing;                     // when status is Ok and the job measured
  FunctionAttributes resources;               // when the kernel loaded
  Sensors sensors;                   // NVML reading right after the measurement
  std::optional<Mismatch> mismatch;  // when status is WrongResult because of an element
  std::vector<HostBuffer> outputs;   // when capture_outputs and the kernel ran (verified or not)
  double wall_ms = 0;                // the whole job, as the parent saw it
  // Phases as the worker timed them (host wall clock, each ending in a sync):
  double load_ms = 0;                // module load, function lookup, attributes
  double verify_ms = 0;              // poison/restore, the checked run, the compare
  double benchmark_ms = 0;           // warm-up and timed samples
  // A profiled job: the metrics CUPTI measured and their values, or why
  // there are none (the configuration's status is unaffected by that).
  std::vector<std::string> counter_metrics;
  std::vector<double> counter_values;
  std::string counters_note;         // "": counted; else why not, or the metrics dropped
  double profile_ms = 0;             // host time of the profiled launch and its replays
};

// The worker's first message: whether it found a driver and which devices.
struct Ready {
  DriverState state = DriverState::NoDriver;
  std::string message;
  std::vector<DeviceProperties> devices;
  int gpu = -1;                      // the device it opened, -1: none (listing only)
};

enum class MessageType : std::uint32_t {
  Ready = 1,     // worker -> parent, once
  Job = 2,       // parent -> worker
  Expected = 3,  // parent -> worker: the reference outputs for verification
  Shutdown = 4,  // parent -> worker
  Progress = 5,  // worker -> parent: a batch of `launches` starts now (0: set-up work)
  Result = 6,    // worker -> parent, ends a job; carries whether the worker now exits
};

struct Message {
  MessageType type = MessageType::Shutdown;
  std::vector<std::uint8_t> payload;
};

std::vector<std::uint8_t> encode(const Job& job);
std::vector<std::uint8_t> encode(const Result& result, bool worker_exits);
std::vector<std::uint8_t> encode(const Ready& ready);
std::vector<std::uint8_t> encode(const std::vector<HostBuffer>& buffers);
std::vector<std::uint8_t> encode_progress(int launches);
// The argument list alone: the worker's key for reusing uploaded buffers.
std::vector<std::uint8_t> encode(const std::vector<ArgSpec>& args);

Job decode_job(const std::vector<std::uint8_t>& payload);
Result decode_result(const std::vector<std::uint8_t>& payload, bool* worker_exits);
Ready decode_ready(const std::vector<std::uint8_t>& payload);
std::vector<HostBuffer> decode_buffers(const std::vector<std::uint8_t>& payload);
int decode_progress(const std::vector<std::uint8_t>& payload);

// Whole-message I/O on the worker's socket (tuner/base/wire.h).
bool send_message(int fd, MessageType type, const std::vector<std::uint8_t>& payload);
std::optional<Message> receive_message(int fd);

}  // namespace ktune::gpu
