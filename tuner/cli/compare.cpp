// `ktune compare [SPEC]`: one kernel's results across devices, from the
// database: each device's optimum, the portability matrix, the most portable
// configuration and its performance portability, how much each parameter
// matters per device (db/portability.h), and with --arch the offline view of
// the winners compiled for an architecture no GPU here has (docs/compare.md).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <set>

#include "db/portability.h"
#include "db/store.h"
#include "ktune/error.h"
#include "tuner/build/build.h"
#include "tuner/cli/cli.h"
#include "tuner/cli/print/json.h"
#include "tuner/cli/print/profile.h"
#include "tuner/cli/print/table.h"
#include "tuner/compile/pool.h"
#include "tuner/spec/spec.h"
#include "tuner/tune/evaluator.h"
#include "tuner/tune/replay_evaluator.h"

namespace ktune::cli {
namespace {

struct CompareCmdOptions : ResultsOptions {
  std::string spec;
  std::vector<std::string> sets;
  std::string devices;  // --devices a,b,...
  std::string problem_size;
  bool include_replays = false;
};

// Each device's winners (and the most portable configuration) compiled for
// an architecture, without a GPU.
struct OfflineRow {
  std::vector<Value> config;  // the stored order
  std::string key;
  std::vector<std::string> optimum_of;
  bool portable = false;
  std::string status;  // its build's (tuner/build/build.h), or not_in_spec
  std::string reason;
  CompileResult result;
};

struct Offline {
  std::string arch;
  std::vector<OfflineRow> rows;
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    std::string item = text.substr(at, comma - at);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (!item.empty()) out.push_back(item);
    at = comma + 1;
  }
  return out;
}

std::string joined(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string s;
  for (const std::string& i : items) s.append(s.empty() ? "" : sep).append(i);
  return s;
}

std::string shell_quoted(const std::string& s) {
  if (s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./:=,") == std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

// The one (kernel, problem size) the options name, with its devices in the
// order --devices names them (else by name).
db::KernelSeries choose_series(db::Store& store, const CompareCmdOptions& o, const Spec* spec) {
  db::Filter f;
  f.kernel = !o.kernel.empty() ? o.kernel : spec ? spec->kernel.name : "";
  if (!o.include_replays) f.replayed = false;
  if (!o.problem_size.empty()) f.problem_size = problem_size_option(o.problem_size);
  store.require_known(f);
  std::vector<db::KernelSeries> all = db::load_series(store, f);
  if (all.empty()) {
    db::Filter replays = f;
    replays.replayed = true;
    replays.limit = 1;
    const bool only_replays = !o.include_replays && !store.results(replays).empty();
    throw Error::failed("no results" + (f.kernel.empty() ? std::string() : " of kernel '" + f.kernel + "'") +
                        (f.problem_size ? " at problem size " + db::problem_size_key(*f.problem_size) : "") + " in " +
                        store.path() +
                        (only_replays ? " but rows replays stored (tune --simulate); --include-replays compares them"
                                      : ""));
  }
  std::set<std::string> kernels;
  for (const db::KernelSeries& s : all) kernels.insert(s.kernel);
  if (kernels.size() > 1)
    throw Error::bad_input("the database holds " + std::to_string(kernels.size()) + " kernels (" +
                           joined({kernels.begin(), kernels.end()}) + "): choose one with --kernel");
  if (all.size() > 1 && spec) {  // the spec's problem size, where the results have it
    const db::ProblemSize own = spec_problem_size(*spec);
    auto it = std::find_if(all.begin(), all.end(), [&](const db::KernelSeries& s) { return s.problem_size == own; });
    if (it != all.end()) all = {std::move(*it)};
  }
  if (all.size() > 1) {
    std::vector<std::string> sizes;
    for (const db::KernelSeries& s : all) sizes.push_back(db::problem_size_key(s.problem_size));
    throw Error::bad_input("kernel '" + all.front().kernel + "' has results at " + std::to_string(all.size()) +
                           " problem sizes (" + joined(sizes) + "): choose one with --problem-size");
  }
  db::KernelSeries series = std::move(all.front());
  if (!o.include_replays) {  // say what was left out: a replay's rows are recorded elsewhere, not measured
    db::Filter replays = f;
    replays.kernel = series.kernel;
    replays.problem_size = series.problem_size;
    replays.replayed = true;
    std::vector<std::string> names;
    for (const db::KernelSeries& r : db::load_series(store, replays))
      for (const db::DeviceSeries& d : r.devices) names.push_back(d.device);
    if (!names.empty())
      std::cerr << "ktune: note: left out, as not measured here: rows replays stored (tune --simulate) for "
                << joined(names, "; ") << "; --include-replays compares them\n";
  }
  if (o.devices.empty()) return series;
  std::vector<db::DeviceSeries> chosen;
  for (const std::string& part : split_list(o.devices)) {
    const std::string name = resolved_device(store, part);
    size_t found = 0;
    for (db::DeviceSeries& d : series.devices)
      if (d.device == name || d.device == name + " (replay)") {
        if (std::none_of(chosen.begin(), chosen.end(), [&](const auto& c) { return c.device == d.device; }))
          chosen.push_back(d);
        ++found;
      }
    if (!found) {
      std::vector<std::string> have;
      for (const db::DeviceSeries& d : series.devices) have.push_back(d.device);
      throw Error::bad_input("--devices: '" + part + "' has no results of kernel '" + series.kernel +
                             "' at problem size " + db::problem_size_key(series.problem_size) + " (those that do: " +
                             joined(have, "; ") + ")");
    }
  }
  series.devices = std::move(chosen);
  return series;
}

const db::ResultRow& optimum_row(const db::KernelSeries& s, const db::DeviceOptimum& d) {
  for (const db::DeviceSeries& ds : s.devices)
    if (ds.device == d.device) return ds.rows.at(ds.latest().at(d.config_key));
  throw Error::failed("internal: no rows for " + d.device);
}

Json config_object(const std::vector<std::string>& names, const std::vector<Value>& config) {
  Json j = Json::object();
  for (size_t i = 0; i < names.size() && i < config.size(); ++i) j[names[i]] = to_json(config[i]);
  return j;
}

// The command that measures a's optimum on b: run on b.
std::string measure_command(const CompareCmdOptions& o, const std::string& from) {
  std::string from_name = from;
  const std::string suffix = " (replay)";
  if (from_name.size() > suffix.size() && from_name.compare(from_name.size() - suffix.size(), suffix.size(), suffix) == 0)
    from_name.resize(from_name.size() - suffix.size());
  std::string cmd = "ktune tune " + (o.spec.empty() ? std::string("SPEC") : shell_quoted(o.spec));
  for (const std::string& s : o.sets) cmd += " --set " + shell_quoted(s);
  cmd += " --configs-from " + shell_quoted(from_name) + " --top 10 --db " + shell_quoted(o.resolved_db());
  return cmd;
}

Offline compile_offline(const Spec& spec, const std::string& arch_text, const db::KernelSeries& series,
                        const db::Portability& p) {
  const Arch requested = Arch::parse(arch_text);
  if (const auto& archs = Compiler::supported_archs();
      !archs.empty() && std::find(archs.begin(), archs.end(), requested.sm) == archs.end()) {
    std::string list;
    for (int a : archs) list.append(list.empty() ? "sm_" : ", sm_").append(std::to_string(a));
    throw Error::bad_input("--arch " + arch_text + ": NVRTC " + Compiler::nvrtc_version() + " compiles for " + list +
                           " only");
  }
  const std::optional<Arch> target = spec.kernel.target_arch(requested);
  if (!target) throw Error::bad_input("--arch " + arch_text + ": " + spec.kernel.not_written_for(requested));
  Offline off;
  off.arch = target->name();
  auto row_for = [&](const std::vector<Value>& config, const std::string& key) -> OfflineRow& {
    for (OfflineRow& r : off.rows)
      if (r.key == key) return r;
    off.rows.push_back(OfflineRow{config, key, {}, false, "", "", {}});
    return off.rows.back();
  };
  for (const db::DeviceOptimum& d : p.devices) row_for(d.config, d.config_key).optimum_of.push_back(d.device);
  if (p.portable) row_for(p.portable->config, p.portable->config_key).portable = true;
  const SearchSpace& space = spec.space();
  std::vector<std::vector<Value>> valid;
  std::vector<size_t> index;
  for (size_t i = 0; i < off.rows.size(); ++i) {
    OfflineRow& r = off.rows[i];
    std::vector<Value> values;  // in the spec's parameter order
    for (const Parameter& prm : space.parameters()) {
      auto it = std::find(series.param_names.begin(), series.param_names.end(), prm.name);
      if (it == series.param_names.end()) break;
      values.push_back(r.config.at(size_t(it - series.param_names.begin())));
    }
    const std::optional<Config> c = values.size() == space.parameters().size() && values.size() == r.config.size()
                                        ? space.config_of(values)
                                        : std::nullopt;
    if (!c || !space.is_valid(*c)) {
      r.status = "not_in_spec";
      r.reason = "not a valid configuration of " + spec.path;
      continue;
    }
    valid.push_back(std::move(values));
    index.push_back(i);
  }
  if (!valid.empty()) {
    CompilePoolOptions po;
    po.workers = unsigned(std::min<size_t>(valid.size(), usable_cpus()));
    CompilePool pool(po);
    std::vector<Build> built = build_all(spec, valid, *target, pool);
    for (size_t j = 0; j < built.size(); ++j) {
      OfflineRow& r = off.rows[index[j]];
      r.status = db::to_string(built[j].status);
      r.reason = std::move(built[j].reason);
      r.result = std::move(built[j].compile);
    }
  }
  return off;
}

int spill_bytes(const KernelResources& r) {
  return std::max(r.spill_store_bytes, 0) + std::max(r.spill_load_bytes, 0);
}

Json offline_json(const Offline& off, const std::vector<std::string>& names) {
  Json rows = Json::array();
  for (const OfflineRow& r : off.rows) {
    Json j = {{"config", config_object(names, r.config)}, {"optimum_of", r.optimum_of}, {"portable", r.portable},
              {"status", r.status}};
    if (!r.reason.empty()) j["reason"] = r.reason;
    if (r.result.ok) {
      const KernelResources& res = r.result.resources;
      j["registers"] = res.registers;
      j["static_shared_bytes"] = res.static_smem;
      j["local_bytes"] = res.local_bytes;
      j["spill_bytes"] = spill_bytes(res);
      if (r.result.occupancy && r.result.occupancy->error.empty()) {
        j["occupancy"] = r.result.occupancy->fraction;
        j["occupancy_limited_by"] = r.result.occupancy->limited_by;
      }
    }
    rows.push_back(j);
  }
  return {{"arch", off.arch}, {"measured", false}, {"nvrtc", Compiler::nvrtc_version()}, {"configs", rows}};
}

Json compare_json(const CompareCmdOptions& o, const Spec* spec, const db::KernelSeries& s, const db::Portability& p,
                  const std::optional<Offline>& off, const db::Roofs& roofs) {
  const std::vector<std::string>& names = p.param_names;
  Json devices = Json::array();
  for (const db::DeviceOptimum& d : p.devices) {
    const db::ResultRow& row = optimum_row(s, d);
    const std::optional<double> objective = spec ? objective_of(*spec, row.eval) : row.eval.time_ms;
    devices.push_back({{"name", d.device},
                       {"best", {{"config", config_object(names, d.config)}, {"time_ms", d.time_ms},
                                 {"objective", objective ? Json(*objective) : Json(nullptr)}}},
                       {"measured", d.measured},
                       {"failed", d.failed},
                       {"compute_capability", d.compute_capability},
                       {"replay", row.replayed}});
    if (const auto roof = roofs.of(row)) devices.back()["best"]["roofline"] = roofline_json(*roof);
  }
  Json matrix = Json::array(), missing = Json::array();
  for (size_t a = 0; a < p.matrix.size(); ++a) {
    Json row = Json::array();
    for (size_t b = 0; b < p.matrix[a].size(); ++b) {
      const db::PortabilityCell& c = p.matrix[a][b];
      row.push_back(c.ratio ? Json(*c.ratio) : Json(nullptr));
      if (c.state == db::CellState::Measured) continue;
      Json m = {{"optimum_of", p.devices[a].device}, {"on", p.devices[b].device},
                {"state", c.state == db::CellState::Failed ? "failed" : "not_measured"}};
      if (c.state == db::CellState::Failed) m["status"] = db::to_string(c.status);
      else m["command"] = measure_command(o, p.devices[a].device);
      missing.push_back(m);
    }
    matrix.push_back(row);
  }
  Json portable = nullptr;
  if (p.portable)
    portable = {{"config", config_object(names, p.portable->config)}, {"worst", p.portable->worst},
                {"pp", p.portable->pp}, {"ratios", p.portable->ratios}, {"common", p.common}};
  Json parameters = Json::array();
  for (size_t i = 0; i < p.parameters.size(); ++i) {
    const db::ParameterEffect& e = p.parameters[i];
    Json optima = Json::array(), per = Json::array();
    for (const db::DeviceOptimum& d : p.devices) optima.push_back(to_json(d.config.at(i)));
    for (const db::ParameterDeviceEffect& de : e.devices) {
      Json values = Json::array();
      for (const db::ValueEffect& v : de.values)
        values.push_back({{"value", to_json(v.value)}, {"configs", v.configs}, {"best_ratio", v.best_ratio}});
      per.push_back({{"worst_best_ratio", de.worst_best_ratio}, {"variance_explained", de.variance_explained},
                     {"values", values}});
    }
    parameters.push_back({{"name", e.name}, {"differs", e.differs}, {"optima", optima}, {"devices", per}});
  }
  Json j = {{"kernel", s.kernel},
            {"devices", devices},
            {"matrix", matrix},
            {"portable", portable},
            {"problem_size", s.problem_size},
            {"objective", spec ? spec->objective : std::string("time")},
            {"missing", missing},
            {"parameters", parameters},
            {"left_out", p.left_out}};
  if (off) j["offline"] = offline_json(*off, names);
  return j;
}

std::string ratio_text(double r) { return fixed(r, 3); }

// Each parameter's effect: its values at the optima, and on each device the
// cost of its worst value and the share of the variance it explains.
void print_parameters(const db::Portability& p) {
  std::cout << "\nparameters: on each device, the worst over the parameter's values of (fastest time with that "
               "value / optimum), and the share of the variance of log(time) its values explain\n";
  std::vector<std::string> ph = {"parameter", "at the optima"};
  for (const db::DeviceOptimum& d : p.devices) ph.push_back(d.device);
  Table pt(ph);
  for (size_t i = 0; i < p.parameters.size(); ++i) {
    const db::ParameterEffect& e = p.parameters[i];
    std::vector<std::string> values;
    for (const db::DeviceOptimum& d : p.devices) values.push_back(d.config.at(i).str());
    std::vector<std::string> row = {e.name, e.differs ? joined(values, " | ") : values.front() + " (same)"};
    for (const db::ParameterDeviceEffect& de : e.devices)
      row.push_back(fixed(de.worst_best_ratio, 2) + "  " + fixed(100 * de.variance_explained, 0) + "%");
    pt.add(row);
  }
  pt.print(std::cout);
}

// The offline view: the winners compiled for an architecture with no GPU
// here, their resources and occupancy.
void print_offline(const Offline& off) {
  std::cout << "\noffline view for " << off.arch << ": compiled with NVRTC " << Compiler::nvrtc_version()
            << ", not measured (no " << off.arch << " GPU here)\n";
  Table t({"configuration", "optimum of", "status", "regs", "smem", "local", "spill", "occupancy"});
  for (const OfflineRow& r : off.rows) {
    std::string of = joined(r.optimum_of, "; ");
    if (r.portable) of += of.empty() ? "most portable" : "; most portable";
    if (!r.result.ok) {
      t.add({r.key, of, r.status + (r.reason.empty() ? "" : ": " + r.reason.substr(0, 60)), "", "", "", "", ""});
      continue;
    }
    const KernelResources& res = r.result.resources;
    std::string occ = "-";
    if (r.result.occupancy && r.result.occupancy->error.empty())
      occ = fixed(100 * r.result.occupancy->fraction, 0) + "% (" + r.result.occupancy->limited_by + ")";
    t.add({r.key, of, r.status == "ok" ? "ok" : r.status + ": " + r.reason.substr(0, 60),
           std::to_string(res.registers), std::to_string(res.static_smem), std::to_string(res.local_bytes),
           std::to_string(spill_bytes(res)), occ});
  }
  t.print(std::cout);
}

void print_text(const CompareCmdOptions& o, const db::KernelSeries& s, const db::Portability& p,
                const std::optional<Offline>& off, const db::Roofs& roofs) {
  const std::vector<std::string>& names = p.param_names;
  std::cout << s.kernel << " at problem size " << db::problem_size_key(s.problem_size) << ", " << p.devices.size()
            << " device" << (p.devices.size() == 1 ? "" : "s") << " (" << o.resolved_db() << ")\n\n";
  // The optimum's roofline position where it was profiled (`ktune profile`).
  bool profiled = false;
  for (const db::DeviceOptimum& d : p.devices) profiled = profiled || roofs.of(optimum_row(s, d)).has_value();
  std::vector<std::string> optima_header = {"device", "sm", "measured", "failed", "best ms",
                                            "best configuration (" + joined(names, ",") + ")"};
  if (profiled) optima_header.push_back("roofline");
  Table optima(optima_header);
  for (const db::DeviceOptimum& d : p.devices) {
    std::vector<std::string> row = {d.device, d.compute_capability ? std::to_string(d.compute_capability) : "-",
                                    std::to_string(d.measured), std::to_string(d.failed), fixed(d.time_ms, 4),
                                    d.config_key};
    if (profiled) row.push_back(roofline_text(roofs.of(optimum_row(s, d))));
    optima.add(std::move(row));
  }
  optima.print(std::cout);
  for (const std::string& d : p.left_out) std::cout << "left out: " << d << " (no successful measurement)\n";

  std::cout << "\ntime on the column's device of the row's optimum / that device's optimum:\n";
  std::vector<std::string> header = {"optimum of \\ on"};
  for (const db::DeviceOptimum& d : p.devices) header.push_back(d.device);
  Table m(header);
  std::vector<std::string> notes;
  for (size_t a = 0; a < p.matrix.size(); ++a) {
    std::vector<std::string> row = {p.devices[a].device};
    for (size_t b = 0; b < p.matrix[a].size(); ++b) {
      const db::PortabilityCell& c = p.matrix[a][b];
      if (c.state == db::CellState::Measured) {
        row.push_back(ratio_text(*c.ratio));
      } else if (c.state == db::CellState::Failed) {
        row.push_back(std::string("failed (") + db::to_string(c.status) + ")");
      } else {
        row.push_back("not measured");
        notes.push_back("  on " + p.devices[b].device + ": " + measure_command(o, p.devices[a].device));
      }
    }
    m.add(row);
  }
  m.print(std::cout);
  if (!notes.empty()) {
    std::cout << "to measure what is missing, run:\n";
    for (const std::string& n : notes) std::cout << n << '\n';
  }

  std::cout << '\n';
  if (p.portable) {
    std::vector<std::string> ratios;
    for (size_t b = 0; b < p.devices.size(); ++b)
      ratios.push_back(p.devices[b].device + " " + ratio_text(p.portable->ratios[b]));
    std::cout << "most portable, of " << p.common << " configuration" << (p.common == 1 ? "" : "s")
              << " measured on every device: " << p.portable->config_key << "\n  worst "
              << ratio_text(p.portable->worst) << " x a device's optimum, performance portability "
              << ratio_text(p.portable->pp) << " (harmonic mean of optimum/time)\n  " << joined(ratios) << '\n';
  } else {
    std::cout << "most portable: none, no configuration was measured on every device\n";
  }

  print_parameters(p);
  if (off) print_offline(*off);
}

int run_compare(const CompareCmdOptions& o) {
  std::optional<Spec> spec;
  if (!o.spec.empty()) spec = load_spec(o.spec, set_option(o.sets));
  else if (!o.sets.empty()) throw Error::bad_input("--set needs a spec");
  if (!o.arch.empty() && !spec)
    throw Error::bad_input("--arch " + o.arch + ": the offline view compiles the winners, which needs the spec "
                           "(ktune compare SPEC --arch " + o.arch + ")");
  if (spec && !o.arch.empty()) spec->require_runnable();
  db::StoreOptions so;
  so.read_only = true;
  db::Store store(o.resolved_db(), so);
  const db::KernelSeries series = choose_series(store, o, spec ? &*spec : nullptr);
  std::vector<db::DeviceResults> input;
  for (const db::DeviceSeries& d : series.devices) input.push_back(db::device_results(d));
  const db::Portability p = db::compute_portability(series.param_names, input);
  if (p.devices.empty())
    throw Error::failed("no successful measurement of kernel '" + series.kernel + "' on " +
                        joined(p.left_out, "; "));
  std::optional<Offline> off;
  if (!o.arch.empty()) off = compile_offline(*spec, o.arch, series, p);
  const db::Roofs roofs(store);
  if (o.json) std::cout << compare_json(o, spec ? &*spec : nullptr, series, p, off, roofs).dump(2) << '\n';
  else print_text(o, series, p, off, roofs);
  return 0;
}

}  // namespace

void add_compare_command(CLI::App& app, CommandResult& result) {
  auto o = std::make_shared<CompareCmdOptions>();
  CLI::App* sub = app.add_subcommand(
      "compare", "One kernel across devices: optima, portability matrix, most portable configuration");
  sub->add_option("spec", o->spec, "tuning spec (optional: names the kernel and problem size; needed for --arch)");
  sub->add_option("--set", o->sets, "override a constant of the spec: NAME=VALUE (repeatable)");
  sub->add_option("--db", o->db, "results database (default $KTUNE_DB, else ./ktune.db)");
  sub->add_option("--kernel", o->kernel, "kernel name (default: the spec's, else the database's only kernel)");
  sub->add_option("--devices,--device", o->devices,
                  "devices to compare, in this order: names or parts of names, comma-separated (default: all)");
  sub->add_option("--problem-size", o->problem_size, "problem size, e.g. 4096 or 4096,4096");
  sub->add_option("--arch", o->arch,
                  "also compile each device's optimum and the most portable configuration for this architecture "
                  "(e.g. sm_80), without a GPU: registers, shared memory, spills, occupancy");
  sub->add_flag("--include-replays", o->include_replays,
                "also compare rows replays stored (tune --simulate), as device 'NAME (replay)'");
  sub->add_flag("--json", o->json, "machine-readable output");
  sub->callback([o, &result] { result.exit_status = run_compare(*o); });
}

}  // namespace ktune::cli
