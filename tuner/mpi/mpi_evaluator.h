// The tuning run spread over the ranks of an MPI job (`mpirun -n N ktune
// tune ...`, or srun): rank 0 runs the strategy, the store and the report
// through an MpiEvaluator; every other rank serves (serve()): it builds its
// own evaluator (its GPU, or the replayed recording), evaluates the
// configurations rank 0 sends and sends each result back as it finishes.
//
// Rank 0 evaluates too, on a thread of its own with its own evaluator, so N
// ranks are N workers. A batch is handed out in chunks as workers free up,
// each a share of what is left (guided self-scheduling: half the remainder
// split over the workers, at least one configuration), with the chunk each
// rank takes next to compile ahead while it measures (Dispatch), so that the
// GPUs do not wait for compiles while the tail of a batch still balances. Rank 0's
// evaluator also answers everything but evaluate(): the device, the compile
// features for the strategies, the final re-measure, a partial recording.
//
// Configurations travel as value indices of the spec's space, results as
// wire-encoded Measured (tuner/base/wire.h); every rank loads the same spec,
// which the first message checks (the spec hash), and a GPU rank must have
// the same GPU model as rank 0 (one run is one device's series). A rank that
// cannot build its evaluator fails the run with its message. A rank whose
// evaluator throws while evaluating (an Error: a GPU lost, a GPU worker that
// cannot be started again) is lost, not the run: a line on stderr says so,
// it is sent no more chunks, and what it held unreported goes to the other
// ranks (Dispatch::retire); only when every rank is lost does the first
// loss's error end the run. Where rank 0's own evaluator is lost, the final
// re-measure is skipped, and a strategy that asks for compile features still
// asks it (its error then ends the run). A rank whose process dies ends the
// whole MPI job (the launcher aborts it). Once on_measured says stop, the
// chunks in flight are stopped and their late results dropped, as a single
// GPU cancels its compiles.
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tuner/mpi/world.h"
#include "tuner/spec/spec.h"
#include "tuner/tune/dispatch.h"
#include "tuner/tune/evaluator.h"

namespace ktune::mpi {

// Offers what rank 0's evaluator offers: its compile features, a re-measure and a profiler on rank
// 0's GPU while it is not lost, a recording's part where the ranks replay
// (each replays on its own clock: the run's time is the summed cost_s).
class MpiEvaluator : public ConfigEvaluator,
                     public CompileFeatures,
                     public Remeasurer,
                     public Profiler,
                     public RecordedData {
 public:
  // REQUIRES: world.rank() == 0, every other rank in serve(). Waits for each
  // rank's Ready; throws Error when one failed or does not match (then every
  // rank has been told to shut down).
  MpiEvaluator(World& world, const Spec& spec, std::unique_ptr<ConfigEvaluator> local);
  // Tells every rank to shut down (after stopping what is in flight).
  ~MpiEvaluator() override;

  db::DeviceInfo device() const override { return local_->device(); }
  void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on_measured) override;
  // Shared out among the ranks by the Dispatch, each compiling its part.
  void compile_ahead(std::span<const std::vector<Value>> next) override;
  std::string source() const override { return local_->source(); }
  std::vector<StaticFeatures> features(std::span<const Config> configs) override {
    return local_offers_.features->features(configs);
  }
  std::optional<RecordedPart> recorded_part() const override {
    return local_offers_.recorded ? local_offers_.recorded->recorded_part() : std::nullopt;
  }
  // Offered only while rank 0's evaluator is not lost (offers()).
  std::vector<Measured> remeasure(std::span<const std::vector<Value>> configs, int rounds) override {
    return local_offers_.remeasurer->remeasure(configs, rounds);
  }
  std::vector<Measured> profile(std::span<const std::vector<Value>> configs,
                                const std::vector<std::string>& metrics) override {
    return local_offers_.profiler->profile(configs, metrics);
  }
  db::DeviceInfo measure_limits() override { return local_offers_.profiler->measure_limits(); }
  size_t workers() const override { return static_cast<size_t>(world_->size()); }
  Offers offers() override {
    Offers o;
    o.features = local_offers_.features ? this : nullptr;
    o.remeasurer = local_offers_.remeasurer && !lost_[0] ? this : nullptr;
    o.profiler = local_offers_.profiler && !lost_[0] ? this : nullptr;
    o.recorded = local_offers_.recorded ? this : nullptr;
    return o;
  }

 private:
  class LocalThread;
  struct Slot;
  class Round;
  void shut_down() noexcept;

  World* world_;
  const Spec* spec_;
  std::unique_ptr<ConfigEvaluator> local_;
  Offers local_offers_;  // local_'s
  std::vector<std::string> hosts_;  // per rank, for messages
  std::unique_ptr<LocalThread> thread_;
  Dispatch dispatch_;
  std::vector<bool> lost_;        // per rank: its evaluator threw
  std::exception_ptr first_loss_;  // rethrown once every rank is lost
  uint64_t next_chunk_ = 1;
  bool shut_down_ = false;
};

// Ranks > 0: builds the local evaluator with `make_local` (an Error there is
// reported to rank 0), then evaluates chunks until rank 0 says shut down.
void serve(World& world, const Spec& spec, const std::function<std::unique_ptr<ConfigEvaluator>()>& make_local);

}  // namespace ktune::mpi
