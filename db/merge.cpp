#include "db/merge.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "ktune/error.h"

namespace ktune::db {

namespace {

using RunKey = std::tuple<std::string, std::string, std::string>;  // started_at, host, imported_from
using RowKey = std::tuple<int64_t, int64_t, int64_t, std::string>; // kernel, device, problem size, config key

RunKey run_key(const RunInfo& r) { return {r.started_at, r.host, r.imported_from}; }

std::string describe_run(const RunInfo& r) {
  std::string s = r.imported_from.empty() ? "run of " + (r.strategy.empty() ? "?" : r.strategy)
                                          : "import of " + r.imported_from;
  s.append(" started ").append(r.started_at.empty() ? "(unknown)" : r.started_at);
  if (!r.host.empty()) s.append(" on ").append(r.host);
  return s;
}

std::string params_text(const KernelInfo& k) {
  std::string s = "[";
  for (size_t i = 0; i < k.param_names.size(); ++i) {
    if (i) s += ", ";
    s.append(k.param_names[i]).append(":").append(type_name(k.param_types[i]));
  }
  return s + "]";
}

// Where the first of two disagreeing records came from, and the second.
std::string both(const std::string& a, const std::string& file_a, const std::string& b, const std::string& file_b) {
  return a + " in " + file_a + ", " + b + " in " + file_b;
}

// A failure reading an input is the input's fault: a damaged file is bad
// input (exit 2), and its message already names the file.
template <class F>
auto reading(F f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    if (e.kind() == Error::Kind::BadInput) throw;
    throw Error::bad_input(e.message(), e.where());
  }
}

std::unique_ptr<Store> open_input(const std::string& path, const std::string& out_path) {
  std::error_code ec;
  if (std::filesystem::equivalent(path, out_path, ec))
    throw Error::bad_input(path + " is the output database itself; merge reads other databases into it");
  StoreOptions o;
  o.read_only = true;
  return reading([&] { return std::make_unique<Store>(path, o); });
}

// What one side of the merge (the output, or an input) says about each
// identity, and the file that said it first.
struct Catalogue {
  std::map<std::pair<std::string, std::string>, std::pair<KernelInfo, std::string>> kernels;
  std::map<std::string, std::pair<DeviceInfo, std::string>> devices;
  std::map<RunKey, std::pair<RunInfo, std::string>> runs;
  std::vector<MergeConflict> conflicts;

  void add_kernel(const KernelInfo& k, const std::string& file) {
    auto [it, fresh] = kernels.try_emplace({k.name, k.spec_hash}, k, file);
    const KernelInfo& was = it->second.first;
    if (!fresh && (was.param_names != k.param_names || was.param_types != k.param_types))
      conflicts.push_back({"kernel", k.name + " (spec hash " + k.spec_hash + ")",
                           "parameters " + both(params_text(was), it->second.second, params_text(k), file)});
  }
  void add_device(const DeviceInfo& d, const std::string& file) {
    auto [it, fresh] = devices.try_emplace(d.name, d, file);
    const DeviceInfo& was = it->second.first;
    if (fresh) return;
    auto cc = [](const DeviceInfo& x) { return "sm_" + std::to_string(x.cc_major) + std::to_string(x.cc_minor); };
    if (was.cc_major && d.cc_major && (was.cc_major != d.cc_major || was.cc_minor != d.cc_minor))
      conflicts.push_back({"device", d.name, "compute capability " + both(cc(was), it->second.second, cc(d), file)});
    if (was.sm_count && d.sm_count && was.sm_count != d.sm_count)
      conflicts.push_back({"device", d.name,
                           "SM count " + both(std::to_string(was.sm_count), it->second.second,
                                              std::to_string(d.sm_count), file)});
  }
  void add_run(const RunInfo& r, const std::string& file) {
    auto [it, fresh] = runs.try_emplace(run_key(r), r, file);
    const RunInfo& was = it->second.first;
    if (fresh) return;
    std::string differs;
    auto check = [&](const char* name, const std::string& a, const std::string& b) {
      if (a != b) differs.append(differs.empty() ? "" : "; ").append(name).append(" '").append(a).append("' vs '")
                      .append(b).append("'");
    };
    auto seed = [](const RunInfo& x) { return x.seed ? std::to_string(*x.seed) : std::string(); };
    check("strategy", was.strategy, r.strategy);
    check("strategy options", was.strategy_options, r.strategy_options);
    check("seed", seed(was), seed(r));
    check("budget", was.budget, r.budget);
    check("replay", was.replay ? "yes" : "no", r.replay ? "yes" : "no");
    check("replay source", was.replay_source, r.replay_source);
    check("ktune version", was.ktune_version, r.ktune_version);
    if (!differs.empty())
      conflicts.push_back({"run", describe_run(r), differs + " (" + it->second.second + " vs " + file + ")"});
  }
};

// Copies one input's runs and evaluations into the output (inside its
// transaction); `out_runs` maps run identities to the output's run ids.
class InputCopy {
 public:
  InputCopy(Store& out, Store& in, std::map<RunKey, int64_t>& out_runs, MergeInputSummary& sum)
      : out_(out), in_(in), out_runs_(out_runs), sum_(sum) {}

