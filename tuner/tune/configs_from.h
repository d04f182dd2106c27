// Cross-measuring: `ktune tune SPEC --configs-from DEVICE --top N` measures
// on this GPU (or in a replay) the N fastest configurations another device
// recorded for the same kernel and problem size, so that `ktune compare` finds
// that device's optimum measured here too. The selection is configs_from();
// listed_strategy() proposes exactly those, in order, once each.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "db/store.h"
#include "search/strategy/strategy.h"
#include "tuner/spec/spec.h"

namespace ktune {

struct ConfigsFrom {
  std::string device{};           // as stored
  std::vector<Config> configs{};  // fastest first, valid configurations of the spec's space
  size_t measured = 0;            // configurations `device` measured for the kernel at this size
  size_t outside = 0;             // of the fastest, left out: not valid in the spec's space
  // "the 10 fastest of 1616 configurations NVIDIA H200 measured"
  std::string describe() const;
};

// The `top` fastest configurations `device` (a name as stored) measured for
// the spec's kernel (same name, the spec's parameter names in any order) at
// the spec's problem size, each with its latest evaluation; rows stored by
// replays count, since they are that device's recorded measurements.
// Error::bad_input when it measured none there, naming the devices and problem
// sizes that hold the kernel.
ConfigsFrom configs_from(const Spec& spec, db::Store& store, const std::string& device, size_t top);

// Configurations a file lists: a JSON list of objects, each naming every
// parameter of the spec ({"block_size_x": 128, "tile": 2}). Error::bad_input
// for a file that is no such list, an unknown parameter, a missing one, or a
// value not in its parameter's list (naming the entry). Those the spec's
// restrictions rule out are left out and counted.
struct ListedConfigs {
  std::vector<Config> configs{};  // in the file's order
  size_t outside = 0;             // entries the restrictions rule out
  std::string first_outside{};    // the first of them, "block_size_x=1024, tile=8"
};
ListedConfigs configs_listed_in(const Spec& spec, const std::string& path);

// Proposes `configs` in order, once each, then nothing (the run ends).
std::unique_ptr<Strategy> listed_strategy(std::vector<Config> configs);

}  // namespace ktune
