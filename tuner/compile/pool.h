// CompilePool: compiles kernel configurations ahead of the GPU, in parallel.
//
// Why processes: NVRTC serialises much of its work inside one process (on the
// 16-core GPU host one process's compiles scaled 4.6x over 16 threads: 67
// compiles/s, against 234/s from 16 processes; bench/micro/compile_bench.cpp). So
// each worker slot of the pool is a thread here that drives a child process:
// a fresh exec of this same program which, finding KTUNE_COMPILE_WORKER in its
// environment, serves compile requests from the first line of its main()
// (serve_if_compile_child, called through enter_worker_if_requested in
// tuner/gpu/worker.h; like the GPU worker, and for the same reason: this
// process may hold CUDA driver state that a forked copy cannot use). The child runs the normal
// Compiler with the same cubin cache, so results and cache entries are those
// of an in-process compile.
//
//  * A child that dies (NVRTC can crash on odd code) is data: that request's
//    result is ok == false with "compiler process died: signal 11 ..." as its
//    log (never cached, so the next run tries again), and the slot starts a
//    fresh child for its next request.
//  * A child that runs past CompilePoolOptions::time_limit_s is killed: that
//    request fails with "compile timed out after N s" (never cached either)
//    and counts in timeouts(), not deaths().
//  * Configurations with the same code (the second cache level, compiler.h)
//    are compiled once: a request whose code another slot is compiling right
//    now goes to the back of the queue once, so its slot takes other work,
//    and is then answered from the cache (or waits for that compile).
//  * Cache hits are answered in submit(), in this process (a lookup costs
//    ~50 us; a round trip to a busy child could wait behind a cold compile).
//  * In-process fallback: with KTUNE_COMPILE_IN_PROCESS=1 (or
//    CompilePoolOptions::in_process) the slots compile on their own threads;
//    a slot whose child cannot be started does so too. NVRTC crashes then
//    take this process down: nothing isolates them.
//  * Requests are compiled in the order of their priority (lower first; the
//    caller's ranking: a configuration's position in the strategy's batch,
//    then what it expects to propose next), submission order among equals, so
//    a slot that frees up takes what the GPU will measure soonest. A request
//    that is no longer wanted is dropped by cancel() before it starts.
//  * Results are taken in any order; a ticket is taken once.
//  * With CompilePoolOptions::host_slots_path, a slot compiles only while it
//    holds one of the host's slots (HostSlots), shared with the other
//    processes that name the file: the ranks of an MPI job on one host then
//    share its CPUs, each pool as large as the host. A slot waits for one
//    before it takes a job, so the job stays queued (reordered, cancelled).
//
// Several threads may share a pool (the GPUs of one run), each submitting
// and taking its own tickets; cancel(tickets) forgets only those. The slots
// are internal.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "search/expr/cancel.h"
#include "tuner/base/cpus.h"
#include "tuner/compile/compiler.h"
#include "tuner/compile/host_slots.h"

namespace ktune {

// What a compile child does besides compiling, for tests to replace (a seam in
// the manner of leveldb's Env; the production program sets none): called with
// each request before it is compiled, it may crash or hang the child as NVRTC
// sometimes does.
struct CompileChildHooks {
  std::function<void(const CompileRequest&)> before_compile;
};

// In a process a CompilePool started as a compile child: serves requests until
// the pool closes the socket, then exits; never returns. Elsewhere it returns
// at once.
void serve_if_compile_child(const CompileChildHooks& hooks = {});

struct CompilePoolOptions {
  unsigned workers = 0;      // 0: one per usable CPU (usable_cpus())
  CompilerOptions compiler;  // cache and CUDA headers, in this process and in the children
  bool in_process = false;   // threads instead of child processes
  // Once requested, waiting for a result throws Cancelled (search/expr/cancel.h).
  Cancel::Token cancel;
  // A compile child that has not answered within this many seconds is killed
  // and its request fails with "compile timed out" (NVRTC can loop forever on
  // pathological templates); 0 = no limit. In-process compiles (a thread
  // cannot be killed) are not limited.
  double time_limit_s = kDefaultCompileTimeLimitS;
  static constexpr double kDefaultCompileTimeLimitS = 300;
  // A budget of compiles at once shared with every pool of the host that
  // names the same file (tuner/compile/host_slots.h): a slot of this pool
  // compiles only while it holds one of the host's. Empty path: none.
  std::string host_slots_path;
  unsigned host_slots = 0;  // 0: the host's online CPUs
};

class CompilePool {
 public:
  using Ticket = std::uint64_t;
  // Lower compiles first.
  using Priority = std::int64_t;

