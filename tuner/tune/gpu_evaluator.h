// GpuEvaluator: measures a spec's configurations on one GPU.
//
// Per batch it plans every configuration's build (tuner/build/build.h), hands
// the compiles to a CompilePool (worker processes, through the on-disk cubin
// cache; tuner/compile/pool.h) and gives each configuration whose build is ok
// to the crash-proof Engine as soon as its compile is done, while the pool
// compiles the rest. Before the first measurement it prepares what
// verification compares against: the reference kernel's outputs, a file, or
// (first_valid) the outputs of the first configuration that runs. A failed
// build (no launch, a launch over the architecture's limits, a compile
// error), crashes, hangs and wrong answers all come back as a db::Evaluation
// with a status and a reason. Its work on a few chosen
// configurations outside the batches (run_once, remeasure, profile,
// measure_limits) is in gpu_chosen.cpp.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tuner/build/build.h"
#include "tuner/compile/compiler.h"
#include "tuner/compile/plan.h"
#include "tuner/compile/pool.h"
#include "tuner/tune/evaluator.h"
#include "tuner/gpu/engine.h"
#include "tuner/spec/spec.h"

namespace ktune {

struct GpuEvaluatorOptions {
  int gpu = 0;
  unsigned compile_threads = 0;  // compile worker processes; 0: one per usable CPU
  bool cold = false;             // flush L2 before every sample
  // Launches before a configuration's timed samples. The GPU is kept busy
  // between configurations, so warm_warmup_ms suffices there (2 ms: on 1,616
  // conv2d configurations the times matched a 20 ms warm-up's to run-to-run
  // noise, docs/benchmarks.md); the first job, and one after the GPU sat idle
  // for idle_gap_ms, gets idle_warmup_ms for the clocks to come up.
  double warm_warmup_ms = 2;
  double idle_warmup_ms = gpu::MeasureOptions{}.warmup_ms;
  double idle_gap_ms = 250;
  double timeout_s = 0;          // per launch batch; 0: derived from the best time so far
  // Racing: a configuration whose first race_samples samples all lie above
  // (1 + race_margin) x the best median so far stops sampling (stored with
  // stopped_early). With 20% no configuration of the top 1% of any recorded
  // exhaustive dataset is stopped (10% stops 14 of them; docs/benchmarks.md,
  // "Racing"); the final re-measure never races. Off, whatever this says,
  // where the spec ranks by energy: racing stops by time.
  bool racing = true;
  double race_margin = 0.20;
  int race_samples = 3;
  // The one-sample rule: a first sample above (1 + race_first_margin) x the
  // best stops at once. At 50% it stops none of the top 1% of any recorded
  // dataset either, and saves 74-85% of the GEMM spaces' sampled time where
  // the three-sample rule alone saves 60-71% (docs/benchmarks.md, "Racing").
  double race_first_margin = 0.50;
  double compile_timeout_s = CompilePoolOptions::kDefaultCompileTimeLimitS;  // per compile; 0: none
  // > 0: each configuration's energy per launch from NVML's energy counter
  // over about this many ms of back-to-back launches. 0: kNeededEnergyMs
  // where the spec's objective or a metric needs energy_j, else none.
  static constexpr double kNeededEnergyMs = 1000;
  double energy_ms = 0;
  // Once requested, a job or compile in progress is abandoned and Cancelled thrown.
  Cancel::Token cancel;
  // Shared with the evaluators of the run's other GPUs (PoolEvaluator); null:
  // its own, of compile_threads processes.
  std::shared_ptr<CompilePool> compile_pool;
};

// Whether the spec ranks by energy: its objective is energy, or a metric
// computed from energy_j. Such a run does not race (racing stops by time).
bool ranks_by_energy(const Spec& spec);

class GpuEvaluator : public ConfigEvaluator, public CompileFeatures, public Remeasurer, public Profiler {
 public:
  // Throws Error::failed when no GPU can be opened (with the driver's reason).
  GpuEvaluator(const Spec& spec, GpuEvaluatorOptions options);
  ~GpuEvaluator() override;

