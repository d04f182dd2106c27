#include "tuner/gpu/engine.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tuner/base/worker_program.h"
#include "tuner/gpu/worker.h"

namespace ktune::gpu {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

Ready failure(std::string message) {
  Ready r;
  r.state = DriverState::Unusable;
  r.message = std::move(message);
  return r;
}

// Waits until fd is readable or the time is up; false on time-out.
bool wait_readable(int fd, double timeout_s) {
  const auto until = Clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    double left_ms = std::chrono::duration<double, std::milli>(until - Clock::now()).count();
    if (left_ms <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(std::min(left_ms + 1, 1e9)));
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) return true;  // let the read report the error
  }
}

constexpr const char* kWorkerVariable = "KTUNE_GPU_WORKER";


// Starts a worker for `gpu` and waits for its Ready message. On success pid
// and fd are the worker's; on failure the child is gone and both are -1.
// fork + exec, not fork alone: this process may hold an initialised CUDA
// driver without ever asking for one (NVRTC loads libcuda.so.1 and calls
// cuInit), and a forked copy of that state fails cuInit with
// CUDA_ERROR_NOT_INITIALIZED. A fresh image of this same binary has none.
Ready fork_worker(int gpu, double timeout_s, pid_t& pid, int& fd) {
  pid = -1;
  fd = -1;
  const std::string program = worker_program();
  if (program.empty()) return failure(std::string("cannot find this program: ") + std::strerror(errno));
  const char* exe = program.c_str();
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return failure(std::string("socketpair: ") + std::strerror(errno));
  // Everything the child needs is built before fork: after it, only
  // async-signal-safe calls until exec.
  std::string setting = std::string(kWorkerVariable) + "=" + std::to_string(sv[1]) + ":" +
                        std::to_string(gpu);
  std::vector<char*> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, kWorkerVariable, std::strlen(kWorkerVariable)) != 0) env.push_back(*e);
  env.push_back(setting.data());
  env.push_back(nullptr);
  char name[] = "ktune-gpu-worker";
  char* argv[] = {name, nullptr};
  std::fflush(nullptr);  // nothing buffered may be written twice
  pid_t child = ::fork();
  if (child < 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    return failure(std::string("fork: ") + std::strerror(errno));
  }
  if (child == 0) {
    ::fcntl(sv[1], F_SETFD, 0);          // this end survives exec
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the tuning process
    ::signal(SIGINT, SIG_IGN);           // Ctrl-C is the parent's to handle,
    ::signal(SIGTERM, SIG_IGN);          // and Slurm's SIGTERM to the whole step
    ::signal(SIGPIPE, SIG_IGN);
    ::execve(exe, argv, env.data());
    ::_exit(127);
  }
  ::close(sv[1]);
  auto give_up = [&](std::string why) {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    ::close(sv[0]);
    return failure(std::move(why));
  };
  if (!wait_readable(sv[0], timeout_s)) return give_up("the GPU worker did not start in time");
  std::optional<Message> m;
  try {
    m = receive_message(sv[0]);
  } catch (const Error& e) {
    return give_up(e.message());
  }
  if (!m || m->type != MessageType::Ready) return give_up("the GPU worker ended during start-up");
  pid = child;
  fd = sv[0];
  return decode_ready(m->payload);
}

void shut_down(pid_t pid, int fd) {
  send_message(fd, MessageType::Shutdown, {});
  // A worker stuck in a kernel cannot read the request: give it a moment only.
  char byte;
  if (wait_readable(fd, 2.0)) (void)!::read(fd, &byte, 1);
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  ::close(fd);
}

Result failed(Status status, std::string reason) {
  Result r;
  r.status = status;
  r.reason = std::move(reason);
  return r;
}

}  // namespace

DeviceProbe probe_devices() {
  pid_t pid;
  int fd;
  Ready r = fork_worker(-1, 120, pid, fd);
  if (pid >= 0) shut_down(pid, fd);
  return DeviceProbe{r.state, r.message, std::move(r.devices)};
}

Engine::Started Engine::start(int gpu, EngineOptions options) {
  Started s;
  std::unique_ptr<Engine> engine(new Engine(gpu, options));
  Ready r = engine->spawn();
  s.state = r.state;
  s.message = r.message;
  if (r.state == DriverState::Ready && engine->pid_ >= 0) {
    s.engine = std::move(engine);
  } else if (s.message.empty()) {
    s.message = "GPU " + std::to_string(gpu) + " could not be opened";
  }
  return s;
}

Ready Engine::spawn() {
  Ready r = fork_worker(gpu_, options_.setup_timeout_s, pid_, fd_);
  if (pid_ >= 0 && (r.state != DriverState::Ready || r.gpu != gpu_)) {
    stop_worker(true);
    if (r.state == DriverState::Ready) r.state = DriverState::Unusable;
    return r;
  }
  if (pid_ >= 0) devices_ = r.devices;
  worker_has_expected_ = false;
  return r;
}

Engine::~Engine() {
  if (pid_ >= 0) stop_worker(true);
}

void Engine::stop_worker(bool graceful) {
  if (pid_ < 0) return;
  if (graceful) {
    shut_down(pid_, fd_);
  } else {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    ::close(fd_);
    ++restarts_;
  }
  pid_ = -1;
  fd_ = -1;
  worker_has_expected_ = false;
}

