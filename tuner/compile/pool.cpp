#include "tuner/compile/pool.h"

#include <nvtx3/nvToolsExt.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "ktune/error.h"
#include "tuner/base/worker_program.h"
#include "tuner/compile/messages.h"

namespace ktune {
namespace {

using Clock = std::chrono::steady_clock;
using compile_wire::MessageType;

constexpr const char* kWorkerVariable = "KTUNE_COMPILE_WORKER";
constexpr const char* kInProcessVariable = "KTUNE_COMPILE_IN_PROCESS";

// How long a fresh child may take to exec and say it is ready; a loaded
// machine can be slow to start a large binary.
constexpr double kStartTimeoutS = 60;
// How often a slot waiting on its child looks at the pool's stop flag.
constexpr int kPollMs = 100;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

bool env_true(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

std::optional<std::string> slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

compile_wire::Reply reply_of(const Compiler& compiler, const CompileRequest& request) {
  compile_wire::Reply reply;
  // A "compile" range per configuration in Nsight Systems' timeline of the
  // compile child (header-only nvtx3: nothing unless a tool injects itself).
  nvtxRangePushA("compile");
  struct Pop {
    ~Pop() { nvtxRangePop(); }
  } pop;
  try {
    reply.result = compiler.compile(request);
  } catch (const Error& e) {
    reply.threw = true;
    reply.error_kind = e.kind();
    reply.error_message = e.message();
    reply.error_where = e.where();
  } catch (const std::exception& e) {
    reply.threw = true;
    reply.error_message = std::string("compiler: ") + e.what();
  }
  return reply;
}

compile_wire::Reply timed_out(double limit_s, double ms) {
  compile_wire::Reply reply;
  reply.result.log = "compile timed out after " + std::to_string(static_cast<long long>(limit_s)) +
                     " s (the compile time limit); its process was killed\n";
  reply.result.compile_ms = ms;
  return reply;
}

compile_wire::Reply died(const std::string& how, double ms) {
  compile_wire::Reply reply;
  reply.result.log = "compiler process died: " + how + "\n";
  reply.result.compile_ms = ms;
  return reply;
}

// A compile child: set up a Compiler as the parent says, then answer one
// request at a time until the parent closes the socket. Never returns.
[[noreturn]] void compile_worker_main(int fd, const CompileChildHooks& hooks) {
  try {
    std::optional<compile_wire::Message> setup = compile_wire::receive_message(fd);
    if (!setup || setup->type != MessageType::Setup) ::_exit(setup ? 2 : 0);
    const Compiler compiler(compile_wire::decode_compiler_options(setup->payload));
    if (!compile_wire::send_message(fd, MessageType::Ready, {})) ::_exit(0);
    for (;;) {
      std::optional<compile_wire::Message> m = compile_wire::receive_message(fd);
      if (!m || m->type == MessageType::Shutdown) ::_exit(0);
      if (m->type != MessageType::Job) ::_exit(2);
      const CompileRequest request = compile_wire::decode_compile_request(m->payload);
      if (hooks.before_compile) hooks.before_compile(request);
      if (!compile_wire::send_message(fd, MessageType::Done, compile_wire::encode(reply_of(compiler, request)))) ::_exit(0);
    }
  } catch (...) {
    ::_exit(2);  // a malformed message: the parent reports this child's death
  }
}

}  // namespace

void serve_if_compile_child(const CompileChildHooks& hooks) {
  const char* spec = std::getenv(kWorkerVariable);
  if (!spec) return;
  const int fd = std::atoi(spec);
  ::unsetenv(kWorkerVariable);
  compile_worker_main(fd, hooks);
}

// What a taker gets: whether the result is in, and the reply.
struct CompilePool::Done {
  bool ready = false;
  compile_wire::Reply reply;
};

// One worker slot: its child process (or, after a failed start, this
// process). Used by its own slot thread only.
class CompilePool::Slot {
 public:
  Slot(std::string exe, CompilerOptions options, bool in_process)
      : exe_(std::move(exe)), options_(std::move(options)), in_process_(in_process) {}
  ~Slot() { stop_child(); }

  bool in_process() const { return in_process_; }

  // Starts the child, or goes in-process when none can start. Returns false
  // in the latter case.
  bool ensure_child() {
    if (in_process_ || pid_ >= 0) return !in_process_;
    if (!start_child()) in_process_ = true;
    return !in_process_;
  }

