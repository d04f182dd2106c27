// GpuSession: measures a spec's configurations on one GPU.
//
// Per batch it hands every configuration to a CompilePool (worker processes,
// through the on-disk cubin cache; tuner/compile_pool.h) and gives each one to
// the crash-proof GpuEvaluator as soon as its compile is done, while the pool
// compiles the rest. Before the first measurement it prepares what
// verification compares against: the reference kernel's outputs, a file, or
// (first_valid) the outputs of the first configuration that runs. Geometry
// over a limit, compile errors, crashes, hangs and wrong answers all come back
// as a db::Evaluation with a status and a reason.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tuner/compile_pool.h"
#include "tuner/compiler.h"
#include "tuner/config_evaluator.h"
#include "tuner/evaluator.h"
#include "tuner/spec.h"

namespace ktune {

struct GpuSessionOptions {
  int gpu = 0;
  unsigned compile_threads = 0;  // compile worker processes; 0: one per core
  bool cold = false;             // flush L2 before every sample
  double timeout_s = 0;          // per launch batch; 0: derived from the best time so far
  double compile_timeout_s = CompilePoolOptions::kDefaultCompileTimeLimitS;  // per compile; 0: none
  const std::atomic<bool>* interrupt = nullptr;
};

class GpuSession : public ConfigEvaluator {
 public:
  // Throws Error::failed when no GPU can be opened (with the driver's reason).
  GpuSession(const Spec& spec, GpuSessionOptions options);
  ~GpuSession() override;

  db::DeviceInfo device() const override;
  std::vector<Measured> evaluate(std::span<const std::vector<Value>> configs) override;
  bool replay() const override { return false; }
  std::string source() const override;

  // Re-measures configurations interleaved (round-robin, `rounds` times), so
  // that a winner is not an accident of clock drift; returns the median of
  // each one's per-round medians (nullopt where a run failed).
  std::vector<std::optional<double>> remeasure(const std::vector<std::vector<Value>>& configs, int rounds);

  const gpu::DeviceInfo& gpu_device() const { return engine_->device(); }

 private:
  struct Compiled;
  // Geometry, and the compile request for the pool (nullopt when the geometry fails).
  Compiled prepare(const std::vector<Value>& config, std::optional<CompileRequest>& request) const;
  Measured run_one(const std::vector<Value>& config, const Compiled& compiled);
  gpu::Job make_job(const std::vector<Value>& config, const Compiled& compiled) const;
  void prepare_reference();

  const Spec* spec_;
  GpuSessionOptions options_;
  Arch arch_;
  std::unique_ptr<gpu::GpuEvaluator> engine_;
  std::unique_ptr<CompilePool> pool_;
  std::vector<gpu::ArgSpec> args_;
  bool have_expected_ = false;
};

// The engine's description of the spec's kernel arguments. Throws
// Error::bad_input for an argument the engine cannot provide.
std::vector<gpu::ArgSpec> engine_arguments(const Spec& spec);

}  // namespace ktune
