// The commands that read the results database: `ktune best` and `ktune
// results` (queries), and `ktune report -o report.html`, the database as one
// self-contained HTML page (tuner/cli/print/report_html.h).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "db/interchange/result_set.h"
#include "db/portability.h"
#include "db/roofline.h"
#include "db/store.h"
#include "ktune/error.h"
#include "tuner/cli/cli.h"
#include "tuner/cli/print/config_columns.h"
#include "tuner/cli/print/json.h"
#include "tuner/cli/print/profile.h"
#include "tuner/cli/print/report_html.h"
#include "tuner/cli/print/table.h"
#include "tuner/compile/occupancy.h"
#include "tuner/spec/spec.h"
#include "tuner/tune/evaluator.h"

namespace ktune::cli {

namespace {

struct QueryOptions : ResultsOptions {
  std::string spec;
  std::string config;  // --config k=v,...
  std::string status;
  std::string problem_size;
  std::string sort = "time";
  int64_t limit = 0;
  bool samples = false;
};

void add_common(CLI::App* sub, QueryOptions& o) {
  sub->add_option("--db", o.db, "results database (default $KTUNE_DB, else ./ktune.db)");
  sub->add_option("--kernel", o.kernel, "kernel name");
  sub->add_option("--device", o.device, "device name, or any part of it that names one device");
  sub->add_option("--arch", o.arch, "compute capability, e.g. sm_90 (instead of --device)");
  sub->add_option("--problem-size", o.problem_size, "problem size, e.g. 4096 or 4096,4096");
  sub->add_flag("--json", o.json, "machine-readable output");
}

// `spec`: o.spec loaded, where the caller needs more of it than the kernel's name.
db::Filter make_filter(const QueryOptions& o, db::Store& store, const std::optional<Spec>& spec = std::nullopt) {
  db::Filter f;
  f.kernel = o.kernel;
  if (!o.spec.empty() && f.kernel.empty()) f.kernel = spec ? spec->kernel.name : load_spec(o.spec).kernel.name;
  f.device = resolved_device(store, o.device);
  if (!o.arch.empty()) f.compute_capability = Arch::parse(o.arch).sm;
  if (!o.problem_size.empty()) f.problem_size = problem_size_option(o.problem_size);
  if (!o.status.empty()) {
    f.status = db::status_from_string(o.status);
    if (!f.status)
      throw Error::bad_input("--status: unknown status '" + o.status +
                             "' (ok, invalid, compile_error, runtime_error, timeout, wrong_result)");
  }
  if (o.sort == "time") f.sort = db::Filter::Sort::Time;
  else if (o.sort == "newest") f.sort = db::Filter::Sort::Newest;
  else if (o.sort == "id") f.sort = db::Filter::Sort::Id;
  else throw Error::bad_input("--sort: expected time, newest or id, got '" + o.sort + "'");
  f.limit = o.limit;
  return f;
}

Json row_json(const db::ResultRow& r, bool samples, const db::Roofs& roofs) {
  Json config = Json::object();
  for (size_t i = 0; i < r.param_names.size() && i < r.eval.config.size(); ++i)
    config[r.param_names[i]] = to_json(r.eval.config[i]);
  Json j = {{"id", r.id}, {"kernel", r.kernel}, {"device", r.device}, {"problem_size", r.problem_size},
            {"config", config}, {"status", db::to_string(r.eval.status)}};
  const db::Evaluation& e = r.eval;
  auto opt = [&](const char* k, const auto& v) {
    if (v) j[k] = *v;
  };
  opt("time_ms", e.time_ms);
  opt("min_ms", e.min_ms);
  opt("mean_ms", e.mean_ms);
  opt("stddev_ms", e.stddev_ms);
  if (e.sample_count) j["sample_count"] = e.sample_count;
  if (samples && !e.samples.empty()) j["samples"] = e.samples;
  if (!e.metrics.empty()) j["metrics"] = e.metrics;
  for (const db::EvaluationField& f : db::evaluation_fields()) {
    if (!f.in_results) continue;
    if (f.real) opt(f.column, e.*f.real);
    else opt(f.column, e.*f.integer);
  }
  if (const auto roof = roofs.of(r)) j["roofline"] = roofline_json(*roof);
  if (!e.reason.empty()) j["reason"] = e.reason;
  if (r.run_id) j["run_id"] = *r.run_id;
  j["replay"] = r.replayed;
  j["timestamp"] = e.timestamp;
  return j;
}

// Rows whose configuration has each `--config` value; a name no row's kernel
// has is bad input naming the parameters there are.
std::vector<db::ResultRow> with_config(std::vector<db::ResultRow> rows, const std::string& config, int64_t limit) {
  if (config.empty()) return rows;
  std::vector<std::string> items;
  for (size_t at = 0; at <= config.size();) {
    const size_t comma = std::min(config.find(',', at), config.size());
    if (comma > at) items.push_back(config.substr(at, comma - at));
    at = comma + 1;
  }
  const ConstantOverrides wanted = as_option("--config", "", [&] { return parse_constant_overrides(items); });
  std::vector<db::ResultRow> out;
  for (db::ResultRow& r : rows) {
    bool match = true;
    for (const auto& [name, value] : wanted) {
      const auto it = std::find(r.param_names.begin(), r.param_names.end(), name);
      if (it == r.param_names.end()) {
        std::string names;
        for (const std::string& n : r.param_names) names.append(names.empty() ? "" : ", ").append(n);
        throw Error::bad_input("--config: kernel '" + r.kernel + "' has no parameter '" + name + "' (" + names + ")");
      }
      match = match && r.eval.config[size_t(it - r.param_names.begin())] == value;
    }
    if (match) out.push_back(std::move(r));
    if (limit > 0 && int64_t(out.size()) == limit) break;
  }
  return out;
}

// `spec`: the spec the rows were selected by, whose space says which
// parameters take one value only; without one, every stored row that matches
// the query, `matching`, says.
void print_rows(const std::vector<db::ResultRow>& rows, bool json, bool samples, const db::Roofs& roofs,
                const std::optional<Spec>& spec, const std::vector<db::ResultRow>& matching) {
  if (json) {
    Json a = Json::array();
    for (const auto& r : rows) a.push_back(row_json(r, samples, roofs));
    std::cout << a.dump(2) << '\n';
    return;
  }
  // The configuration's column names its parameters when the rows share them,
  // and leaves out those that are the same in every configuration.
  std::string configuration = "configuration";
  std::optional<ConfigColumns> columns;
  if (!rows.empty() && std::all_of(rows.begin(), rows.end(), [&](const db::ResultRow& r) {
        return r.param_names == rows.front().param_names;
      })) {
    const std::vector<std::string>& names = rows.front().param_names;
    std::vector<std::string> spec_names;
    std::vector<std::vector<Value>> spec_values;
    if (spec)
      for (const Parameter& p : spec->space().parameters()) {
        spec_names.push_back(p.name);
        spec_values.push_back(p.values);
      }
    if (spec && spec_names == names) {
      columns.emplace(names, spec_values);
    } else {
      std::vector<std::vector<Value>> configs;
      for (const db::ResultRow& r : matching)
        if (r.param_names == names) configs.push_back(r.eval.config);
      columns = ConfigColumns::of_rows(names, configs);
    }
    configuration += " (" + columns->names() + ")";
    if (!columns->left_out().empty()) std::cout << columns->left_out() << '\n';
  }
  // A roofline column only where some row was profiled (`ktune profile`).
  const bool profiled = std::any_of(rows.begin(), rows.end(), [&](const db::ResultRow& r) {
    return roofs.of(r).has_value();
  });
  std::vector<std::string> header = {"kernel", "device", "problem", configuration, "status", "time ms", "metrics"};
  if (profiled) header.push_back("roofline");
  Table t(header);
  for (const auto& r : rows) {
    std::string metrics;
    for (const auto& [k, v] : r.eval.metrics) metrics += (metrics.empty() ? "" : " ") + k + "=" + fixed(v, 2);
    if (r.eval.status != db::Status::Ok) metrics = r.eval.reason.substr(0, 60);
    const std::string device = r.replayed ? r.device + " (replay)" : r.device;
    std::vector<std::string> row = {r.kernel, device, db::problem_size_key(r.problem_size),
                                    columns ? columns->key(r.eval.config) : config_key(r.eval.config),
                                    db::to_string(r.eval.status),
                                    r.eval.time_ms ? fixed(*r.eval.time_ms, 4) : "-", metrics};
    if (profiled) row.push_back(roofline_text(roofs.of(r)));
    t.add(std::move(row));
  }
  t.print(std::cout);
  std::cout << rows.size() << " row" << (rows.size() == 1 ? "" : "s") << '\n';
}

db::Store open_for_query(const QueryOptions& o) {
  db::StoreOptions so;
  so.read_only = true;
  return db::Store(o.resolved_db(), so);
}

// The spec's objective for a stored row. A metric not stored with it is
// computed from the configuration, so the row's values are put in the spec's
// parameter order by name: a row imported from another tool, or stored by
// another spec of the kernel, may list them in another order, and a
// parameter it lacks is taken at the spec's value where the spec has only
// one (else no value).
std::optional<double> objective_of_row(const Spec& spec, const db::ResultRow& r) {
  if (spec.objective == "energy" || r.eval.metrics.count(spec.objective)) return objective_of(spec, r.eval);
  db::Evaluation e = r.eval;
  e.config.clear();
  for (const Parameter& p : spec.space().parameters()) {
    const auto at = std::find(r.param_names.begin(), r.param_names.end(), p.name);
    const size_t i = size_t(at - r.param_names.begin());
    if (at != r.param_names.end() && i < r.eval.config.size())
      e.config.push_back(r.eval.config[i]);
    else if (p.values.size() == 1)
      e.config.push_back(p.values[0]);
    else
      return std::nullopt;
  }
  return objective_of(spec, e);
}

// The best of each series (kernel, device, problem size) by a spec's
// objective other than time (energy, a metric, or an objective only
// recordings hold: a Kernel Tuner hyper-parameter recording's score), in its
// direction; the store's best is by time.
std::vector<db::ResultRow> best_by_objective(db::Store& store, db::Filter f, const Spec& spec) {
  f.status = db::Status::Ok;
  f.limit = 0;
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::pair<double, db::ResultRow>> best;
  for (db::ResultRow& r : store.results(f)) {
    const std::optional<double> v = objective_of_row(spec, r);
    if (!v) continue;
    const auto key = std::make_tuple(r.series.kernel_id, r.series.device_id, r.series.psize_id);
    auto it = best.find(key);
    if (it == best.end() || (spec.higher_is_better ? *v > it->second.first : *v < it->second.first))
      best.insert_or_assign(key, std::make_pair(*v, std::move(r)));
  }
  std::vector<db::ResultRow> out;
  for (auto& [key, b] : best) out.push_back(std::move(b.second));
  return out;
}

int run_best(const QueryOptions& o) {
  db::Store store = open_for_query(o);
  std::optional<Spec> spec;
  if (!o.spec.empty()) spec = load_spec(o.spec);
  const db::Filter f = make_filter(o, store, spec);
  store.require_known(f);
  const bool by_objective = spec && spec->objective != "time";
  const auto rows = by_objective ? best_by_objective(store, f, *spec) : store.best(f);
  if (!o.json && !rows.empty())
    std::cout << "the best of each kernel, device and problem size by "
              << (by_objective ? spec->objective + (spec->higher_is_better ? " (higher" : " (lower") + " is better)"
                               : std::string("time ms (lowest)"))
              << '\n';
  db::Filter all = f;
  all.limit = 0;
  all.status.reset();
  print_rows(rows, o.json, o.samples, db::Roofs(store), spec, o.json ? rows : store.results(all));
  if (rows.empty()) {
    std::cerr << "ktune: no successful measurement matches";
    if (!f.kernel.empty()) std::cerr << " kernel '" << f.kernel << "'";
    if (!f.device.empty()) std::cerr << " on '" << f.device << "'";
    std::cerr << '\n';
    // Imported recordings of another objective (Kernel Tuner's hyper-parameter
    // `score`) are successes without a time, which is what `best` ranks by.
    db::Filter all = f;
    all.limit = 0;
    all.status = db::Status::Ok;
    size_t untimed = 0, successes = 0;
    std::set<std::string> names;
    for (const db::ResultRow& r : store.results(all)) {
      ++successes;
      if (!r.eval.time_ms) {
        ++untimed;
        for (const auto& m : r.eval.metrics) names.insert(m.first);
      }
    }
    if (spec && spec->objective != "time" && successes > 0) {
      const char* why = spec->objective == "energy" ? "no energy was measured"
                        : spec->objective_recorded  ? "they do not record it"
                                                    : "each lacks a time or a parameter the spec varies";
      std::cerr << "ktune: " << successes << " successful result" << (successes == 1 ? "" : "s")
                << " match, none with a value of the spec's objective '" << spec->objective << "' (" << why
                << ")\n";
    } else if (untimed > 0) {
      std::string recorded;
      for (const std::string& n : names) recorded += (recorded.empty() ? "" : ", ") + n;
      std::cerr << "ktune: " << untimed << " successful result" << (untimed == 1 ? "" : "s")
                << " match but record no time (recorded: " << recorded
                << "); `ktune best` ranks by time, `ktune best SPEC` by a recorded objective its spec names "
                   "(a Hypertuner T1 file's score)\n";
    }
    return 1;
  }
  return 0;
}

int run_results(const QueryOptions& o) {
  db::Store store = open_for_query(o);
  std::optional<Spec> spec;
  if (!o.spec.empty()) spec = load_spec(o.spec);
  db::Filter f = make_filter(o, store, spec);
  store.require_known(f);
  f.limit = 0;  // the limit counts the rows that match; the others say which parameters vary
  const std::vector<db::ResultRow> matching = with_config(store.results(f), o.config, 0);
  std::vector<db::ResultRow> rows = matching;
  if (o.limit > 0 && int64_t(rows.size()) > o.limit) rows.resize(size_t(o.limit));
  print_rows(rows, o.json, o.samples, db::Roofs(store), spec, matching);
  return 0;
}

}  // namespace

void add_query_commands(CLI::App& app, CommandResult& result) {
  auto b = std::make_shared<QueryOptions>();
  CLI::App* best = app.add_subcommand("best", "The best configuration per kernel, device and problem size");
  best->add_option("spec", b->spec, "tuning spec (its kernel name selects the results)");
  add_common(best, *b);
  best->callback([b, &result] { result.exit_status = run_best(*b); });

  auto r = std::make_shared<QueryOptions>();
  CLI::App* res = app.add_subcommand("results", "Stored measurements, filtered and sorted");
  res->add_option("spec", r->spec, "tuning spec (its kernel name selects the results)");
  add_common(res, *r);
  res->add_option("--config", r->config, "only configurations with these values, e.g. block_size_x=256,tile=2");
  res->add_option("--status", r->status, "ok, invalid, compile_error, runtime_error, timeout, wrong_result");
  res->add_option("--sort", r->sort, "time (fastest first), newest or id")->capture_default_str();
  res->add_option("--limit", r->limit, "at most N rows")->check(CLI::NonNegativeNumber);
  res->add_flag("--samples", r->samples, "include raw samples in --json");
  res->callback([r, &result] { result.exit_status = run_results(*r); });
}

}  // namespace ktune::cli

