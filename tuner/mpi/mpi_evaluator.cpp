#include "tuner/mpi/mpi_evaluator.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <iostream>
#include <mutex>
#include <thread>

#include "ktune/error.h"
#include "search/expr/cancel.h"
#include "tuner/base/wire.h"

namespace ktune::mpi {

namespace {

// The messages, each with its one field list (tuner/base/wire.h).
struct ReadyMsg {
  bool ok = false;
  int32_t error_kind = 0;
  std::string error, host, spec_hash, device;
};
struct ChunkMsg {
  uint64_t chunk = 0;
  std::vector<std::pair<uint64_t, Config>> items;  // (index in rank 0's batch, value indices)
  std::vector<Config> ahead;                       // to compile while the items are measured
};
struct StopMsg {
  uint64_t chunk = 0;
};
// A Measured without its configuration: rank 0 has it.
struct ResultMsg {
  uint64_t chunk = 0;
  uint64_t index = 0;
  Measured m;
};
struct DoneMsg {
  uint64_t chunk = 0;
  bool ok = true;
  int32_t error_kind = 0;
  std::string error;
};

template <class A> void fields(A& a, ReadyMsg& r) { a(r.ok, r.error_kind, r.error, r.host, r.spec_hash, r.device); }
template <class A> void fields(A& a, ChunkMsg& c) { a(c.chunk, c.items, c.ahead); }
template <class A> void fields(A& a, StopMsg& s) { a(s.chunk); }
template <class A> void fields(A& a, DoneMsg& d) { a(d.chunk, d.ok, d.error_kind, d.error); }
template <class A> void fields(A& a, ResultMsg& r) {
  db::Evaluation& e = r.m.eval;
  a(r.chunk, r.index, r.m.cost_s, r.m.missing);
  a(e.status, e.reason, e.log, e.time_ms, e.min_ms, e.mean_ms, e.stddev_ms, e.sample_count, e.samples, e.metrics,
    e.timestamp);
  // Every figure of the table the store walks, so a new one travels too.
  for (const db::EvaluationField& f : db::evaluation_fields()) {
    if (f.real) a(e.*f.real);
    else a(e.*f.integer);
  }
}

Error::Kind kind_of(int32_t k) { return k == int32_t(Error::Kind::BadInput) ? Error::Kind::BadInput : Error::Kind::Failed; }

std::string host_name() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

}  // namespace

// Rank 0's own evaluator on a thread, so that the MPI loop goes on answering
// the other ranks while it measures. Only the MPI thread touches the World.
class MpiEvaluator::LocalThread {
 public:
  struct Event {
    bool done = false;
    size_t index = 0;
    Measured m;
    std::exception_ptr error;
  };

  explicit LocalThread(ConfigEvaluator& e) : e_(e), t_([this] { loop(); }) {}
  ~LocalThread() {
    {
      std::lock_guard lock(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    t_.join();
  }

  void start(std::vector<size_t> indices, std::vector<std::vector<Value>> values,
             std::vector<std::vector<Value>> ahead) {
    {
      std::lock_guard lock(mu_);
      stop_ = false;
      indices_ = std::move(indices);
      values_ = std::move(values);
      ahead_ = std::move(ahead);
      has_job_ = true;
    }
    cv_.notify_all();
  }
  // The chunk in hand stops after the configuration in flight.
  void stop() { stop_ = true; }
  std::optional<Event> take() {
    std::lock_guard lock(mu_);
    if (events_.empty()) return std::nullopt;
    Event e = std::move(events_.front());
    events_.pop_front();
    return e;
  }

 private:
  void loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return quit_ || has_job_; });
      if (quit_) return;
      has_job_ = false;
      lock.unlock();
      Event done;
      done.done = true;
      try {
        if (!ahead_.empty()) e_.compile_ahead(ahead_);
        e_.evaluate(values_, [&](size_t i, const Measured& m) {
          Event ev;
          ev.index = indices_[i];
          ev.m = m;
          std::lock_guard l(mu_);
          events_.push_back(std::move(ev));
          return !stop_.load();
        });
      } catch (...) {
        done.error = std::current_exception();
      }
      lock.lock();
      events_.push_back(std::move(done));
    }
  }

  ConfigEvaluator& e_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<size_t> indices_;
  std::vector<std::vector<Value>> values_, ahead_;
  bool has_job_ = false, quit_ = false;
  std::atomic<bool> stop_{false};
  std::deque<Event> events_;
  std::thread t_;  // last: starts once the rest is built
};

