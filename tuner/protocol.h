// What the tuning process and its GPU worker say to each other.
//
// The worker is a child process that owns the CUDA context, so a kernel that
// corrupts the context, crashes the process or never returns costs one worker,
// not the run. They talk over a socket pair in length-prefixed binary messages:
// a 4-byte type, an 8-byte payload length, the payload. The encoding is private
// to one build of ktune (both ends are the same binary), so it carries no
// version; every read is bounds-checked and a malformed message is an Error.
//
// Job and Result are also the engine's public vocabulary (tuner/evaluator.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "search/error.h"
#include "tuner/compiler.h"
#include "tuner/devices.h"
#include "tuner/gpu_args.h"
#include "tuner/measure.h"
#include "tuner/nvml.h"
#include "tuner/verify.h"

namespace ktune::gpu {

enum class Status : std::uint8_t { Ok, Invalid, RuntimeError, WrongResult, Timeout, Interrupted };

// "ok", "invalid", "runtime_error", "wrong_result", "timeout", "interrupted"
const char* to_string(Status status);

// One configuration to evaluate.
struct Job {
  std::string label;                 // the configuration, for logs and the NVTX range
  std::vector<std::uint8_t> cubin;   // the compiled module image
  std::string kernel_name;           // lowered (mangled) name in the cubin
  LaunchGeometry geometry;
  std::vector<ArgSpec> args;         // in kernel-parameter order
  bool verify = false;               // compare outputs with the engine's expected outputs
  Tolerance tolerance;
  bool capture_outputs = false;      // return the outputs (to become the reference)
  bool measure = true;               // false: one verified/captured run, no timing
  MeasureOptions measure_options;
  double timeout_s = 0;              // per launch batch; 0: derived from the best time so far
};

struct Result {
  Status status = Status::Ok;
  std::string reason;                // "" for ok
  Timing timing;                     // when status is Ok and the job measured
  Resources resources;               // when the kernel loaded
  Sensors sensors;                   // NVML reading right after the measurement
  std::optional<Mismatch> mismatch;  // when status is WrongResult because of an element
  std::vector<HostBuffer> outputs;   // when capture_outputs and the run succeeded
  double wall_ms = 0;                // the whole job, as the parent saw it
  // Phases as the worker timed them (host wall clock, each ending in a sync):
  double load_ms = 0;                // module load, function lookup, attributes
  double verify_ms = 0;              // poison/restore, the checked run, the compare
  double benchmark_ms = 0;           // warm-up and timed samples
};

// The worker's first message: whether it found a driver and which devices.
struct Ready {
  DriverState state = DriverState::NoDriver;
  std::string message;
  std::vector<DeviceInfo> devices;
  int gpu = -1;                      // the device it opened, -1: none (listing only)
};

enum class MessageType : std::uint32_t {
  Ready = 1,     // worker -> parent, once
  Job = 2,       // parent -> worker
  Expected = 3,  // parent -> worker: the reference outputs for verification
  Shutdown = 4,  // parent -> worker
  Progress = 5,  // worker -> parent: a batch of `launches` starts now (0: set-up work)
  Result = 6,    // worker -> parent, ends a job; carries whether the worker now exits
  // The compile pool's children (tuner/compile_pool.h) speak on their own socket:
  CompileSetup = 7,  // parent -> compile child, once: its CompilerOptions
  CompileReady = 8,  // compile child -> parent, once: set up, waiting for requests
  CompileJob = 9,    // parent -> compile child: one CompileRequest
  CompileDone = 10,  // compile child -> parent: the CompileReply to the last CompileJob
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

// A compile child's answer: the CompileResult, or the ktune::Error that
// Compiler::compile threw for a problem of the whole run (an unreadable source),
// to be rethrown in the parent. A crash of the child has no reply: the parent
// sees the socket close.
struct CompileReply {
  CompileResult result;
  bool threw = false;
  Error::Kind error_kind = Error::Kind::Failed;
  std::string error_message;
  SourceLocation error_where;
};

std::vector<std::uint8_t> encode(const CompilerOptions& options);
std::vector<std::uint8_t> encode(const CompileRequest& request);
std::vector<std::uint8_t> encode(const CompileReply& reply);
CompilerOptions decode_compiler_options(const std::vector<std::uint8_t>& payload);
CompileRequest decode_compile_request(const std::vector<std::uint8_t>& payload);
CompileReply decode_compile_reply(const std::vector<std::uint8_t>& payload);

// Whole-message I/O on a blocking stream socket. send_message returns false
// when the peer is gone (no SIGPIPE); receive_message returns nullopt on EOF
// and throws Error on a malformed frame.
bool send_message(int fd, MessageType type, const std::vector<std::uint8_t>& payload);
std::optional<Message> receive_message(int fd);

}  // namespace ktune::gpu