  // The child's reply, or a "died" result. nullopt when the pool stopped
  // while waiting. `local` compiles in-process slots' requests.
  std::optional<compile_wire::Reply> compile(const CompileRequest& request, const Compiler& local,
                                           const std::atomic<bool>& stopping, std::atomic<int>& deaths,
                                           double time_limit_s, std::atomic<int>& timeouts) {
    if (!ensure_child()) return reply_of(local, request);
    const auto t0 = Clock::now();
    const std::vector<std::uint8_t> payload = compile_wire::encode(request);
    if (!compile_wire::send_message(fd_, MessageType::Job, payload)) {
      // The child died between requests (nothing of this one ran): one fresh try.
      reap();
      ++deaths;
      if (!ensure_child()) return reply_of(local, request);
      if (!compile_wire::send_message(fd_, MessageType::Job, payload)) {
        const std::string how = reap();
        ++deaths;
        return died(how, ms_since(t0));
      }
    }
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      const int rc = ::poll(&p, 1, kPollMs);
      if (stopping.load()) {
        stop_child();
        return std::nullopt;
      }
      if (rc == 0 || (rc < 0 && errno == EINTR)) {
        if (time_limit_s > 0 && ms_since(t0) > time_limit_s * 1000) {
          stop_child();  // the next request starts a fresh child
          ++timeouts;
          return timed_out(time_limit_s, ms_since(t0));
        }
        continue;
      }
      try {
        std::optional<compile_wire::Message> m = compile_wire::receive_message(fd_);
        if (!m) {
          const std::string how = reap();
          ++deaths;
          return died(how, ms_since(t0));
        }
        if (m->type != MessageType::Done) throw Error::failed("compile worker protocol: unexpected message");
        return compile_wire::decode_reply(m->payload);
      } catch (const Error& e) {
        stop_child();
        ++deaths;
        return died(e.message(), ms_since(t0));
      }
    }
  }

 private:
  // fork + exec of this program with KTUNE_COMPILE_WORKER=<fd>, then the
  // set-up handshake. Everything the child needs is built before fork: after
  // it, only async-signal-safe calls until exec (other threads may hold locks).
  bool start_child() {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return false;
    std::string setting = std::string(kWorkerVariable) + "=" + std::to_string(sv[1]);
    std::vector<char*> env;
    for (char** e = environ; *e; ++e)
      if (std::strncmp(*e, "KTUNE_COMPILE_WORKER=", 21) != 0 && std::strncmp(*e, "KTUNE_GPU_WORKER=", 17) != 0)
        env.push_back(*e);
    env.push_back(setting.data());
    env.push_back(nullptr);
    char name[] = "ktune-compile-worker";
    char* argv[] = {name, nullptr};
    const pid_t child = ::fork();
    if (child < 0) {
      ::close(sv[0]);
      ::close(sv[1]);
      return false;
    }
    if (child == 0) {
      ::fcntl(sv[1], F_SETFD, 0);          // this end survives exec
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the slot thread
      // Ctrl-C and SIGTERM (Slurm's, to every process) are the parent's: a compile
      // killed by one would be reported as a compile error of its configuration.
      ::signal(SIGINT, SIG_IGN);
      ::signal(SIGTERM, SIG_IGN);
      ::signal(SIGPIPE, SIG_IGN);
      ::execve(exe_.c_str(), argv, env.data());
      ::_exit(127);
    }
    ::close(sv[1]);
    pid_ = child;
    fd_ = sv[0];
    bool ready = compile_wire::send_message(fd_, MessageType::Setup, compile_wire::encode(options_));
    if (ready) {
      pollfd p{fd_, POLLIN, 0};
      int rc;
      while ((rc = ::poll(&p, 1, static_cast<int>(kStartTimeoutS * 1000))) < 0 && errno == EINTR) {
      }
      ready = rc > 0;
    }
    try {
      std::optional<compile_wire::Message> m;
      if (ready) m = compile_wire::receive_message(fd_);
      ready = m && m->type == MessageType::Ready;
    } catch (const Error&) {
      ready = false;
    }
    if (!ready) stop_child();
    return ready;
  }

  std::string reap() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    ::close(fd_);
    pid_ = -1;
    fd_ = -1;
    return describe_exit(status);
  }

  void stop_child() {
    if (pid_ < 0) return;
    ::kill(pid_, SIGKILL);  // idle or in the middle of a compile: nothing to save
    reap();
  }