  void run() {
    for (const DeviceRow& d : reading([&] { return in_.devices(); }))
      devices_[d.id] = out_.upsert_device(d.info);
    for (const KernelRow& k : reading([&] { return in_.kernels(); }))
      kernels_[k.id] = out_.upsert_kernel(k.info);
    for (const RunRow& r : reading([&] { return in_.runs(); })) copy_run(r);
    Filter loose;
    loose.outside_runs = true;
    copy_rows(std::nullopt, loose);
  }

 private:
  void copy_run(const RunRow& r) {
    ++sum_.runs;
    auto it = out_runs_.find(run_key(r.info));
    if (it == out_runs_.end()) {
      it = out_runs_.emplace(run_key(r.info), out_.begin_run(r.info)).first;
      ++sum_.runs_added;
    } else if (!r.info.ended_at.empty()) {
      out_.end_run_if_later(it->second, r.info.ended_at);  // a run merged while it went on, now finished
    }
    Filter f;
    f.run_id = r.id;
    copy_rows(it->second, f);
  }

  SeriesIds series(const ResultRow& row) {
    SeriesIds s;
    s.kernel_id = kernels_.at(row.series.kernel_id);
    s.device_id = devices_.at(row.series.device_id);
    const std::string key = problem_size_key(row.problem_size);
    auto it = sizes_.find(key);
    if (it == sizes_.end()) it = sizes_.emplace(key, out_.upsert_problem_size(row.problem_size)).first;
    s.psize_id = it->second;
    return s;
  }

  // The rows of one input run (or of none): the latest per configuration and
  // series, less what the output's run already holds.
  void copy_rows(std::optional<int64_t> out_run, Filter f) {
    f.sort = Filter::Sort::Id;
    std::vector<ResultRow> rows = reading([&] { return in_.results(f); });
    sum_.evaluations += rows.size();
    Filter held;
    held.sort = Filter::Sort::Id;
    if (out_run) held.run_id = out_run;
    else held.outside_runs = true;
    std::set<RowKey> have;
    for (const ResultRow& r : out_.results(held))
      have.insert({r.series.kernel_id, r.series.device_id, r.series.psize_id, r.config_key});
    std::map<RowKey, size_t> latest;  // rows come in id order: a later row with a timestamp no older wins
    std::vector<SeriesIds> where(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      where[i] = series(rows[i]);
      const RowKey key{where[i].kernel_id, where[i].device_id, where[i].psize_id, rows[i].config_key};
      auto [it, fresh] = latest.try_emplace(key, i);
      if (fresh) continue;
      ++sum_.collapsed;
      if (rows[i].eval.timestamp >= rows[it->second].eval.timestamp) it->second = i;
    }
    std::vector<size_t> keep;
    for (const auto& [key, i] : latest) {
      if (have.count(key)) ++sum_.duplicates;
      else keep.push_back(i);
    }
    std::sort(keep.begin(), keep.end());  // the input's order
    for (size_t i : keep) out_.add_evaluation(out_run, where[i], rows[i].eval);
    sum_.inserted += keep.size();
  }

  Store& out_;
  Store& in_;
  std::map<RunKey, int64_t>& out_runs_;
  MergeInputSummary& sum_;
  std::map<int64_t, int64_t> devices_, kernels_;  // input id -> output id
  std::map<std::string, int64_t> sizes_;
};

}  // namespace

size_t MergeSummary::inserted() const {
  size_t n = 0;
  for (const auto& i : inputs) n += i.inserted;
  return n;
}

size_t MergeSummary::runs_added() const {
  size_t n = 0;
  for (const auto& i : inputs) n += i.runs_added;
  return n;
}

MergeSummary merge_databases(Store& out, const std::vector<std::string>& paths) {
  MergeSummary summary;
  std::vector<std::unique_ptr<Store>> inputs;
  for (const std::string& p : paths) inputs.push_back(open_input(p, out.path()));

  // Every conflict is found before anything is written.
  Catalogue cat;
  for (const KernelRow& k : out.kernels()) cat.add_kernel(k.info, out.path());
  for (const DeviceRow& d : out.devices()) cat.add_device(d.info, out.path());
  for (const RunRow& r : out.runs()) cat.add_run(r.info, out.path());
  for (size_t i = 0; i < inputs.size(); ++i) {
    Store& in = *inputs[i];
    reading([&] {
      for (const KernelRow& k : in.kernels()) cat.add_kernel(k.info, paths[i]);
      for (const DeviceRow& d : in.devices()) cat.add_device(d.info, paths[i]);
      for (const RunRow& r : in.runs()) cat.add_run(r.info, paths[i]);
      return 0;
    });
  }
  summary.conflicts = std::move(cat.conflicts);
  if (!summary.conflicts.empty()) return summary;

  std::map<RunKey, int64_t> out_runs;
  for (const RunRow& r : out.runs()) out_runs.emplace(run_key(r.info), r.id);
  Store::Transaction tx(out);
  for (size_t i = 0; i < inputs.size(); ++i) {
    MergeInputSummary s;
    s.path = paths[i];
    InputCopy(out, *inputs[i], out_runs, s).run();
    summary.inputs.push_back(std::move(s));
  }
  tx.commit();
  summary.merged = true;
  return summary;
}

}  // namespace ktune::db
