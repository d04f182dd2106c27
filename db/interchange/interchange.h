// Moving results between the Store and other tools' files.
//
// import_file() reads a Kernel Tuner cache or a T4 file (detected from its
// content), and records it as one run marked imported_from = the path, under
// a kernel keyed by name and its parameter names/types. The device name comes
// from the file unless overridden; a file that names none needs the override.
// Configurations already in the store for that kernel/device/problem size are
// skipped, so importing twice adds nothing. All of one file goes in one
// transaction: an import is all or nothing.
//
// export_file() writes one (kernel, device, problem size) series selected by
// a Filter; a filter that matches several throws Error::bad_input listing
// them. Import of an export gives back the same evaluations.
#pragma once

#include <string>
#include <vector>

#include "db/interchange/result_set.h"
#include "db/store.h"

namespace ktune::db {

struct ImportOptions {
  std::string device{};         // overrides the file's device name
  std::string kernel{};         // overrides the file's kernel name
  std::string ktune_version{};  // recorded on the run
};

struct ImportSummary {
  std::string format{};
  std::string kernel{};
  std::string device{};
  int64_t run_id = 0;
  SeriesIds series{};
  size_t records = 0;     // evaluations in the file
  size_t inserted = 0;
  size_t duplicates = 0;  // already in the store, skipped
  bool truncated = false; // an interrupted Kernel Tuner file was repaired
  size_t dropped = 0;     // partial records lost to the interruption
};

// Reads either format; throws Error::bad_input for anything else.
ResultSet read_results_file(const std::string& path);

ImportSummary import_results(Store& store, const ResultSet& rs, const std::string& source,
                             const ImportOptions& options = {});
ImportSummary import_file(Store& store, const std::string& path, const ImportOptions& options = {});

// The kernel identity an import uses: the spec hash is derived from the
// parameter names and types, so re-imports land on the same kernel record.
KernelInfo imported_kernel(const std::string& name, const std::vector<std::string>& param_names,
                           const std::vector<ValueType>& param_types);

// One ResultSet per (kernel, device, problem size) matching f, evaluations in
// insertion order.
std::vector<ResultSet> collect(Store& store, const Filter& f);

enum class ExportFormat { KernelTuner, T4 };
// "kernel-tuner" / "t4"; std::nullopt otherwise.
std::optional<ExportFormat> export_format_from_string(const std::string& s);
// Returns the number of evaluations written.
size_t export_file(Store& store, const Filter& f, ExportFormat format, const std::string& path);

}  // namespace ktune::db