  std::string exe_;
  CompilerOptions options_;
  bool in_process_;
  pid_t pid_ = -1;
  int fd_ = -1;
};

CompilePool::CompilePool(CompilePoolOptions options) : options_(std::move(options)), compiler_(options_.compiler) {
  in_process_ = options_.in_process || env_true(kInProcessVariable);
  unsigned n = options_.workers ? options_.workers : usable_cpus();
  n = std::max(1u, n);
  // The children get what this process resolved (cache folder, CUDA headers),
  // so both always agree whatever the children's environment says.
  CompilerOptions resolved = options_.compiler;
  if (compiler_.cache()) resolved.cache_dir = compiler_.cache()->dir();
  resolved.cuda_include_dir = compiler_.cuda_include_dir();
  std::string exe;
  if (!in_process_) {
    exe = worker_program();
    if (exe.empty()) in_process_ = true;
  }
  if (!options_.host_slots_path.empty())
    host_slots_.emplace(options_.host_slots_path, options_.host_slots ? options_.host_slots : HostSlots::host_cpus());
  for (unsigned i = 0; i < n; ++i) slots_.push_back(std::make_unique<Slot>(exe, resolved, in_process_));
  for (auto& slot : slots_) threads_.emplace_back([this, s = slot.get()] { serve(*s); });
}

CompilePool::~CompilePool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
    queued_.clear();
  }
  work_.notify_all();
  for (auto& t : threads_) t.join();
  slots_.clear();  // kills and reaps the children
}

void CompilePool::serve(Slot& slot) {
  // Children start at once, so the first batch does not pay for exec.
  if (!slot.in_process() && !slot.ensure_child()) ++fallbacks_;
  for (;;) {
    Job job;
    std::optional<HostSlots::Held> held;  // the host's slot, for this job
    {
      std::unique_lock lock(mutex_);
      work_.wait(lock, [&] { return stopping_.load() || !queue_.empty(); });
      if (stopping_) return;
    }
    if (host_slots_ && !(held = host_slots_->acquire(stopping_))) return;  // stopping
    {
      std::unique_lock lock(mutex_);
      if (stopping_) return;
      if (queue_.empty()) continue;  // taken by another slot meanwhile
      auto first = queue_.begin();
      job = std::move(first->second);
      queued_.erase(job.ticket);
      queue_.erase(first);
    }
    const bool was_in_process = slot.in_process();
    const auto started = std::chrono::steady_clock::now();
    std::optional<compile_wire::Reply> reply = slot.compile(job.request, compiler_, stopping_, deaths_, options_.time_limit_s, timeouts_);
    if (!was_in_process && slot.in_process()) ++fallbacks_;
    if (!reply) return;  // stopping
    {
      std::lock_guard lock(counts_mutex_);
      counts_.compile_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      counts_.compiled += !reply->result.deferred;
      counts_.same_code += reply->result.same_code;
    }
    if (reply->result.deferred) {
      // The same code is being compiled by another slot: take other work and
      // come back to this one (once; then it waits, for an empty queue would
      // only bring it straight back). Behind everything queued now.
      std::lock_guard lock(mutex_);
      if (pending_.count(job.ticket)) {
        job.request.defer_if_busy = false;
        enqueue(std::move(job), queue_.empty() ? 0 : queue_.rbegin()->first.first);
        work_.notify_one();
      }
      continue;
    }
    finish(job.ticket, Done{true, std::move(*reply)});
  }
}

void CompilePool::finish(Ticket ticket, Done done) {
  {
    std::lock_guard lock(mutex_);
    auto it = pending_.find(ticket);
    if (it == pending_.end()) return;  // cancelled meanwhile
    *it->second = std::move(done);
  }
  done_.notify_all();
}

void CompilePool::enqueue(Job job, Priority priority) {
  const QueueKey key{priority, next_sequence_++};
  queued_[job.ticket] = key;
  queue_.emplace(key, std::move(job));
}

void CompilePool::dequeue_if(const std::function<bool(Ticket)>& drop) {
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (!drop(it->second.ticket)) {
      ++it;
      continue;
    }
    queued_.erase(it->second.ticket);
    it = queue_.erase(it);
  }
}

void CompilePool::prioritize(Ticket ticket, Priority priority) {
  std::lock_guard lock(mutex_);
  auto where = queued_.find(ticket);
  if (where == queued_.end() || where->second.first == priority) return;
  auto node = queue_.extract(where->second);
  node.key() = QueueKey{priority, next_sequence_++};
  where->second = node.key();
  queue_.insert(std::move(node));
}

