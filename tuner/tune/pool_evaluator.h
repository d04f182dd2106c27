// PoolEvaluator: one ConfigEvaluator made of several workers, a batch spread
// over them as they free up.
//
// The tuning loop sees one evaluator; the pool hands the configurations of a
// batch to whichever worker is free first and reports each result through
// the one on_measured, one call at a time, so the store keeps one writer and
// every configuration is reported (and stored) once. A false from on_measured
// starts nothing more; what is in flight still finishes and is reported.
// Every other question (device, features, the final re-measure, a partial
// recording) goes to the first worker still there.
//
// A live member that throws (its factory, or while it evaluates: a GPU lost,
// a GPU worker process that cannot be started again) is lost, not the run:
// its thread ends, the configurations it held whose results never came go to
// the others (Dispatch::retire), and PoolStats::lost says which and why. Only
// when every member is lost does the first loss's exception reach the
// caller. A configuration that crashes or hangs a GPU worker process is not
// a loss: gpu::Engine starts another and reports that configuration failed.
// Errors of the run itself pass through at once: Cancelled, and whatever
// on_measured throws (the store's).
//
// Two ways to run the workers, chosen by the constructor:
//  * live (GPUs; later other processes): each member is made by its factory
//    on a thread of its own and is used only from that thread for its whole
//    life, as gpu::Engine requires (its worker process dies with the thread
//    that started it). A member takes its next chunk of the batch when it
//    frees up, and compiles the chunk after it while it measures (Dispatch:
//    chunks, and what each member compiles ahead; what the strategy expects
//    next is shared out at once, each member queueing its share).
//    Members must measure the same device model: one series.
//  * simulated (a replay): one replay answers for the GPUs and compile
//    processes of a ReplayClock (search/strategy/replay_clock.h), without
//    threads: the recorded compile and GPU times of each configuration are
//    played out on them, feature requests are compiled and waited for, what
//    the strategy expects next compiles behind the batch, and results are
//    reported in the order of their virtual finish. The virtual time
//    (virtual_time()) is the wall time a live run on such a host would take.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "tuner/base/thread_owned.h"
#include "tuner/tune/dispatch.h"
#include "search/strategy/replay_clock.h"
#include "tuner/tune/evaluator.h"
#include "tuner/tune/replay_evaluator.h"

namespace ktune {

// A live member that can no longer evaluate.
struct LostWorker {
  size_t index = 0;    // its factory's position
  std::string source;  // its source(); empty when its factory failed
  std::string reason;  // the exception's message
};

// How a pool's workers spent the run, for the report.
struct PoolStats {
  size_t workers = 0;      // those that started (a factory that failed is not one)
  std::vector<LostWorker> lost;  // in the order they were lost, factory failures first
  double busy_s = 0;       // summed cost_s of the evaluations
  // Live: from each batch's (or proposal measured beside) start to its last
  // result; virtual time when simulated.
  double wall_s = 0;
  double between_s = 0;   // real time outside those, every worker idle: the strategy's proposals
  // Simulated: wall_s is the whole predicted wall time (ReplayClock::now);
  // of it the strategy's own time; the compiles started (feature requests
  // and what was compiled ahead included) and their summed time.
  double strategy_s = 0;
  size_t compiles = 0;
  double compile_s = 0;
  // Of the evaluation wall, the share the workers were busy: busy / (workers x wall).
  double efficiency() const { return wall_s > 0 && workers ? busy_s / (double(workers) * wall_s) : 0; }
};

// Offers what its first member offers (measured again and profiled on that
// member, or the next one once it is lost), recorded data where the members
// replay, and its PoolStats.
class PoolEvaluator : public ConfigEvaluator,
                      public CompileFeatures,
                      public Remeasurer,
                      public Profiler,
                      public RecordedData {
 public:
  using MakeMember = std::function<std::unique_ptr<ConfigEvaluator>()>;
  // Told of each loss as it is found, one at a time (on the lost member's
  // thread or the caller's), e.g. to say so.
  using OnLost = std::function<void(const LostWorker&)>;

  // Live: one thread and one member per factory, each member made on its
  // thread. `chunk`: the most configurations a member takes at a time (0:
  // guided by what is left of the batch, Dispatch::guided_chunk). A factory
  // that throws is a lost member; when every one throws, the first one's
  // exception is rethrown. Throws Error::bad_input when the members measure
  // different device models.
  // REQUIRES: at least one factory.
  explicit PoolEvaluator(std::vector<MakeMember> members, size_t chunk = 0, OnLost on_lost = {});
  // Simulated: clock.gpus virtual GPUs and clock.compile_slots compile
  // processes, answered by `replay`. REQUIRES: replay.
  PoolEvaluator(std::unique_ptr<ReplayEvaluator> replay, ClockOptions clock);
  ~PoolEvaluator() override;
  PoolEvaluator(const PoolEvaluator&) = delete;
  PoolEvaluator& operator=(const PoolEvaluator&) = delete;

  db::DeviceInfo device() const override { return device_; }
  void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on_measured) override;
  // Live: shared out among the members by the Dispatch, each compiling its part.
  void compile_ahead(std::span<const std::vector<Value>> next) override;
  // Simulated: the spares and what the proposal's short lists compiled
  // clean, played out on the clock over the time the proposal took
  // (ReplayClock::fill). Live: the proposal made here while every member
  // measures through its own beside() (the spares, each once over the
  // members, and on the first member what the short lists compiled clean);
  // for a batch (Beside::batch), a member that has ended its part measures
  // spares until the others have ended theirs.
  std::vector<Config> beside(const Beside& b) override;
  bool measures_beside() const override { return true; }
  std::string source() const override { return source_; }
  std::vector<StaticFeatures> features(std::span<const Config> configs) override;
  std::optional<RecordedPart> recorded_part() const override;
  std::vector<Measured> remeasure(std::span<const std::vector<Value>> configs, int rounds) override;
  std::vector<Measured> profile(std::span<const std::vector<Value>> configs,
                                const std::vector<std::string>& metrics) override;
  db::DeviceInfo measure_limits() override;
  size_t workers() const override { return stats_.workers; }
  std::optional<double> virtual_time() const override;
  Offers offers() override;