struct MpiEvaluator::Slot {
  bool busy = false;
  uint64_t chunk = 0;
  std::vector<size_t> items;   // the chunk's indices into the batch
  std::vector<bool> reported;  // of them
};

MpiEvaluator::MpiEvaluator(World& world, const Spec& spec, std::unique_ptr<ConfigEvaluator> local)
    : world_(&world), spec_(&spec), local_(std::move(local)), local_offers_(local_->offers()),
      hosts_(static_cast<size_t>(world.size())),
      dispatch_(static_cast<size_t>(world.size())), lost_(static_cast<size_t>(world.size()), false) {
  hosts_[0] = host_name();
  std::optional<Error> problem;
  for (int got = 1; got < world.size(); ++got) {
    const Message m = world.wait();
    const std::string who = "rank " + std::to_string(m.source);
    if (m.tag != Tag::Ready) {
      problem = problem.value_or(Error::failed(who + " spoke before it was ready"));
      continue;
    }
    const ReadyMsg r = wire::read<ReadyMsg>(m.payload);
    hosts_[static_cast<size_t>(m.source)] = r.host;
    const std::string where = who + " (" + r.host + ")";
    if (!r.ok)
      problem = problem.value_or(Error(kind_of(r.error_kind), where + ": " + r.error));
    else if (r.spec_hash != spec.hash)
      problem = problem.value_or(Error::bad_input(where + " read another spec than rank 0 (hash " +
                                                  r.spec_hash.substr(0, 12) + ", rank 0's " +
                                                  spec.hash.substr(0, 12) + "): every rank must read the same files"));
    else if (r.device != local_->device().name)
      problem = problem.value_or(Error::bad_input(where + " measures on " + r.device + ", rank 0 on " +
                                                  local_->device().name +
                                                  ": one run tunes one GPU model; start one job per model"));
  }
  if (problem) {
    shut_down();
    throw *problem;
  }
  thread_ = std::make_unique<LocalThread>(*local_);
}

MpiEvaluator::~MpiEvaluator() {
  thread_.reset();
  shut_down();
}

void MpiEvaluator::shut_down() noexcept {
  if (shut_down_) return;
  shut_down_ = true;
  for (int r = 1; r < world_->size(); ++r) {
    try {
      world_->send(r, Tag::Shutdown, {});
    } catch (const Error&) {
      // The job is ending; a rank that cannot be told is ended by the launcher.
    }
  }
}

// One evaluate() call: the batch's chunks out to the ranks, their results
// in, until every rank is idle again (also after a stop or a failure, so that
// nothing of this batch arrives during the next).
class MpiEvaluator::Round {
 public:
  Round(MpiEvaluator& self, std::span<const std::vector<Value>> configs, const OnMeasured& on_measured)
      : self_(self), configs_(configs), on_measured_(on_measured), slots_(static_cast<size_t>(self.world_->size())) {}

