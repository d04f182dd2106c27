// TuneReport: what `ktune tune` tells the user while and after it tunes — a
// banner that says whether this is a GPU run or a replay, the progress line
// (done/total, best so far, rate, ETA), and the final table of the best
// configurations with their ratio to the best (or the same as JSON).
// Configurations whose times lie within each other's measurement noise are
// ordered by theoretical occupancy.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "db/record.h"
#include "search/strategy/cost.h"
#include "tuner/tune/evaluator.h"
#include "tuner/tune/prior.h"
#include "tuner/cli/print/progress.h"
#include "tuner/spec/spec.h"

namespace ktune {

class GpuSession;

class TuneReport {
 public:
  TuneReport(const Spec& spec, db::DeviceInfo device, bool replay, std::string source, bool interactive);

  void add(const Measured& m);                 // a configuration measured (or replayed) now
  void add_resumed(const db::Evaluation& e);   // one reused from the database
  void set_reusable(size_t n) { reusable_ = n; }  // the database's results a run may reuse
  // A replay of a partial recording: `recorded` of the space's `valid`.
  void set_partial(uint64_t recorded, uint64_t valid) { partial_ = {recorded, valid}; }
  // What the strategy was given as its prior.
  void set_prior(const Prior& prior) { prior_ = prior; }
  void start(uint64_t total);
  void progress(const TraceEntry& t);
  // Re-measures the best k interleaved on the GPU; the table then shows both times.
  void confirm_top(GpuSession& gpu, size_t k);
  void finish(const RunResult& r, bool json, int top, int64_t run_id);
  void finish_interrupted(std::ostream& err);
  bool any_ok() const { return ok_ > 0; }

 private:
  std::vector<const db::Evaluation*> ranked() const;

  const Spec* spec_;
  db::DeviceInfo device_;
  bool replay_;
  std::string source_;
  std::optional<Prior> prior_;
  bool interactive_;
  std::vector<db::Evaluation> evals_;
  std::map<std::string, int> counts_;
  std::map<std::string, double> confirmed_;  // config key -> re-measured median
  size_t ok_ = 0, missing_ = 0, resumed_ = 0, measured_ = 0, reusable_ = 0;
  std::optional<std::pair<uint64_t, uint64_t>> partial_;
  std::unique_ptr<Progress> bar_;
};

}  // namespace ktune