  const PoolStats& stats() const { return stats_; }

 private:
  // A live member: its evaluator on a thread of its own, and its source() once asked.
  struct Member : ThreadOwned<ConfigEvaluator> {
    using ThreadOwned::ThreadOwned;
    std::string source;
  };
  void evaluate_live(std::span<const std::vector<Value>> configs, const OnMeasured& on_measured);
  struct LiveBatch;
  // On member `member`'s thread: chunks of the batch until none is left,
  // then (tail_) spares until every member has ended its part.
  void measure_part(LiveBatch& batch, size_t member, ConfigEvaluator& e);
  void evaluate_simulated(std::span<const std::vector<Value>> configs, const OnMeasured& on_measured);
  // Simulated: the replay's answers and their recorded costs.
  struct Replayed {
    std::vector<Measured> answers;
    std::vector<std::pair<Config, ReplayCost>> costs;
  };
  Replayed replayed(std::span<const std::vector<Value>> configs);
  // Simulated: the stats read off the clock.
  void simulated_stats();
  // Runs `task` on the first live member's thread (the next one's if that
  // one is lost meanwhile) or here (simulated), and waits.
  void on_first(const std::function<void(ConfigEvaluator&)>& task);
  // Live: member k is lost for `why`; its thread ends. REQUIRES: not on that thread.
  void lose(size_t k, std::exception_ptr why);
  // Live: waits for the tasks posted to these members; a member whose task
  // threw is lost, but for a cancel, which is returned.
  std::exception_ptr wait_posted(std::span<const size_t> posted);
  // Live: the loss in the stats, and said (on_lost_); under dispatch_mutex_ while members work.
  void note_loss(size_t k, std::exception_ptr why);
  // Live: rethrows the first loss's exception when no member is left.
  void require_live() const;
  std::vector<Config> beside_live(const Beside& b);
  // Live, on a member's thread: `e` measures b's spares through its own
  // beside() until `until` returns, each claimed once over the members.
  void fill_beside(ConfigEvaluator& e, const Beside& b, const std::function<void()>& until);

  std::vector<std::unique_ptr<Member>> members_;  // live
  std::unique_ptr<ReplayEvaluator> replay_member_;  // simulated
  std::optional<ReplayClock> clock_;                // simulated
  std::mutex dispatch_mutex_;
  std::unique_ptr<Dispatch> dispatch_;  // live
  OnLost on_lost_;                      // live
  std::exception_ptr first_loss_;       // live
  // What the first member offers: recorded data, features, a re-measure, a profiler.
  bool replay_ = false;
  bool features_ = false;
  bool remeasures_ = false;
  bool profiles_ = false;
  bool simulated_ = false;
  db::DeviceInfo device_;
  std::string source_;
  PoolStats stats_;
  std::optional<double> last_batch_end_;  // real seconds on the steady clock, for between_s
  // Live: the time from `start` (steady seconds) to now is the workers', the
  // time before it since the last such end the strategy's alone.
  void account_live(double start);
  // Live, during beside(): the member whose evaluator answers features()
  // (its thread is busy measuring); the batch whose tail the members fill;
  // the configurations claimed by a member; whether the run said stop.
  std::atomic<ConfigEvaluator*> proposing_on_{nullptr};
  const Beside* tail_ = nullptr;
  std::unordered_set<std::string> fill_claimed_;
  bool fill_stop_ = false;
  std::exception_ptr fill_error_;  // what the run's report threw meanwhile
  // Simulated, during beside(): what features() was asked for and found clean.
  bool collect_ = false;
  std::vector<Config> compiled_clean_;
  double deadline_ = std::numeric_limits<double>::infinity();  // on the clock: the run's time is up
};

}  // namespace ktune