  void run() {
    const size_t ranks = slots_.size();
    Backoff backoff;
    for (;;) {
      // The other ranks first: the local thread answers at once when they are busy.
      for (size_t k = 1; k <= ranks && !stopping_; ++k)
        if (!slots_[k % ranks].busy && !self_.lost_[k % ranks]) assign(k % ranks);
      if (std::none_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.busy; })) break;
      bool any = false;
      while (std::optional<LocalThread::Event> ev = self_.thread_->take()) {
        any = true;
        if (!ev->done) {
          deliver(0, ev->index, std::move(ev->m));
        } else {
          slots_[0].busy = false;
          if (ev->error) lose_or_fail(0, ev->error);
        }
      }
      while (std::optional<Message> msg = self_.world_->poll()) {
        any = true;
        handle(*msg);
      }
      if (any) backoff.reset();
      else backoff.idle();
    }
    if (failure_) std::rethrow_exception(failure_);
  }

 private:
  // The rank's next chunk and what it compiles ahead (Dispatch); none when
  // the batch is handed out.
  void assign(size_t r) {
    Dispatch::Work w = self_.dispatch_.take(r);
    if (w.now.empty()) return;
    slots_[r] = {true, self_.next_chunk_++, w.now, std::vector<bool>(w.now.size(), false)};
    if (r == 0) {
      std::vector<std::vector<Value>> vals;
      for (size_t i : w.now) vals.push_back(configs_[i]);
      self_.thread_->start(std::move(w.now), std::move(vals), std::move(w.ahead));
    } else {
      auto config_of = [&](const std::vector<Value>& values) {
        std::optional<Config> cfg = self_.spec_->space().config_of(values);
        if (!cfg) throw Error::failed("MPI: a configuration outside the spec's space cannot be sent");
        return std::move(*cfg);
      };
      ChunkMsg c{slots_[r].chunk, {}, {}};
      for (size_t i : w.now) c.items.emplace_back(i, config_of(configs_[i]));
      for (const std::vector<Value>& a : w.ahead) c.ahead.push_back(config_of(a));
      self_.world_->send(static_cast<int>(r), Tag::Chunk, wire::write(c));
    }
  }

  void stop_all() {
    stopping_ = true;
    for (size_t r = 0; r < slots_.size(); ++r) {
      if (!slots_[r].busy) continue;
      if (r == 0) self_.thread_->stop();
      else self_.world_->send(static_cast<int>(r), Tag::Stop, wire::write(StopMsg{slots_[r].chunk}));
    }
  }

  void fail(std::exception_ptr e) {
    if (!failure_) failure_ = e;
    if (!stopping_) stop_all();
  }

  // A rank's evaluator threw (`e`: a GPU lost, a GPU worker that cannot be
  // started again): the rank is lost and what it held unreported goes to the
  // others (Dispatch::retire); the batch fails only once every rank is lost,
  // or at once for a cancel.
  void lose_or_fail(size_t r, std::exception_ptr e) {
    try {
      std::rethrow_exception(e);
    } catch (const Cancelled&) {
      return fail(e);
    } catch (...) {
    }
    Slot& slot = slots_[r];
    std::vector<size_t> unreported;
    for (size_t i = 0; i < slot.items.size(); ++i)
      if (!slot.reported[i]) unreported.push_back(slot.items[i]);
    self_.dispatch_.retire(r, unreported);
    self_.lost_[r] = true;
    std::string why = "an unknown error";
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      why = x.what();
    } catch (...) {
    }
    const size_t left = size_t(std::count(self_.lost_.begin(), self_.lost_.end(), false));
    // Another rank's message names it already.
    if (r == 0) why = "rank 0 (" + self_.hosts_[0] + "): " + why;
    std::cerr << "ktune: lost " << why << "; "
              << (left ? "the other ranks measure what it held\n" : "no rank is left\n");
    if (!self_.first_loss_) self_.first_loss_ = e;
    if (!left) fail(self_.first_loss_);
  }

  void deliver(size_t r, size_t index, Measured m) {
    if (stopping_) return;  // a late result of a stopped batch: dropped, as a cancelled compile is
    Slot& slot = slots_[r];
    for (size_t i = 0; i < slot.items.size(); ++i)
      if (slot.items[i] == index) slot.reported[i] = true;
    m.eval.config = configs_[index];
    try {
      if (!on_measured_(index, m)) stop_all();
    } catch (...) {
      fail(std::current_exception());
    }
  }

  void handle(const Message& msg) {
    const size_t r = static_cast<size_t>(msg.source);
    Slot& slot = slots_[r];
    if (msg.tag == Tag::Result) {
      ResultMsg res = wire::read<ResultMsg>(msg.payload);
      if (slot.busy && res.chunk == slot.chunk && res.index < configs_.size()) deliver(r, res.index, std::move(res.m));
      return;
    }
    const std::string who = "rank " + std::to_string(r) + " (" + self_.hosts_[r] + ")";
    if (msg.tag != Tag::Done) {
      fail(std::make_exception_ptr(Error::failed("MPI: unexpected message from " + who)));
      return;
    }
    const DoneMsg d = wire::read<DoneMsg>(msg.payload);
    if (d.chunk != slot.chunk) return;
    slot.busy = false;
    if (!d.ok) lose_or_fail(r, std::make_exception_ptr(Error(kind_of(d.error_kind), who + ": " + d.error)));
  }

  MpiEvaluator& self_;
  std::span<const std::vector<Value>> configs_;
  const OnMeasured& on_measured_;
  std::vector<Slot> slots_;  // per rank; 0 is the local thread
  bool stopping_ = false;
  std::exception_ptr failure_;
};

