// merge_databases(): independent ktune databases (the tasks of a job array,
// the runs of several sites) folded into one, with their provenance.
//
// Contract:
// - The inputs are opened read-only and never written. A missing, damaged,
//   foreign or newer-schema input, or one that is the output itself, is
//   Error::bad_input naming the file, and nothing is written.
// - Every run of an input is kept as a run of the output with its own fields
//   (strategy, options, seed, budget, started_at, ended_at, host, ktune
//   version, replay and replay source, imported_from). A run's identity is
//   (started_at, host, imported_from): run ids start at 1 in every file and
//   change on every merge, so they identify nothing across files. A run the
//   output already holds is not added again; its evaluations the output
//   lacks are (a database merged while its run was still going, then again).
// - Evaluations keep their device, kernel (name + spec hash), problem size,
//   configuration and every figure. Within one run, one configuration of one
//   series (kernel, device, problem size) is kept once: the latest (by
//   timestamp, then by the order stored), as resume reads it; a run's
//   re-measurement of its best configurations therefore replaces their first
//   measurement in the output. Rows outside any run count as one run.
//   Merging the same inputs twice adds nothing the second time.
// - Conflicts refuse the whole merge before anything is written: one kernel
//   identity (name + spec hash) with different parameters, one device name
//   with a different compute capability or SM count, one run identity with a
//   different strategy, options, seed, budget, replay or ktune version. The
//   summary lists every conflict found and `merged` is false.
// - Everything else goes into the output in one transaction: all or nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "db/store.h"

namespace ktune::db {

struct MergeConflict {
  std::string kind;    // "kernel", "device" or "run"
  std::string what;    // the kernel, device or run concerned
  std::string detail;  // what differs, and in which files
};

struct MergeInputSummary {
  std::string path{};
  size_t runs = 0;          // runs (imports included) in the input
  size_t runs_added = 0;    // of those, new to the output
  size_t evaluations = 0;   // rows in the input
  size_t inserted = 0;
  size_t duplicates = 0;    // the output's run already held the configuration
  size_t collapsed = 0;     // an earlier row of the same configuration in the same run
};

struct MergeSummary {
  std::vector<MergeInputSummary> inputs{};
  std::vector<MergeConflict> conflicts{};
  bool merged = false;  // false when conflicts refused the merge (nothing written)
  size_t inserted() const;
  size_t runs_added() const;
};

// REQUIRES: `out` opened for writing. Throws Error::bad_input for a bad input
// file; returns the conflicts (merged = false) without writing when any.
MergeSummary merge_databases(Store& out, const std::vector<std::string>& inputs);

}  // namespace ktune::db
