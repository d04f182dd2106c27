#include "db/interchange/interchange.h"

#include <cstdio>
#include <map>
#include <tuple>
#include <set>

#include "db/interchange/device_names.h"
#include "db/interchange/kerneltuner.h"
#include "db/interchange/ktt.h"
#include "db/interchange/t4.h"
#include "ktune/error.h"

namespace ktune::db {

namespace {

// A T4 file holds "results" and "schema_version", in either order: Kernel
// Tuner writes the results list first and "schema_version" after it, all on
// one line, so in its files the version comes at the very end. A Kernel
// Tuner cache names "tune_params_keys" near its top, and everything else
// that is a JSON object is taken for one (it may be interrupted, hence not
// parseable as it stands).
bool looks_like_t4(const std::string& text) {
  std::string_view head(text.data(), std::min<size_t>(text.size(), 4096));
  return head.find("\"tune_params_keys\"") == std::string_view::npos && text.find("\"results\"") != std::string::npos &&
         text.find("\"schema_version\"") != std::string::npos;
}

// KTT's output names its sections with capitals ("Metadata", "Results"),
// which neither Kernel Tuner format uses.
bool looks_like_ktt(const std::string& text) {
  std::string_view head(text.data(), std::min<size_t>(text.size(), 4096));
  return head.find("\"tune_params_keys\"") == std::string_view::npos && text.find("\"Results\"") != std::string::npos &&
         (head.find("\"KttVersion\"") != std::string_view::npos || head.find("\"Metadata\"") != std::string_view::npos);
}

std::string fnv1a_hex(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string series_name(const ResultSet& rs) {
  return rs.kernel_name + " on " + rs.device_name + " at problem size " + problem_size_key(rs.problem_size);
}

}  // namespace

ResultSet read_results_file(const std::string& path) {
  std::string text = read_text_file(path);
  size_t first = text.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
  if (first == std::string::npos || text[first] != '{')
    throw Error::bad_input("not a Kernel Tuner cache, T4 or KTT results file (expected a JSON object)", {path});
  if (looks_like_ktt(text)) return parse_ktt(text, path);
  return looks_like_t4(text) ? parse_t4(text, path) : parse_kernel_tuner(text, path);
}

KernelInfo imported_kernel(const std::string& name, const std::vector<std::string>& param_names,
                           const std::vector<ValueType>& param_types) {
  KernelInfo k;
  k.name = name;
  k.param_names = param_names;
  k.param_types = param_types;
  std::string sig;
  for (size_t i = 0; i < param_names.size(); ++i) sig += param_names[i] + ":" + type_name(param_types[i]) + ";";
  k.spec_hash = "import:" + fnv1a_hex(sig);
  return k;
}

ImportSummary import_results(Store& store, const ResultSet& rs, const std::string& source,
                             const ImportOptions& options) {
  ImportSummary s;
  s.format = rs.format;
  s.device = options.device.empty() ? rs.device_name : options.device;
  s.kernel = options.kernel.empty() ? rs.kernel_name : options.kernel;
  if (s.device.empty())
    throw Error::bad_input("device: the file names none, and none was given", {source});
  if (s.kernel.empty())
    throw Error::bad_input("kernel: the file names none, and none was given", {source});
  s.records = rs.evaluations.size();
  s.truncated = rs.truncated;
  s.dropped = rs.dropped;

  Store::Transaction tx(store);
  DeviceInfo d;
  d.name = s.device;
  // Neither format records the compute capability; a known name supplies it,
  // unless the store already has one for the device (measured by ktune).
  bool known = false;
  for (const DeviceRow& row : store.devices()) known = known || (row.info.name == s.device && row.info.cc_major > 0);
  if (!known) {
    const int cc = known_compute_capability(s.device);
    d.cc_major = cc / 10;
    d.cc_minor = cc % 10;
  }
  s.series.device_id = store.upsert_device(d);
  s.series.kernel_id = store.upsert_kernel(imported_kernel(s.kernel, rs.param_names, rs.param_types));
  s.series.psize_id = store.upsert_problem_size(rs.problem_size);
  RunInfo run;
  run.strategy = "import";
  run.imported_from = source;
  run.ktune_version = options.ktune_version;
  s.run_id = store.begin_run(run);
  std::set<std::string> have;
  for (const auto& [key, e] : store.measured(s.series)) have.insert(key);
  for (const Evaluation& e : rs.evaluations) {
    if (!have.insert(config_key(e.config)).second) {
      ++s.duplicates;
      continue;
    }
    store.add_evaluation(s.run_id, s.series, e);
    ++s.inserted;
  }
  store.end_run(s.run_id);
  tx.commit();
  return s;
}

ImportSummary import_file(Store& store, const std::string& path, const ImportOptions& options) {
  return import_results(store, read_results_file(path), path, options);
}

std::vector<ResultSet> collect(Store& store, const Filter& f) {
  Filter all = f;
  all.sort = Filter::Sort::Id;
  all.limit = 0;
  std::vector<ResultSet> out;
  std::map<std::tuple<int64_t, int64_t, int64_t, bool>, size_t> index;
  for (ResultRow& r : store.results(all)) {
    auto id = std::make_tuple(r.series.kernel_id, r.series.device_id, r.series.psize_id, r.replayed);
    auto it = index.find(id);
    if (it == index.end()) {
      ResultSet rs;
      rs.kernel_name = r.kernel;
      rs.device_name = r.replayed ? r.device + " (replay)" : r.device;  // never passed off as measured there
      rs.problem_size = r.problem_size;
      if (auto k = store.kernel(r.series.kernel_id)) {
        rs.param_names = k->param_names;
        rs.param_types = k->param_types;
      }
      rs.objectives = {"time"};
      out.push_back(std::move(rs));
      it = index.emplace(id, out.size() - 1).first;
    }
    out[it->second].evaluations.push_back(std::move(r.eval));
  }
  return out;
}

std::optional<ExportFormat> export_format_from_string(const std::string& s) {
  if (s == "kernel-tuner" || s == "kerneltuner" || s == "kt") return ExportFormat::KernelTuner;
  if (s == "t4") return ExportFormat::T4;
  return std::nullopt;
}

size_t export_file(Store& store, const Filter& f, ExportFormat format, const std::string& path) {
  store.require_known(f);
  std::vector<ResultSet> sets = collect(store, f);
  if (sets.empty()) throw Error::bad_input("no results match; nothing to export");
  if (sets.size() > 1) {
    std::string list;
    for (const ResultSet& rs : sets) list += "\n  " + series_name(rs);
    throw Error::bad_input("the results match " + std::to_string(sets.size()) +
                           " kernel/device/problem-size series; a file holds one. Narrow the selection to one kernel "
                           "and device:" + list);
  }
  if (format == ExportFormat::KernelTuner) write_kernel_tuner(sets[0], path);
  else write_t4(sets[0], path);
  return sets[0].evaluations.size();
}

}  // namespace ktune::db