  explicit CompilePool(CompilePoolOptions options = {});
  ~CompilePool();  // stops the children, also in the middle of a compile
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  // Queues a request and returns at once (after the cache lookup). Throws
  // Error::bad_input for an unreadable source, like Compiler::compile.
  Ticket submit(CompileRequest request, Priority priority = 0);
  // Moves a queued request to `priority`; one already compiling or done is
  // left as it is.
  void prioritize(Ticket ticket, Priority priority);
  // Whether take(ticket) would answer at once (its compile has ended).
  bool ready(Ticket ticket);
  // Waits for the result of `ticket`.
  CompileResult take(Ticket ticket);
  // Waits for whichever of `tickets` finishes first and removes it from them.
  std::pair<Ticket, CompileResult> take_any(std::vector<Ticket>& tickets);
  // As take_any, waiting at most `wait`: nullopt when none finished by then.
  std::optional<std::pair<Ticket, CompileResult>> take_any_for(std::vector<Ticket>& tickets,
                                                               std::chrono::milliseconds wait);
  // Forgets every ticket not taken yet: queued requests are never compiled,
  // the results of running ones are dropped.
  void cancel();
  // Forgets these tickets only (another thread's stay), as cancel() does.
  void cancel(std::span<const Ticket> tickets);
  // Forgets these tickets' results but compiles them still (queued ones
  // too), for the cubin cache: a later request of the same code takes it.
  // One deferred because another slot compiles its code is left to that one.
  void release(std::span<const Ticket> tickets);

  // Compiles a batch; results in the order of `requests`.
  std::vector<CompileResult> compile(std::span<const CompileRequest> requests);

  unsigned workers() const { return static_cast<unsigned>(slots_.size()); }
  // True when compiles run in this process (by choice or because no child could start).
  bool in_process() const { return in_process_ || fallbacks_.load() > 0; }
  int deaths() const { return deaths_.load(); }      // compile children lost so far
  int timeouts() const { return timeouts_.load(); }  // compiles killed at the time limit
  // Every request this pool was given, whoever asked (a batch, what is
  // compiled ahead, a strategy's short list): answered from the cubin cache
  // at submit, or compiled by a slot (of those, reused through the second
  // cache level, Compiler's same code), and the slots' seconds on them.
  struct Counts {
    uint64_t from_cache = 0, compiled = 0, same_code = 0;
    double compile_s = 0;
  };
  Counts counts() const {
    std::lock_guard lock(counts_mutex_);
    return counts_;
  }

 private:
  struct Job {
    Ticket ticket;
    CompileRequest request;
  };
  // The queue's order: priority, then submission.
  using QueueKey = std::pair<Priority, std::uint64_t>;
  struct Done;
  class Slot;

  void serve(Slot& slot);  // a slot thread's loop
  // nullopt once `until` has passed (never without one).
  std::optional<std::pair<Ticket, CompileResult>> wait_for(
      std::span<const Ticket> tickets, std::optional<std::chrono::steady_clock::time_point> until = std::nullopt);
  void finish(Ticket ticket, Done done);
  void enqueue(Job job, Priority priority);  // REQUIRES: mutex_ held
  void dequeue_if(const std::function<bool(Ticket)>& drop);  // REQUIRES: mutex_ held

  CompilePoolOptions options_;
  Compiler compiler_;  // cache lookups, and compiles of in-process slots
  bool in_process_ = false;
  std::atomic<int> fallbacks_{0};
  std::atomic<int> deaths_{0};
  std::atomic<int> timeouts_{0};
  mutable std::mutex counts_mutex_;
  Counts counts_;

  std::mutex mutex_;
  std::condition_variable work_;  // slots wait for jobs
  std::condition_variable done_;  // takers wait for results
  std::map<QueueKey, Job> queue_;
  std::unordered_map<Ticket, QueueKey> queued_;  // where each queued ticket is
  std::uint64_t next_sequence_ = 0;
  std::unordered_map<Ticket, std::unique_ptr<Done>> pending_;  // submitted, not taken
  Ticket next_ticket_ = 1;
  std::atomic<bool> stopping_{false};
  std::vector<std::unique_ptr<Slot>> slots_;
  std::optional<HostSlots> host_slots_;
  std::vector<std::thread> threads_;
};

}  // namespace ktune
