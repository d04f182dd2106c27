// TuneReport: what `ktune tune` tells the user while and after it tunes — a
// banner that says whether this is a GPU run or a replay, the progress line
// (done/total, best so far, rate, ETA), and the final table of the best
// configurations with their ratio to the best (or the same as JSON), ranked
// by rank_results (tuner/tune/evaluator.h). It observes a tune::run and
// never measures: the re-measured times it shows are the run's, as stored.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "db/record/record.h"
#include "tuner/compile/pool.h"
#include "search/strategy/cost.h"
#include "tuner/tune/evaluator.h"
#include "tuner/tune/pool_evaluator.h"
#include "tuner/tune/prior.h"
#include "tuner/cli/print/json.h"
#include "tuner/tune/run.h"
#include "tuner/cli/print/progress.h"
#include "tuner/spec/spec.h"

namespace ktune {

class TuneReport : public tune::RunObserver {
 public:
  TuneReport(const Spec& spec, bool interactive);

  void started(const tune::RunStart& start) override;
  void measured(const Measured& m) override;
  void reused(const db::Evaluation& e) override;
  void progress(const TraceEntry& t) override;
  void remeasured(const Measured& m) override;  // the table then shows both times
  // A PoolEvaluator's account of its workers, before finish().
  void pool(const PoolStats& stats) { pool_ = stats; }
  // A live run's compile pool: every compile the run caused, before finish().
  void compiles(const CompilePool::Counts& counts) { compiles_ = counts; }
  // A replay: the best objective of the whole recording, which the summary
  // sets the run's best against.
  void recorded_optimum(double best) { recorded_optimum_ = best; }
  // The summary: what the run found, the best `top` as a table or JSON. An
  // interrupted run's says so ("interrupted": true) and holds what finished.
  void finish(const tune::RunOutcome& outcome, bool json, int top);
  // An interrupted run, after its summary: how many evaluations are stored.
  void finish_interrupted(std::ostream& err);
  bool any_ok() const { return ok_ > 0; }
  // A further member of the --json summary (e.g. "profile": tune --profile-top).
  void add_json(const std::string& key, cli::Json value) { extra_json_[key] = std::move(value); }

 private:
  // The parts of finish(), given the results as rank_results orders them:
  // the --json summary and its "best" rows; the text summary (what the run
  // did and where its time went) and the table of the best `top`.
  cli::Json summary_json(const tune::RunOutcome& outcome, const std::vector<const db::Evaluation*>& r, int top) const;
  cli::Json best_json(const std::vector<const db::Evaluation*>& r, int top) const;
  void print_summary(const tune::RunOutcome& outcome, const std::vector<const db::Evaluation*>& r) const;
  void print_best(const std::vector<const db::Evaluation*>& r, int top) const;

  cli::Json extra_json_ = cli::Json::object();
  const Spec* spec_;
  db::DeviceInfo device_;
  bool replay_ = false;
  std::string source_;
  std::optional<Prior> prior_;
  bool interactive_;
  std::vector<db::Evaluation> evals_;
  std::map<std::string, int> counts_;
  std::map<std::string, double> confirmed_;  // config key -> re-measured median
  std::vector<std::vector<Value>> reused_;     // configurations taken from the database
  size_t ok_ = 0, missing_ = 0, resumed_ = 0, measured_ = 0, reusable_ = 0;
  std::optional<std::pair<uint64_t, uint64_t>> partial_;
  std::optional<uint64_t> within_;  // RunStart::within
  size_t workers_ = 1;
  std::optional<PoolStats> pool_;
  std::optional<CompilePool::Counts> compiles_;
  std::optional<double> recorded_optimum_;
  std::unique_ptr<Progress> bar_;
  // Where this run's evaluations spent their time, ms (reused ones left
  // out): NVRTC in the compile workers (cache hits cost nothing) against the
  // GPU worker's load, verify and benchmark phases, and the framework's share.
  struct TimeSplit {
    double compile = 0, load = 0, verify = 0, measure = 0, framework = 0;
    size_t compiled = 0, stopped_early = 0;
    double gpu() const { return load + verify + measure; }
  } split_;
};

}  // namespace ktune
