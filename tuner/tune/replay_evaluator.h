// ReplayEvaluator: answers each configuration with its recorded measurement
// from a ktune database or a Kernel Tuner cache file, recorded failures
// included, and accounts the recorded compile/benchmark/framework time as
// the configuration's cost so strategies can be compared on a tuning-time
// axis. The recorded parameters must match the spec's (names, in any order):
// a mismatch is Error::bad_input naming the difference. So is a recording made
// at another problem size than the spec's (Kernel Tuner refuses such a cache
// too): its times would be stored under a size they were never measured at.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "db/record/record.h"
#include "search/strategy/cost.h"
#include "search/strategy/strategy.h"
#include "search/strategy/replay_clock.h"
#include "tuner/tune/evaluator.h"
#include "tuner/spec/spec.h"

namespace ktune {

// The problem size a spec's measurements are filed under (the geometry of its
// first valid configuration; empty when that cannot be evaluated).
db::ProblemSize spec_problem_size(const Spec& spec);

class ReplayEvaluator : public ConfigEvaluator, public CompileFeatures, public RecordedData {
 public:
  // `device` selects one device's results where the database holds several;
  // `device_subject` names that device in the error that asks for one
  // ("device: ..."; "prior device" for a prior), so that a caller can tell
  // which of its inputs to ask for.
  // `any_problem_size`: take the recording whatever problem size it was made
  // at (a prior is knowledge from another size; a replay answers for its own).
  ReplayEvaluator(const Spec& spec, const std::string& data_path, const std::string& device = "",
                  const std::string& device_subject = "device", bool any_problem_size = false);

  db::DeviceInfo device() const override { return device_; }
  void evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on_measured) override;
  std::string source() const override { return path_; }
  Offers offers() override { return {.features = this, .recorded = this}; }

  size_t recorded() const { return records_.size(); }
  // Recorded configurations the spec's space counts as valid, and whether
  // that is fewer than the space has (an interrupted recording).
  uint64_t recorded_valid() const { return recorded_valid_; }
  bool partial() const { return recorded_valid_ < spec_->space().count_valid(); }
  const SearchSpace& space() const { return spec_->space(); }
  std::optional<RecordedPart> recorded_part() const override;
  // Every recorded configuration as (key -> evaluation), in the spec's parameter order.
  const std::map<std::string, db::Evaluation>& records() const { return records_; }
  // Recorded cost of one evaluation, seconds.
  static double recorded_cost_s(const db::Evaluation& e);
  // The part of it that compiled the configuration (what a features request costs), seconds.
  static double recorded_compile_s(const db::Evaluation& e) { return e.compile_ms.value_or(0) / 1000.0; }
  // Its recorded costs as the replay's clock takes them: the compile, the
  // rest (the GPU's), and what racing needs (ClockOptions::racing).
  static ReplayCost recorded_cost(const db::Evaluation& e);
  // What the offline compile said of each configuration, taken from its
  // recorded resources (registers, shared and local memory, theoretical
  // occupancy): the StrategyContext::features of a replay. Default features
  // for one not recorded. What the compiles cost is the clock's
  // (PoolEvaluator's simulated workers); here they cost nothing.
  std::vector<StaticFeatures> features(std::span<const Config> configs) override;
  // The recorded compile time of a configuration, seconds (0: not recorded).
  virtual double compile_s(const Config& c) const;
  // What reading the recording took on trust (names matched ignoring case,
  // single-valued parameters set aside), for the user.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  void adopt(std::vector<std::string> names, std::vector<db::Evaluation> evals);
  void match_names(std::vector<std::string>& names, std::vector<db::Evaluation>& evals,
                   const std::set<std::string>& wanted);

  const Spec* spec_;
  std::string path_;
  db::DeviceInfo device_;
  std::map<std::string, db::Evaluation> records_;
  uint64_t recorded_valid_ = 0;
  std::vector<std::string> notes_;
};

}  // namespace ktune