std::string Engine::reap() {
  int status = 0;
  ::waitpid(pid_, &status, 0);
  ::close(fd_);
  pid_ = -1;
  fd_ = -1;
  worker_has_expected_ = false;
  ++restarts_;
  return (WIFSIGNALED(status) ? "killed by " : "") + describe_exit(status);
}

void Engine::set_expected(std::vector<HostBuffer> expected) {
  expected_ = std::move(expected);
  reference_.reset();
  worker_has_expected_ = false;
}

Result Engine::set_reference(Job reference) {
  reference.verify = false;
  reference.capture_outputs = false;
  reference.keep_as_expected = true;
  reference.measure = false;
  reference.profile = false;
  expected_.clear();
  reference_ = std::move(reference);
  worker_has_expected_ = false;
  Result r = run(*reference_);
  worker_has_expected_ = r.status == Status::Ok && pid_ >= 0;
  return r;
}

double Engine::batch_timeout_s(const Job& job, int launches) const {
  if (job.timeout_s > 0) return job.timeout_s;
  if (best_ms_ <= 0) return std::max(options_.first_timeout_s, options_.min_timeout_s);
  return std::max(options_.min_timeout_s,
                  options_.timeout_factor * best_ms_ * std::max(launches, 1) / 1000.0);
}

Result Engine::run(const Job& job) {
  const auto t0 = Clock::now();
  for (int attempt = 0;; ++attempt) {
    if (pid_ < 0) {
      Ready r = spawn();
      if (pid_ < 0) throw Error::failed("cannot restart the GPU worker: " + r.message);
    }
    bool sent = true;
    if (job.verify && !worker_has_expected_ && reference_) {
      // A fresh worker: the reference run again, in it, first.
      Result ref = run(*reference_);
      if (ref.status != Status::Ok) {
        ref.reason = "the reference run in a fresh GPU worker failed: " + ref.reason;
        return ref;
      }
      if (pid_ < 0) return failed(Status::RuntimeError, "the GPU worker exited after the reference run");
      worker_has_expected_ = true;
    } else if (job.verify && !worker_has_expected_) {
      sent = send_message(fd_, MessageType::Expected, encode(expected_));
      worker_has_expected_ = sent;
    }
    sent = sent && send_message(fd_, MessageType::Job, encode(job));
    if (sent) break;
    // The worker died between jobs (nothing of this job ran): one fresh try.
    std::string how = reap();
    if (attempt > 0) return failed(Status::RuntimeError, "the GPU worker died: " + how);
  }
  Result r = await_result(job);
  r.wall_ms = seconds_since(t0) * 1000.0;
  if (r.status == Status::Ok && job.measure && r.timing.median_ms > 0)
    best_ms_ = best_ms_ > 0 ? std::min(best_ms_, r.timing.median_ms) : r.timing.median_ms;
  return r;
}

Result Engine::await_result(const Job& job) {
  double limit_s = options_.setup_timeout_s;
  int batch = 0;
  auto deadline = Clock::now() + std::chrono::duration<double>(limit_s);
  for (;;) {
    if (options_.cancel.requested()) {
      stop_worker(false);
      Result r = failed(Status::RuntimeError, "interrupted");
      r.interrupted = true;
      return r;
    }
    double left_ms = std::chrono::duration<double, std::milli>(deadline - Clock::now()).count();
    if (left_ms <= 0) {
      stop_worker(false);
      std::string what = batch > 0 ? "a batch of " + std::to_string(batch) + " launch(es)"
                                   : "set-up work (module load, arguments, copies)";
      char secs[32];
      std::snprintf(secs, sizeof secs, "%.3g s", limit_s);
      return failed(Status::Timeout, what + " did not finish within " + secs +
                                         "; the kernel is taken to hang");
    }
    pollfd p{fd_, POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(std::clamp(left_ms + 1, 1.0, 100.0)));
    if (rc == 0 || (rc < 0 && errno == EINTR)) continue;
    try {
      std::optional<Message> m = receive_message(fd_);
      if (!m) return failed(Status::RuntimeError, "the GPU worker died: " + reap());
      if (m->type == MessageType::Progress) {
        batch = decode_progress(m->payload);
        limit_s = batch > 0 ? batch_timeout_s(job, batch) : options_.setup_timeout_s;
        deadline = Clock::now() + std::chrono::duration<double>(limit_s);
        continue;
      }
      if (m->type != MessageType::Result) throw Error::failed("GPU worker protocol: unexpected message");
      bool exits = false;
      Result r = decode_result(m->payload, &exits);
      if (exits) reap();
      return r;
    } catch (const Error& e) {
      stop_worker(false);
      return failed(Status::RuntimeError, e.message());
    }
  }
}

void serve_if_gpu_worker() {
  const char* spec = std::getenv(kWorkerVariable);
  if (!spec) return;
  char* end = nullptr;
  long fd = std::strtol(spec, &end, 10);
  long gpu = (end && *end == ':') ? std::strtol(end + 1, nullptr, 10) : -1;
  ::unsetenv(kWorkerVariable);
  // Every function of a module is loaded with the module (unless the user
  // chose otherwise): a configuration's first launch then carries no lazy
  // set-up and is a sample like any other (Measurer::measure, ran_before).
  ::setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  worker_main(static_cast<int>(fd), static_cast<int>(gpu));
}

}  // namespace ktune::gpu