CompilePool::Ticket CompilePool::submit(CompileRequest request, Priority priority) {
  // A cache hit is answered here: reading the entry costs less than handing
  // the request to a child, and it never waits behind a cold compile.
  std::optional<Done> hit;
  if (const CubinCache* cache = compiler_.cache()) {
    std::optional<std::string> source;
    if (!request.source.empty()) {
      source = request.source;
    } else if (!request.source_path.empty()) {
      source = slurp(request.source_path);
      if (!source) throw Error::bad_input("cannot read kernel source", {request.source_path.string()});
    }
    // compile() looks the entry up again (a second ~50 us read) so that its
    // result is exactly an in-process compile's: resources, occupancy, timing.
    if (source && cache->load(compile_cache_key(request, *source))) hit = Done{true, reply_of(compiler_, request)};
  }
  std::lock_guard lock(mutex_);
  const Ticket ticket = next_ticket_++;
  if (hit) {
    std::lock_guard counted(counts_mutex_);  // never held when mutex_ is taken
    ++counts_.from_cache;
    pending_[ticket] = std::make_unique<Done>(std::move(*hit));
    return ticket;
  }
  pending_[ticket] = std::make_unique<Done>();
  request.defer_if_busy = true;
  enqueue({ticket, std::move(request)}, priority);
  work_.notify_one();
  return ticket;
}

std::optional<std::pair<CompilePool::Ticket, CompileResult>> CompilePool::wait_for(
    std::span<const Ticket> tickets, std::optional<std::chrono::steady_clock::time_point> until) {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (options_.cancel.requested()) throw Cancelled{};
    for (const Ticket t : tickets) {
      auto it = pending_.find(t);
      if (it == pending_.end()) throw Error::failed("internal: compile ticket " + std::to_string(t) + " is not pending");
      if (!it->second->ready) continue;
      compile_wire::Reply reply = std::move(it->second->reply);
      pending_.erase(it);
      if (reply.threw) throw Error(reply.error_kind, reply.error_message, reply.error_where);
      return std::pair{t, std::move(reply.result)};
    }
    if (until && std::chrono::steady_clock::now() >= *until) return std::nullopt;
    // Bounded waits so that Ctrl-C is noticed without a notification.
    done_.wait_for(lock, std::chrono::milliseconds(50));
  }
}

bool CompilePool::ready(Ticket ticket) {
  std::lock_guard lock(mutex_);
  auto it = pending_.find(ticket);
  return it != pending_.end() && it->second->ready;
}

CompileResult CompilePool::take(Ticket ticket) { return wait_for({&ticket, 1})->second; }

std::pair<CompilePool::Ticket, CompileResult> CompilePool::take_any(std::vector<Ticket>& tickets) {
  auto out = *wait_for(tickets);
  tickets.erase(std::find(tickets.begin(), tickets.end(), out.first));
  return out;
}

std::optional<std::pair<CompilePool::Ticket, CompileResult>> CompilePool::take_any_for(
    std::vector<Ticket>& tickets, std::chrono::milliseconds wait) {
  auto out = wait_for(tickets, std::chrono::steady_clock::now() + wait);
  if (out) tickets.erase(std::find(tickets.begin(), tickets.end(), out->first));
  return out;
}

void CompilePool::cancel() {
  std::lock_guard lock(mutex_);
  queue_.clear();
  queued_.clear();
  pending_.clear();
}

void CompilePool::cancel(std::span<const Ticket> tickets) {
  std::lock_guard lock(mutex_);
  for (const Ticket t : tickets) pending_.erase(t);
  dequeue_if([&](Ticket t) { return std::find(tickets.begin(), tickets.end(), t) != tickets.end(); });
}

void CompilePool::release(std::span<const Ticket> tickets) {
  std::lock_guard lock(mutex_);
  for (const Ticket t : tickets) pending_.erase(t);  // finish() drops what has none
}

std::vector<CompileResult> CompilePool::compile(std::span<const CompileRequest> requests) {
  std::vector<CompileResult> out;
  std::vector<Ticket> tickets;
  try {
    for (const CompileRequest& r : requests) tickets.push_back(submit(r));
    for (const Ticket t : tickets) out.push_back(take(t));
  } catch (...) {
    cancel(tickets);
    throw;
  }
  return out;
}

}  // namespace ktune
