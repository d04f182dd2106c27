// Hardware counters for stored winners: `ktune profile` and `tune --profile-top`.
//
// Takes the best stored configurations of the spec's series on the
// evaluator's device (ranked by the spec's objective), or configurations the
// user names, runs each once under CUPTI (the evaluator's Profiler) and adds
// the counters to the stored evaluation they describe
// (db::Store::add_figures): the winner's row then says why it is fast.
#pragma once

#include <string>
#include <vector>

#include "db/store.h"
#include "search/expr/value.h"
#include "tuner/spec/spec.h"
#include "tuner/tune/evaluator.h"

namespace ktune::tune {

struct ProfiledRow {
  int64_t evaluation_id = 0;
  db::Evaluation eval;   // as stored, now with its counters
  std::string note;      // why counters are missing, or metrics the GPU lacks; "" when all came
  double cost_s = 0;     // the profiled launch with its replays, as the tuner saw it
};

struct ProfileOptions {
  size_t top = 5;                          // the best N stored configurations...
  std::vector<std::vector<Value>> configs; // ...or these (each must be stored)
  std::vector<std::string> metrics;        // extra CUPTI metric names, stored under their names
};

// Bad input when the series holds nothing to profile or a named
// configuration is not stored; Error::failed when the evaluator offers no
// Profiler (a replay).
std::vector<ProfiledRow> profile_stored(const Spec& spec, ConfigEvaluator& evaluator, db::Store& store,
                                        const ProfileOptions& options);

}  // namespace ktune::tune
