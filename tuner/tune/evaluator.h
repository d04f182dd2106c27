// ConfigEvaluator: what the tuning loop asks to measure one configuration.
//
// Two runners: GpuEvaluator (tuner/tune/gpu_evaluator.h) compiles through NVRTC
// and measures on a GPU through the crash-proof worker; ReplayEvaluator
// (tuner/tune/replay_evaluator.h) answers from recorded measurements (a ktune database or a
// Kernel Tuner cache file), including recorded failures and recorded times.
// Two spread the batches of one run over several runners: PoolEvaluator
// (tuner/tune/pool_evaluator.h: threads, or simulated GPUs) and MpiEvaluator
// (tuner/mpi/mpi_evaluator.h: the ranks of an MPI job).
// Either way a configuration's failure is a db::Evaluation with a status and a
// reason, never an exception; exceptions mean the whole run cannot go on.
// What only some of them can do (compile features, measure again, profile,
// answer from recorded data) are capabilities each offers or not
// (ConfigEvaluator::offers()): callers ask for one and go without it where
// it is not offered, never asking which class answers.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "db/record/record.h"
#include "search/strategy/strategy.h"
#include "search/expr/value.h"
#include "tuner/spec/spec.h"

namespace ktune {

struct Measured {
  db::Evaluation eval;
  // Seconds this configuration cost the tuner (compile + verify + benchmark +
  // framework): wall time live, the recorded times in a replay.
  double cost_s = 0;
  // Replay only: the configuration is not in the recorded data.
  bool missing = false;
};

// The spec's objective for a stored or fresh evaluation: its time, the
// recorded metric of that name (with or without a time: an objective only
// recordings hold has none), else the metric computed from its time;
// nullopt for a failed evaluation.
std::optional<double> objective_of(const Spec& spec, const db::Evaluation& e);

// The evaluations with an objective, best first. Within measurement noise
// (the larger standard deviation of two neighbours) the order is chance, so
// there the one with the higher theoretical occupancy goes first.
std::vector<const db::Evaluation*> rank_results(const Spec& spec, const std::vector<db::Evaluation>& evals);

// What a runner may offer beyond the general contract below, each a small
// interface of its own; ConfigEvaluator::offers() says which a runner has.

// What the offline compile says about each configuration, for the
// strategies (StrategyContext::features): compiled now on a GPU host, the
// recorded figures in a replay. Not offered: the strategies go without.
class CompileFeatures {
 public:
  virtual ~CompileFeatures() = default;
  virtual std::vector<StaticFeatures> features(std::span<const Config> configs) = 0;
};

// Measures configurations again, interleaved (round-robin, `rounds` times),
// so that a winner is not an accident of clock drift: one Measured per
// configuration, in order; an ok one's time is the median of its per-round
// medians, its samples those medians. Not offered where nothing can be
// measured again (a replay holds one recorded time per configuration).
class Remeasurer {
 public:
  virtual ~Remeasurer() = default;
  virtual std::vector<Measured> remeasure(std::span<const std::vector<Value>> configs, int rounds) = 0;
};

// Runs kernels under the profiler. Not offered where nothing runs (a replay).
class Profiler {
 public:
  virtual ~Profiler() = default;
  // Hardware counters of one launch of each configuration (CUPTI; metrics
  // empty: the standard set, tuner/gpu/counters.h): one Measured per
  // configuration, in order, its counter fields and metrics set, its reason
  // saying why counters are missing.
  virtual std::vector<Measured> profile(std::span<const std::vector<Value>> configs,
                                        const std::vector<std::string>& metrics) = 0;
  // The device with its measured roofs (copy bandwidth, FP32 FMA
  // throughput), from two kernels of ktune's own run on it.
  virtual db::DeviceInfo measure_limits() = 0;
};

// Answers that come from recorded data, not from a GPU now (a replay).
class RecordedData {
 public:
  virtual ~RecordedData() = default;
  // A partial recording (an interrupted Kernel Tuner cache): how many valid
  // configurations it holds, and which; nullopt where every configuration
  // can be evaluated.
  struct RecordedPart {
    uint64_t valid = 0;
    std::function<bool(const Config&)> holds;
  };
  virtual std::optional<RecordedPart> recorded_part() const { return std::nullopt; }
  // Simulated workers (a replay spread over virtual GPUs): the virtual wall
  // time so far, seconds, on which a time budget is spent. nullopt: the
  // replay's time is its summed cost_s.
  virtual std::optional<double> virtual_time() const { return std::nullopt; }
};

struct PoolStats;  // tuner/tune/pool_evaluator.h

class ConfigEvaluator {
 public:
  virtual ~ConfigEvaluator() = default;
  // The device measurements are (or were) taken on.
  virtual db::DeviceInfo device() const = 0;
  // Called as each configuration of a batch is done (index into the batch),
  // in the order they finish, so that the caller stores each one at once: a
  // crash or kill -9 then loses only the configuration in flight, not the
  // rest of a batch (64 configurations for brute_force). Returns false when
  // no more of the batch may start (the time budget is spent).
  using OnMeasured = std::function<bool(size_t index, const Measured&)>;
  // Measures a batch, the whole of it unless on_measured says stop; the
  // evaluator may compile the whole batch ahead of the GPU.
  virtual void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on_measured) = 0;
  // What the run expects to ask for after the batch that evaluate() is given
  // next, most likely first (CostOptions::ahead): an evaluator may compile
  // them behind that batch. Each call replaces the one before: what was
  // compiling ahead that the next batch does not take and this call does
  // not name is dropped; an empty call drops it all at once (the run ended).
  virtual void compile_ahead(std::span<const std::vector<Value>> next) { (void)next; }
  // Makes the strategy's proposal and meanwhile measures, so that the GPU
  // does not wait while the strategy works (CostOptions::beside): the
  // `spare` configurations (named in the last compile_ahead()) and those
  // the proposal's features() requests compile clean (no failure, no
  // spills), each as its compile ends, only where `wanted`, none started
  // once the proposal is made; each reported to `on_measured` (false: start
  // no more). Returns the proposal. On a GPU the proposal is made on a
  // thread of its own; simulated GPUs play the measurements out on their
  // clock over the time the proposal took. Where measures_beside() is false
  // it only proposes.
  struct Beside {
    std::function<std::vector<Config>()> propose;
    std::span<const std::vector<Value>> spare;
    std::function<bool(const std::vector<Value>&)> wanted;
    std::function<bool(const Measured&)> on_measured;
    // Seconds of the run's time budget left: once none is, the proposal's
    // features() requests stop waiting (what has not compiled is answered
    // as not compiled; the proposal is not measured).
    std::function<double()> time_left;
    // `propose` measures a batch through evaluate() and proposes nothing
    // (CostOptions::workers > 1): the spares fill what the batch leaves
    // idle, a worker that has ended its part while others end theirs.
    bool batch = false;
  };
  virtual std::vector<Config> beside(const Beside& b) { return b.propose(); }
  virtual bool measures_beside() const { return false; }
  virtual std::string source() const = 0;  // "GPU 0: NVIDIA H100 80GB HBM3" or the replayed file
  // How many configurations it measures at once (a PoolEvaluator's workers).
  virtual size_t workers() const { return 1; }
  // What the runner offers beyond this contract: null where it does not.
  // May change as the run goes (a member lost with the capability).
  struct Offers {
    CompileFeatures* features = nullptr;
    Remeasurer* remeasurer = nullptr;
    Profiler* profiler = nullptr;
    RecordedData* recorded = nullptr;  // set: answers come from recorded data (a replay)
    const PoolStats* pool = nullptr;   // how a pool's workers spent the run
  };
  virtual Offers offers() { return {}; }
};

}  // namespace ktune