  db::DeviceInfo device() const override;
  void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on_measured) override;
  // Queued at once behind any batch, in the pool's order of priority (CompilePlan).
  void compile_ahead(std::span<const std::vector<Value>> next) override;
  // The proposal on a thread of its own; here, one at a time, what its
  // short lists compiled clean (first come, first measured), else the first
  // spare, in the strategy's order, whose compile ahead has ended.
  std::vector<Config> beside(const Beside& b) override;
  bool measures_beside() const override { return true; }
  std::string source() const override;
  // Compiled in the session's pool for its GPU's architecture (tuner/tune/static_features.h).
  std::vector<StaticFeatures> features(std::span<const Config> configs) override;

  std::vector<Measured> remeasure(std::span<const std::vector<Value>> configs, int rounds) override;
  std::vector<Measured> profile(std::span<const std::vector<Value>> configs,
                                const std::vector<std::string>& metrics) override;
  db::DeviceInfo measure_limits() override;
  Offers offers() override { return {.features = this, .remeasurer = this, .profiler = this}; }

  // One configuration compiled (through the cubin cache) and run once, not
  // timed: checked against the expected outputs where the spec has them (a
  // reference kernel's or a file's), and its outputs brought back, every
  // buffer argument with all_buffers, those of a wrong result too.
  struct Ran {
    db::Evaluation eval;     // status, reason, compile figures and resources
    bool cache_hit = false;  // the cubin came from the cache
    bool verified = false;   // compared with the expected outputs (eval.status says how it went)
    std::optional<gpu::Mismatch> mismatch;
    std::vector<gpu::HostBuffer> buffers;  // in argument order
  };
  Ran run_once(const std::vector<Value>& config, bool all_buffers);

  const gpu::DeviceProperties& gpu_device() const { return engine_->device(); }

 private:
  // The compile requests of those of `configs` whose geometry holds, keyed
  // for the plan (what is queued ahead of the GPU).
  std::vector<CompilePlan::Keyed> keyed_requests(std::span<const std::vector<Value>> configs) const;
  // The build's outcome stored, and the configuration measured where it built.
  Measured run_one(const std::vector<Value>& config, const Build& build);
  // REQUIRES: build.ok()
  gpu::Job make_job(const std::vector<Value>& config, const Build& build) const;
  // NVML's view of the device while the job ran, in `e`.
  static void take_device_state(const gpu::Result& r, db::Evaluation& e);
  // The engine's answer to `job`, with the warm-up chosen by how long the GPU has been idle.
  gpu::Result run_job(gpu::Job job, bool race = true);
  // The expected outputs (a reference kernel's or a file's); `own` are the
  // pool's tickets for the worker's kernels, taken before the reference runs.
  void prepare_reference(std::vector<CompilePool::Ticket>& own);

  const Spec* spec_;
  GpuEvaluatorOptions options_;
  Arch arch_;
  std::unique_ptr<gpu::Engine> engine_;
  std::shared_ptr<CompilePool> pool_;
  std::unique_ptr<CompilePlan> plan_;  // this GPU's batches in pool_; before pool_ goes
  std::vector<std::vector<Value>> next_;  // compile_ahead's, for the next evaluate()
  std::vector<std::vector<Value>> held_;  // what the last evaluate() queued ahead
  // During beside(): what features() compiled clean, for the GPU to measure.
  std::mutex compiled_mutex_;
  bool collect_ = false;
  std::deque<Config> compiled_clean_;
  std::atomic<bool> abandon_{false};  // the run's time is up: features() stops waiting
  std::vector<gpu::ArgSpec> args_;
  bool have_expected_ = false;
  double best_median_ms_ = 0;  // of this session's measurements, for the racing rule
  std::optional<std::chrono::steady_clock::time_point> gpu_idle_since_;  // end of the last job
};

}  // namespace ktune
