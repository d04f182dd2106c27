// ReplayClock: the wall time a live run on a GPU host would take, predicted
// from the recorded costs of the configurations it evaluates.
//
// A live run has `compile_slots` compile processes and `gpus` GPUs, and its
// strategy's own work holds everything up while it proposes. The clock plays
// that out on virtual time:
//  * a compile takes the configuration's recorded compile time on the slot
//    that frees up first, from the moment it is asked for; a configuration is
//    compiled once (the cubin cache);
//  * a features request (a strategy's short list, StrategyContext::features)
//    is waited for: the strategy proposes once its compiles have ended or
//    the straggler rule (search/strategy/straggler.h) stops waiting for the
//    rest, which go on compiling, and the GPUs meanwhile do nothing new;
//  * a batch is compiled in its order; what the strategy said it would
//    propose next, and its spares (ahead(), given as the batch is), wait
//    behind it and behind any later request, each started when a process
//    would otherwise sit idle
//    (the pool's order of priority: a short list asked for later still goes
//    first); each GPU takes the compiled configuration that became ready
//    first, no earlier than the batch was handed over, and spends its
//    recorded GPU time on it (load, verify, benchmark, framework), so
//    compiling overlaps measuring;
//  * spares measured while the strategy proposed (fill()): from the moment
//    the proposal began to the moment it ended, each free GPU takes the
//    spare whose compile had ended first; none starts after the proposal,
//    and none waits for a compile that had not ended;
//  * the strategy's own time: with `strategy_time`, the real time that
//    passes outside the clock's calls (proposing, fitting models, storing a
//    result) is added as it passes. Off, a replay is deterministic.
// The cost layer's time budget reads now(); results are reported in the
// order of their virtual finish (reached()).
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "search/space/space.h"

namespace ktune {

// What racing needs of a recorded measurement: the sampling a live run
// could cut short.
struct RecordedSampling {
  double time_ms = 0;     // the recorded time (0: failed; nothing to race)
  double sampling_s = 0;  // of the GPU's time, the timed samples'
  int samples = 0;
  bool raced = false;     // the recording stopped its sampling early already
};

// What evaluating a configuration costs, as recorded: its compile and the
// rest, which a GPU spends.
struct ReplayCost {
  double compile_s = 0;
  double gpu_s = 0;
  RecordedSampling sampling{};
};

struct ClockOptions {
  size_t compile_slots = 1;  // compile processes (a live run's: the usable CPUs)
  size_t gpus = 1;
  bool strategy_time = true;  // add the real time spent outside the clock
  // Play racing out (a live run's default, GpuEvaluatorOptions): a recorded
  // configuration not stopped early whose time lies above 1.5 x the best
  // time reported so far samples once, above 1.2 x three times, so its
  // sampling costs that share of what the recording spent on it. A
  // recording made without racing otherwise predicts the GPU too busy.
  bool racing = false;
};

// The GPU time of `cost` on a run that races, with `best_ms` the best time so
// far (0: none yet).
double raced_gpu_s(const ReplayCost& cost, double best_ms);

class ReplayClock {
 public:
  explicit ReplayClock(ClockOptions options);

  // Seconds since the run began (with strategy_time, the real time since
  // the clock's last call included).
  double now() const;
  // A features request: compiles what is not compiled yet and waits for
  // them, until the straggler rule (search/strategy/straggler.h) stops
  // waiting or until `deadline` (the run's time is up: the proposal is not
  // measured). Per compile, in order: true when it had not ended when the
  // request stopped waiting for it (its features are not known yet; it goes
  // on compiling).
  std::vector<bool> features(std::span<const std::pair<Config, double>> compiles,
                double deadline = std::numeric_limits<double>::infinity());
  // What the strategy expects after the batch about to be measured, and its
  // spares: compiled from now on, behind that batch's compiles and any later
  // request (replaces the hint before; what of it had not started is dropped).
  void ahead(std::vector<std::pair<Config, double>> next);
  struct Finish {
    size_t index = 0;  // into the batch
    double at = 0;     // virtual time its result is known
    double gpu_s = 0;
    double time_ms = 0;  // its recorded time (racing's best so far)
  };
  // Schedules a batch: compiles, then GPUs. Its results in the order they
  // finish; report each with reached() before looking at now().
  std::vector<Finish> measure(std::span<const std::pair<Config, ReplayCost>> batch);
  // A result of measure() is reported: the clock moves to its finish.
  void reached(const Finish& f);
  // measure() and reached() for each result in turn, told to `report`; once
  // `report` says false, only what a GPU had started by then is reported.
  void play(std::span<const std::pair<Config, ReplayCost>> batch, const std::function<bool(const Finish&)>& report);
  // Measured while the strategy proposed, from `from` (when the proposal
  // began) to now (when it ended): only those compiled by then, each
  // started before now, reported in the order they finish with now() at
  // their finish while they are. Once `report` says false, only what a GPU
  // had started by then is reported.
  void fill(std::span<const std::pair<Config, ReplayCost>> spare, double from,
            const std::function<bool(const Finish&)>& report);

  double gpu_busy_s() const { return gpu_busy_s_; }  // GPU time of the results reported
  double compile_s() const { return compile_s_; }    // compile time of every compile started
  double strategy_s() const { return strategy_s_; }  // real time added as the strategy's
  size_t compiles() const { return compiles_; }

 private:
  // Adds the real time since the clock's last call (strategy_time).
  void pause_ends();
  void mark();
  // Compiles c from `from` on the slot free first, unless compiled or
  // compiling already: when its cubin is ready.
  double compile(const Config& c, double seconds, double from);
  // Starts what waits ahead on every slot that frees up before `t`.
  void advance(double t);
  // What the GPU spends on `cost` now (racing against best_ms_).
  double gpu_cost(const ReplayCost& cost) const;
  // A finish is reported: the GPU's time is spent and its time is known.
  void count(const Finish& f);
  // The results of finishes scheduled on the GPUs, in the order they
  // finish, as play() reports them.
  void report_in_order(std::vector<Finish> finishes, const std::function<bool(const Finish&)>& report);

  ClockOptions options_;
  double now_ = 0;
  std::vector<double> slot_free_, gpu_free_;
  std::unordered_map<Config, double, ConfigHash> ready_;  // compiled or compiling: when its cubin is there
  std::deque<std::pair<Config, double>> waiting_;  // the last ahead()'s, not started
  double waiting_from_ = 0;                        // when it was given
  std::chrono::steady_clock::time_point mark_;
  double gpu_busy_s_ = 0, compile_s_ = 0, strategy_s_ = 0;
  double best_ms_ = 0;  // the best recorded time reported so far (racing)
  size_t compiles_ = 0;
};

}  // namespace ktune
