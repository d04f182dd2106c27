// Priors: results of the same kernel measured elsewhere (another GPU, another
// problem size), handed to the strategy as StrategyContext::prior so that a
// tuning run on a new GPU starts from what ranked well on the old one.
//
// `ktune tune` takes one from --prior (a ktune database or a Kernel Tuner
// cache, read as --simulate reads it) or, by default, from its own database:
// the series of the same kernel (same name and parameters) with the most
// successful results, other than the one being tuned. `strategies compare`
// takes one from --prior.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "db/store.h"
#include "search/strategy/strategy.h"
#include "tuner/spec/spec.h"

namespace ktune {

struct Prior {
  std::vector<Observation> observations;  // in the spec's configurations, lower is better
  std::string device;                      // where it was measured
  std::string problem_size;                // "[268435456]"; "" when not known
  std::string source;                      // the file or database it came from
  bool replayed = false;                   // stored by replays (tune --simulate) of recorded data
  // How a file's records were read as the spec's configurations (a recorded
  // name that differs in case only, a single-valued extra parameter set
  // aside: ReplayEvaluator::notes()), for the caller to print.
  std::vector<std::string> notes;
  size_t successes() const;                // observations with a score
  // "852 results on NVIDIA H200 [268435456] from ktune.db",
  // "100 results, 61 successful, on ..." where some failed there
  std::string describe() const;
};

// From a ktune database or Kernel Tuner cache; `device` picks one device's
// results where it holds several. Configurations outside the spec's space are
// left out. Error::bad_input when the file cannot be read or its parameters
// are not the spec's.
Prior load_prior(const Spec& spec, const std::string& path, const std::string& device = "");

// The store's series of this kernel (same name, same parameters in the same
// order) with the most successful results, the run's own excepted: `tuned`'s
// replayed rows for a replay, its measured ones for a GPU run (which resume
// reads instead). So a GPU run on a device that a replay was filed under
// starts from the replay's recorded data. nullopt when there is none with a
// success.
std::optional<Prior> prior_from_store(const Spec& spec, db::Store& store, const db::SeriesIds& tuned, bool replay);

}  // namespace ktune
