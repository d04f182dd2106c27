#include "tuner/tune/pool_evaluator.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <unordered_set>
#include <utility>

#include "ktune/error.h"
#include "search/expr/cancel.h"

namespace ktune {
namespace {
double steady_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

PoolEvaluator::PoolEvaluator(std::vector<MakeMember> members, size_t chunk, OnLost on_lost)
    : dispatch_(std::make_unique<Dispatch>(members.size(), chunk)), on_lost_(std::move(on_lost)) {
  if (members.empty()) throw Error::failed("internal: a pool of no evaluators");
  for (MakeMember& make : members) members_.push_back(std::make_unique<Member>(std::move(make)));
  for (size_t i = 0; i < members_.size(); ++i)  // after every member has started or failed
    if (std::exception_ptr e = members_[i]->made()) lose(i, e);
  require_live();
  std::vector<db::DeviceInfo> devices;
  std::vector<std::string> sources;
  for (auto& m : members_) {
    if (m->retired()) continue;
    m->run([&, first = devices.empty()](ConfigEvaluator& e) {
      devices.push_back(e.device());
      m->source = e.source();
      if (!first) return;
      const Offers offered = e.offers();
      replay_ = offered.recorded != nullptr;
      features_ = offered.features != nullptr;
      remeasures_ = offered.remeasurer != nullptr;
      profiles_ = offered.profiler != nullptr;
    });
    sources.push_back(m->source);
  }
  for (size_t i = 1; i < devices.size(); ++i)
    if (devices[i].name != devices[0].name)
      throw Error::bad_input("the GPUs of one run must be one model (one series of results): " + sources[0] +
                             " and " + sources[i] + "; tune each model in a run of its own");
  device_ = devices[0];
  for (const std::string& s : sources) source_ += (source_.empty() ? "" : "; ") + s;
  stats_.workers = devices.size();
}

PoolEvaluator::PoolEvaluator(std::unique_ptr<ReplayEvaluator> replay, ClockOptions clock)
    : replay_member_(std::move(replay)), clock_(std::in_place, clock), simulated_(true) {
  if (!replay_member_ || clock.gpus == 0) throw Error::failed("internal: a simulated pool needs a replay and a GPU");
  replay_ = true;
  features_ = true;
  device_ = replay_member_->device();
  source_ = replay_member_->source();
  stats_.workers = clock.gpus;
}

PoolEvaluator::~PoolEvaluator() = default;

void PoolEvaluator::on_first(const std::function<void(ConfigEvaluator&)>& task) {
  if (simulated_) return task(*replay_member_);
  for (size_t k = 0; k < members_.size(); ++k) {
    if (members_[k]->retired()) continue;
    members_[k]->post(task);
    const size_t one[] = {k};
    if (const std::exception_ptr cancelled = wait_posted(one)) std::rethrow_exception(cancelled);
    if (!members_[k]->retired()) return;
  }
  require_live();
}

void PoolEvaluator::require_live() const {
  for (const auto& m : members_)
    if (!m->retired()) return;
  if (first_loss_) std::rethrow_exception(first_loss_);
  throw Error::failed("internal: a pool whose every member is lost, for no reason");
}

void PoolEvaluator::note_loss(size_t k, std::exception_ptr why) {
  LostWorker lost{k, members_[k]->source, "an unknown error"};
  try {
    std::rethrow_exception(why);
  } catch (const std::exception& e) {
    lost.reason = e.what();
  } catch (...) {
  }
  if (!first_loss_) first_loss_ = why;
  stats_.lost.push_back(lost);
  if (on_lost_) on_lost_(lost);
}

void PoolEvaluator::lose(size_t k, std::exception_ptr why) {
  {
    std::lock_guard lock(dispatch_mutex_);
    dispatch_->retire(k, {});
  }
  note_loss(k, why);
  members_[k]->retire();
}

std::vector<StaticFeatures> PoolEvaluator::features(std::span<const Config> configs) {
  std::vector<bool> pending;  // a replay's: what the straggler rule leaves unknown
  if (simulated_) {
    std::vector<std::pair<Config, double>> compiles;
    for (const Config& c : configs) compiles.emplace_back(c, replay_member_->compile_s(c));
    pending = clock_->features(compiles, deadline_);
    simulated_stats();
  }
  std::vector<StaticFeatures> out;
  // A live proposal beside the members' measuring: their threads are busy,
  // and their evaluator takes features() from another thread.
  if (ConfigEvaluator* e = proposing_on_.load())
    return e->offers().features ? e->offers().features->features(configs) : out;
  on_first([&](ConfigEvaluator& e) {
    if (CompileFeatures* f = e.offers().features) out = f->features(configs);
  });
  for (size_t i = 0; i < pending.size() && i < out.size(); ++i)
    if (pending[i]) out[i] = StaticFeatures{.pending = true};
  if (collect_)
    for (size_t i = 0; i < configs.size() && i < out.size(); ++i)
      if (out[i].compiled && out[i].spill_bytes == 0) compiled_clean_.push_back(configs[i]);
  return out;
}

std::optional<RecordedData::RecordedPart> PoolEvaluator::recorded_part() const {
  return simulated_ ? replay_member_->recorded_part() : std::nullopt;  // a GPU measures any configuration
}

std::vector<Measured> PoolEvaluator::remeasure(std::span<const std::vector<Value>> configs, int rounds) {
  std::vector<Measured> out;
  on_first([&](ConfigEvaluator& e) {
    if (Remeasurer* r = e.offers().remeasurer) out = r->remeasure(configs, rounds);
  });
  return out;
}

std::vector<Measured> PoolEvaluator::profile(std::span<const std::vector<Value>> configs,
                                             const std::vector<std::string>& metrics) {
  std::vector<Measured> out;
  on_first([&](ConfigEvaluator& e) {
    if (Profiler* p = e.offers().profiler) out = p->profile(configs, metrics);
  });
  return out;
}

db::DeviceInfo PoolEvaluator::measure_limits() {
  db::DeviceInfo out = device_;
  on_first([&](ConfigEvaluator& e) {
    if (Profiler* p = e.offers().profiler) out = p->measure_limits();
  });
  return out;
}

ConfigEvaluator::Offers PoolEvaluator::offers() {
  Offers o;
  o.features = features_ ? this : nullptr;
  o.remeasurer = remeasures_ ? this : nullptr;
  o.profiler = profiles_ ? this : nullptr;
  o.recorded = replay_ ? this : nullptr;
  o.pool = &stats_;
  return o;
}

std::optional<double> PoolEvaluator::virtual_time() const {
  return simulated_ ? std::optional<double>(clock_->now()) : std::nullopt;
}

void PoolEvaluator::evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on_measured) {
  if (simulated_) {
    evaluate_simulated(configs, on_measured);
    simulated_stats();
    return;
  }
  const double start = steady_s();
  evaluate_live(configs, on_measured);
  account_live(start);
}

void PoolEvaluator::account_live(double start) {
  if (last_batch_end_) stats_.between_s += std::max(0.0, start - *last_batch_end_);
  const double end = steady_s();
  stats_.wall_s += end - start;
  last_batch_end_ = end;
}

void PoolEvaluator::simulated_stats() {
  stats_.wall_s = clock_->now();
  stats_.busy_s = clock_->gpu_busy_s();
  stats_.strategy_s = clock_->strategy_s();
  stats_.compiles = clock_->compiles();
  stats_.compile_s = clock_->compile_s();
}

std::exception_ptr PoolEvaluator::wait_posted(std::span<const size_t> posted) {
  std::exception_ptr cancelled;
  for (size_t k : posted)
    if (std::exception_ptr e = members_[k]->wait()) {
      try {
        std::rethrow_exception(e);
      } catch (const Cancelled&) {
        cancelled = e;
      } catch (...) {
        lose(k, e);
      }
    }
  return cancelled;
}

void PoolEvaluator::compile_ahead(std::span<const std::vector<Value>> next) {
  if (simulated_) {
    std::vector<std::pair<Config, double>> compiles;
    for (const std::vector<Value>& values : next)
      if (std::optional<Config> c = replay_member_->space().config_of(values))
        compiles.emplace_back(*c, replay_member_->compile_s(*c));
    clock_->ahead(std::move(compiles));
    return;
  }
  // Each member queues its share at once (members are idle between
  // batches), as one GPU does: the spares it measures while the strategy
  // proposes are those it compiled. Empty: the run ends, what each member
  // queued ahead is dropped.
  std::vector<std::vector<std::vector<Value>>> shares(members_.size());
  {
    std::lock_guard lock(dispatch_mutex_);
    dispatch_->upcoming(next);
    if (!next.empty())
      for (size_t k = 0; k < members_.size(); ++k) shares[k] = dispatch_->ahead(k);
  }
  std::vector<size_t> posted;
  for (size_t k = 0; k < members_.size(); ++k)
    if (!members_[k]->retired() && (next.empty() || !shares[k].empty())) {
      members_[k]->post([&shares, k](ConfigEvaluator& e) { e.compile_ahead(shares[k]); });
      posted.push_back(k);
    }
  if (const std::exception_ptr cancelled = wait_posted(posted)) std::rethrow_exception(cancelled);
  require_live();
}

// A batch measured by the live members: what they share.
struct PoolEvaluator::LiveBatch {
  LiveBatch(std::span<const std::vector<Value>> c, const OnMeasured& m, size_t members)
      : configs(c), on_measured(m), lost(members, false) {}
  std::span<const std::vector<Value>> configs;
  const OnMeasured& on_measured;
  bool stop = false;        // a false from on_measured, or a cancel: no member takes more
  std::vector<bool> lost;   // in this batch; its thread ends after the round
  size_t measuring = 0;     // members still at the batch (tail_: the others measure spares meanwhile)
  std::condition_variable done;  // measuring reached 0
};

// Each live member takes chunks until the batch is handed out. A member that
// throws is lost: what it held and had not reported goes back to the
// Dispatch, and while some is left and a member lives the others take it.
void PoolEvaluator::evaluate_live(std::span<const std::vector<Value>> configs, const OnMeasured& on_measured) {
  require_live();
  std::mutex& mutex = dispatch_mutex_;  // guards the dispatch and the batch, and makes on_measured one call at a time
  LiveBatch batch(configs, on_measured, members_.size());
  {
    std::lock_guard lock(mutex);
    dispatch_->begin(configs);
  }
  for (bool more = true; more;) {
    std::vector<size_t> posted;
    {
      std::lock_guard lock(mutex);
      batch.measuring = 0;
      for (const auto& m : members_) batch.measuring += !m->retired();
    }
    for (size_t k = 0; k < members_.size(); ++k)
      if (!members_[k]->retired()) {
        members_[k]->post([this, &batch, k](ConfigEvaluator& e) { measure_part(batch, k, e); });
        posted.push_back(k);
      }
    std::exception_ptr first;
    for (size_t k : posted)
      if (std::exception_ptr e = members_[k]->wait(); e && !first) first = e;
    for (size_t k : posted)
      if (batch.lost[k]) members_[k]->retire();
    if (first) std::rethrow_exception(first);
    require_live();
    std::lock_guard lock(mutex);
    more = !batch.stop && dispatch_->has_work();  // a lost member's, after the others had finished theirs
  }
}

void PoolEvaluator::measure_part(LiveBatch& batch, size_t member, ConfigEvaluator& e) {
  std::mutex& mutex = dispatch_mutex_;
  std::vector<size_t> now;     // the chunk in hand
  std::vector<bool> reported;  // of it
  bool run_error = false;      // on_measured threw: the run's error, not the member's
  bool at_batch = true;
  auto leave_batch = [&] {  // under mutex
    if (std::exchange(at_batch, false) && --batch.measuring == 0) batch.done.notify_all();
  };
  try {
    for (;;) {
      Dispatch::Work w;
      {
        std::lock_guard lock(mutex);
        if (batch.stop) return leave_batch();
        w = dispatch_->take(member);
        now = w.now;
        reported.assign(now.size(), false);
        if (now.empty()) leave_batch();
      }
      if (now.empty()) {
        if (tail_)
          fill_beside(e, *tail_, [&] {
            std::unique_lock lock(mutex);
            batch.done.wait(lock, [&] { return batch.measuring == 0; });
          });
        return;
      }
      std::vector<std::vector<Value>> values;
      for (size_t i : now) values.push_back(batch.configs[i]);
      // Not an empty one: to a GPU that says the run ends, and drops what it holds ahead.
      if (!w.ahead.empty()) e.compile_ahead(w.ahead);
      e.evaluate(values, [&](size_t i, const Measured& m) {
        std::lock_guard lock(mutex);
        if (i >= now.size() || reported[i]) return !batch.stop;
        reported[i] = true;
        stats_.busy_s += m.cost_s;
        try {
          if (!batch.on_measured(now[i], m)) batch.stop = true;
        } catch (...) {
          run_error = batch.stop = true;
          throw;
        }
        return !batch.stop;
      });
    }
  } catch (const Cancelled&) {
    std::lock_guard lock(mutex);
    batch.stop = true;  // the others finish what they hold and take no more
    leave_batch();
    throw;
  } catch (...) {
    std::lock_guard lock(mutex);
    leave_batch();
    if (run_error) throw;
    std::vector<size_t> unreported;
    for (size_t i = 0; i < now.size(); ++i)
      if (!reported[i]) unreported.push_back(now[i]);
    dispatch_->retire(member, unreported);
    batch.lost[member] = true;
    note_loss(member, std::current_exception());
  }
}

// The batch on the clock: the replay's answer for each configuration, its
// recorded compile and the rest of its cost (the GPU's) played out, results
// reported in the order they finish.
PoolEvaluator::Replayed PoolEvaluator::replayed(std::span<const std::vector<Value>> configs) {
  Replayed r;
  for (size_t i = 0; i < configs.size(); ++i) {
    replay_member_->evaluate(configs.subspan(i, 1), [&](size_t, const Measured& m) {
      r.answers.push_back(m);
      return true;
    });
    if (r.answers.size() != i + 1) throw Error::failed("internal: a replay gave no answer for a configuration");
    // The replay's answer says what it cost (Measured::cost_s); the recording what of it compiled and sampled.
    const Measured& m = r.answers.back();
    const double cost = std::max(m.cost_s, 0.0);
    const double compile = std::min(ReplayEvaluator::recorded_compile_s(m.eval), cost);
    r.costs.emplace_back(replay_member_->space().config_of(configs[i]).value_or(Config{}),
                         ReplayCost{compile, cost - compile, ReplayEvaluator::recorded_cost(m.eval).sampling});
  }
  return r;
}

void PoolEvaluator::evaluate_simulated(std::span<const std::vector<Value>> configs, const OnMeasured& on_measured) {
  const Replayed r = replayed(configs);
  // After a false, what another GPU has in flight still finishes and is reported.
  clock_->play(r.costs, [&](const ReplayClock::Finish& f) { return on_measured(f.index, r.answers[f.index]); });
}

void PoolEvaluator::fill_beside(ConfigEvaluator& e, const Beside& b, const std::function<void()>& until) {
  Beside mine;
  mine.propose = [&until] {
    until();
    return std::vector<Config>{};
  };
  mine.spare = b.spare;
  mine.time_left = b.time_left;
  // Each configuration measured once over the members, each result reported
  // one at a time, as evaluate_live reports a batch's.
  mine.wanted = [&](const std::vector<Value>& c) {
    std::lock_guard lock(dispatch_mutex_);
    return !fill_stop_ && b.wanted(c) && fill_claimed_.insert(config_key(c)).second;
  };
  mine.on_measured = [&](const Measured& m) {
    std::lock_guard lock(dispatch_mutex_);
    if (fill_stop_) return false;
    stats_.busy_s += m.cost_s;
    try {
      if (!b.on_measured(m)) fill_stop_ = true;
    } catch (...) {  // the run's error (the store's), not the member's: rethrown by the caller
      fill_error_ = std::current_exception();
      fill_stop_ = true;
    }
    return !fill_stop_;
  };
  e.beside(mine);
}

std::vector<Config> PoolEvaluator::beside(const Beside& b) {
  if (!simulated_) return beside_live(b);
  const double from = clock_->now();
  collect_ = true;
  compiled_clean_.clear();
  if (b.time_left) deadline_ = from + b.time_left();
  std::vector<Config> proposal;
  try {
    proposal = b.propose();
  } catch (...) {
    collect_ = false;
    deadline_ = std::numeric_limits<double>::infinity();
    throw;
  }
  collect_ = false;
  deadline_ = std::numeric_limits<double>::infinity();
  std::vector<std::vector<Value>> candidates;
  std::unordered_set<std::string> seen;
  auto add = [&](std::vector<Value> c) {
    if (b.wanted(c) && seen.insert(config_key(c)).second) candidates.push_back(std::move(c));
  };
  for (const Config& c : compiled_clean_) add(replay_member_->space().values(c));
  for (const std::vector<Value>& c : b.spare) add(c);
  compiled_clean_.clear();
  const Replayed r = replayed(candidates);
  clock_->fill(r.costs, from, [&](const ReplayClock::Finish& f) { return b.on_measured(r.answers[f.index]); });
  simulated_stats();
  return proposal;
}

// Live: the proposal here, while each member measures the spares (and the
// first member what the proposal's short lists compile clean) through its
// own beside(), until the proposal is made; or, for a batch, the batch
// through evaluate_live, whose members fill its tail (tail_).
std::vector<Config> PoolEvaluator::beside_live(const Beside& b) {
  {
    std::lock_guard lock(dispatch_mutex_);
    fill_claimed_.clear();
    fill_stop_ = false;
    fill_error_ = nullptr;
  }
  if (b.batch) {
    tail_ = &b;
    struct Reset {
      const Beside*& tail;
      ~Reset() { tail = nullptr; }
    } reset{tail_};
    b.propose();
    if (fill_error_) std::rethrow_exception(fill_error_);
    return {};
  }
  const double start = steady_s();
  std::mutex done_mutex;
  std::condition_variable done_changed;
  bool done = false;
  auto until_proposed = [&] {
    std::unique_lock lock(done_mutex);
    done_changed.wait(lock, [&] { return done; });
  };
  std::vector<size_t> posted;
  for (size_t k = 0; k < members_.size(); ++k)
    if (!members_[k]->retired()) {
      if (!proposing_on_) proposing_on_ = members_[k]->get();
      members_[k]->post([this, &b, &until_proposed](ConfigEvaluator& e) { fill_beside(e, b, until_proposed); });
      posted.push_back(k);
    }
  std::vector<Config> proposal;
  std::exception_ptr failed;
  try {
    proposal = b.propose();
  } catch (...) {
    failed = std::current_exception();
  }
  {
    std::lock_guard lock(done_mutex);
    done = true;
  }
  done_changed.notify_all();
  const std::exception_ptr cancelled = wait_posted(posted);
  proposing_on_ = nullptr;
  account_live(start);
  if (failed) std::rethrow_exception(failed);
  if (fill_error_) std::rethrow_exception(fill_error_);
  if (cancelled) std::rethrow_exception(cancelled);
  require_live();
  return proposal;
}

}  // namespace ktune