void MpiEvaluator::evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on_measured) {
  if (std::find(lost_.begin(), lost_.end(), false) == lost_.end()) std::rethrow_exception(first_loss_);
  dispatch_.begin(configs);
  Round(*this, configs, on_measured).run();
}

void MpiEvaluator::compile_ahead(std::span<const std::vector<Value>> next) {
  dispatch_.upcoming(next);
  // The run ends: rank 0's GPU drops what it holds ahead (its thread is idle
  // between batches). The other ranks' go with them at shutdown.
  if (next.empty()) local_->compile_ahead({});
}

namespace {

void run_chunk(World& world, const Spec& spec, ConfigEvaluator& local, const ChunkMsg& chunk) {
  const SearchSpace& space = spec.space();
  DoneMsg done{chunk.chunk, true, 0, ""};
  try {
    auto values_of = [&](const Config& c) {
      bool fits = c.size() == space.parameters().size();
      for (size_t p = 0; fits && p < c.size(); ++p) fits = c[p] < space.parameters()[p].values.size();
      if (!fits) throw Error::failed("MPI: rank 0 sent a configuration outside this rank's space");
      return space.values(c);
    };
    std::vector<std::vector<Value>> values, ahead;
    for (const auto& item : chunk.items) values.push_back(values_of(item.second));
    for (const Config& c : chunk.ahead) ahead.push_back(values_of(c));
    if (!ahead.empty()) local.compile_ahead(ahead);
    local.evaluate(values, [&](size_t i, const Measured& m) {
      world.send(0, Tag::Result, wire::write(ResultMsg{chunk.chunk, chunk.items[i].first, m}));
      while (std::optional<Message> s = world.poll_tag(0, Tag::Stop))
        if (wire::read<StopMsg>(s->payload).chunk == chunk.chunk) return false;
      return true;
    });
  } catch (const Error& e) {
    done = {chunk.chunk, false, int32_t(e.kind()), e.what()};
  }
  world.send(0, Tag::Done, wire::write(done));
}

}  // namespace

void serve(World& world, const Spec& spec, const std::function<std::unique_ptr<ConfigEvaluator>()>& make_local) {
  ReadyMsg ready;
  ready.host = host_name();
  ready.spec_hash = spec.hash;
  std::unique_ptr<ConfigEvaluator> local;
  try {
    local = make_local();
    ready.ok = true;
    ready.device = local->device().name;
  } catch (const Error& e) {
    ready.error_kind = int32_t(e.kind());
    ready.error = e.what();
  }
  world.send(0, Tag::Ready, wire::write(ready));
  for (;;) {
    const Message m = world.wait(0);
    if (m.tag == Tag::Shutdown) return;
    if (m.tag == Tag::Chunk && local) run_chunk(world, spec, *local, wire::read<ChunkMsg>(m.payload));
    // A Stop for a chunk already done is stale: nothing to stop.
  }
}

}  // namespace ktune::mpi