namespace ktune::cli {
namespace {

struct ReportCmdOptions : ResultsOptions {
  std::string output;
  std::string devices;  // --devices a,b: parts of names
  std::string problem_size;
  bool include_replays = false;
  size_t top = 10;
};

int run_report(const ReportCmdOptions& o) {
  db::StoreOptions so;
  so.read_only = true;
  db::Store store(o.resolved_db(), so);
  db::Filter f;
  f.kernel = o.kernel;
  if (!o.include_replays) f.replayed = false;
  if (!o.problem_size.empty()) f.problem_size = problem_size_option(o.problem_size);
  store.require_known(f);
  std::vector<std::string> wanted;
  for (size_t at = 0; at <= o.devices.size();) {
    const size_t comma = std::min(o.devices.find(',', at), o.devices.size());
    if (comma > at) wanted.push_back(resolved_device(store, o.devices.substr(at, comma - at)));
    at = comma + 1;
  }
  std::vector<db::KernelSeries> kernels;
  for (db::KernelSeries& ks : db::load_series(store, f)) {
    if (!wanted.empty()) {
      std::vector<db::DeviceSeries> kept;
      for (const std::string& w : wanted)
        for (db::DeviceSeries& d : ks.devices)
          if (d.device == w || d.device == w + " (replay)") kept.push_back(std::move(d));
      ks.devices = std::move(kept);
    }
    if (!ks.devices.empty()) kernels.push_back(std::move(ks));
  }
  if (kernels.empty())
    throw Error::failed("no results to report in " + store.path() +
                        (o.include_replays ? std::string() : " (rows replays stored are left out: --include-replays)"));
  ReportOptions ro;
  ro.source = store.path();
  ro.top = o.top;
  const db::Roofs roofs(store);
  ro.roofs = &roofs;
  db::write_text_file(o.output, report_html(kernels, ro));
  size_t devices = 0;
  for (const db::KernelSeries& k : kernels) devices += k.devices.size();
  std::cout << "wrote " << o.output << ": " << kernels.size() << " kernel/problem-size series, " << devices
            << " device series\n";
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, CommandResult& result) {
  auto o = std::make_shared<ReportCmdOptions>();
  CLI::App* sub = app.add_subcommand("report", "The results as one self-contained HTML page with plots");
  sub->add_option("-o,--output", o->output, "the HTML file to write")->required();
  sub->add_option("--db", o->db, "results database (default $KTUNE_DB, else ./ktune.db)");
  sub->add_option("--kernel", o->kernel, "only this kernel (default: every kernel)");
  sub->add_option("--devices,--device", o->devices, "only these devices (names or parts of names, comma-separated)");
  sub->add_option("--problem-size", o->problem_size, "only this problem size, e.g. 4096 or 4096,4096");
  sub->add_option("--top", o->top, "fastest configurations listed per device")->capture_default_str();
  sub->add_flag("--include-replays", o->include_replays,
                "also report rows replays stored (tune --simulate), as device 'NAME (replay)'");
  sub->callback([o, &result] { result.exit_status = run_report(*o); });
}

}  // namespace ktune::cli
