// `ktune compile SPEC`: NVRTC-compiles configurations for an architecture with
// no GPU, reporting per configuration ok/failed, compile time, registers,
// shared and local memory, spills and theoretical occupancy.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <deque>
#include <iostream>
#include <random>
#include <unordered_map>

#include "ktune/error.h"
#include "tuner/build/build.h"
#include "tuner/build/config_text.h"
#include "tuner/cli/cli.h"
#include "tuner/cli/print/config_columns.h"
#include "tuner/cli/print/json.h"
#include "tuner/compile/pool.h"
#include "tuner/cli/print/progress.h"
#include "tuner/spec/spec.h"
#include "tuner/cli/print/table.h"

namespace ktune::cli {
namespace {

struct CompileOptions {
  std::string spec;
  std::vector<std::string> sets;  // --set NAME=VALUE: spec constants overridden
  std::string arch = "sm_90";
  std::string config;
  size_t sample = 0;
  uint64_t seed = 1;
  bool all = false;
  bool json = false;
  unsigned jobs = 0;
  std::string compile_timeout;
  bool show_log = false;
};

struct Row {
  Config config;
  LaunchResult launch;
  Build build;  // once done
  bool done = false;
};

// The configurations to compile: one, a sample, or every valid one, taken by
// index as they are compiled (never all in memory: a space of millions streams).
struct Selection {
  const SearchSpace* space = nullptr;
  std::vector<Config> listed;
  bool every = false;
  uint64_t size() const { return every ? space->size() : listed.size(); }
  Config at(uint64_t i) const { return every ? space->at(i) : listed[i]; }
};

Selection choose_configs(const Spec& spec, const CompileOptions& o) {
  const SearchSpace& space = spec.space();
  Selection sel{&space, {}, false};
  if (!o.config.empty()) {
    auto c = space.config_of(config_option(spec, o.config));
    if (!c || !space.is_valid(*c))
      throw Error::bad_input("--config " + o.config + " breaks the spec's restrictions");
    sel.listed = {*c};
    return sel;
  }
  require_valid_configurations(spec);
  for (const std::string& n : restriction_notes(spec)) std::cerr << "ktune: note: " << n << '\n';
  if (o.all) {
    sel.every = true;
    return sel;
  }
  std::mt19937_64 rng(o.seed);
  sel.listed = space.sample(o.sample ? o.sample : 1, rng, true);
  return sel;
}

Json row_json(const Spec& spec, const Row& r) {
  const Build& b = r.build;
  Json j = {{"config", config_json(spec.space(), r.config)}};
  j["status"] = db::to_string(b.status);
  if (!b.compiled()) {
    j["reason"] = b.reason;
    return j;
  }
  // A compile error's reason is the first error line of its log, which follows.
  if (b.status != db::Status::CompileError && !b.reason.empty()) j["reason"] = b.reason;
  const CompileResult& result = b.compile;
  const KernelResources& res = result.resources;
  j["compile_ms"] = result.compile_ms;
  j["cache_hit"] = result.cache_hit;
  j["same_code"] = result.same_code;
  if (result.ok) {
    j["registers"] = res.registers;
    j["static_shared_bytes"] = res.static_smem;
    j["local_bytes"] = res.local_bytes;
    j["spill_store_bytes"] = res.spill_store_bytes;
    j["spill_load_bytes"] = res.spill_load_bytes;
    if (result.occupancy) {
      j["occupancy"] = result.occupancy->fraction;
      j["occupancy_limited_by"] = result.occupancy->limited_by;
      if (!result.occupancy->error.empty()) j["occupancy_error"] = result.occupancy->error;
    }
  }
  j["log"] = result.log;
  return j;
}

// Prints rows as they are done, in selection order: a JSON document whose
// configurations array is written element by element, or a table whose
// columns are sized from the parameters' values up front.
class RowPrinter {
 public:
  RowPrinter(const Spec& spec, const Arch& arch, uint64_t total, bool json, bool show_log)
      : spec_(spec), json_(json), show_log_(show_log), columns_(columns_of(spec)) {
    if (json_) {
      std::cout << "{\n  \"spec\": " << Json(spec.path).dump() << ",\n  \"kernel\": " << Json(spec.kernel.name).dump()
                << ",\n  \"arch\": " << Json(arch.name()).dump() << ",\n  \"configurations\": [";
      return;
    }
    std::cout << spec.kernel.name << " for " << arch.name() << ", " << total << " configuration"
              << (total == 1 ? "" : "s") << "\n";
    std::cout << "configuration: " << columns_.names() << '\n';
    if (!columns_.left_out().empty()) std::cout << columns_.left_out() << '\n';
    const auto& params = spec.space().parameters();
    for (size_t i = 0; i < params.size(); ++i) {
      const Parameter& p = params[i];
      if (!columns_.shown(i)) continue;
      size_t w = 0;
      for (const Value& v : p.values) w = std::max(w, v.str().size());
      key_width_ += w + (key_width_ ? 1 : 0);
    }
    key_width_ = std::max<size_t>(key_width_, 13);
    line({"configuration", "status", "ms", "regs", "smem", "local", "spill", "occupancy", "cache"});
    std::cout << std::string(key_width_ + 2 + 8 + 9 + 6 + 7 + 7 + 7 + 11 + 6, '-') << '\n';
  }

  void row(const Row& r) {
    ++printed_;
    if (json_) {
      std::cout << (printed_ == 1 ? "\n    " : ",\n    ") << row_json(spec_, r).dump();
      return;
    }
    const std::string key = columns_.key(spec_.space().values(r.config));
    const Build& b = r.build;
    const CompileResult& result = b.compile;
    const auto& res = result.resources;
    if (!b.compiled()) {
      line({key, "invalid", "", "", "", "", "", "", b.reason});
    } else if (b.status == db::Status::CompileError) {
      line({key, "FAILED", fixed(result.compile_ms, 1), "", "", "", "", "", b.reason});
    } else {
      // Compiled: ok, or invalid with the reason the architecture cannot launch it.
      const int spill = std::max(res.spill_store_bytes, 0) + std::max(res.spill_load_bytes, 0);
      std::string occ = "-";
      if (result.occupancy)
        occ = result.occupancy->error.empty() ? fixed(100 * result.occupancy->fraction, 0) + "%" : "n/a";
      line({key, db::to_string(b.status), fixed(result.compile_ms, 1), std::to_string(res.registers),
            std::to_string(res.static_smem), std::to_string(res.local_bytes), std::to_string(spill), occ,
            b.ok() ? (result.cache_hit ? "hit" : result.same_code ? "same" : "miss") : b.reason});
    }
    if (show_log_ && !result.log.empty()) std::cout << "--- log of " << key << "\n" << result.log << '\n';
  }

  void finish(bool interrupted) {
    if (json_) {
      std::cout << (printed_ ? "\n  ],\n" : "],\n") << "  \"interrupted\": " << (interrupted ? "true" : "false")
                << "\n}\n";
    }
    std::cout.flush();
  }

 private:
  void line(const std::vector<std::string>& cells) {
    static const size_t widths[] = {0, 8, 9, 6, 7, 7, 7, 11, 6};
    std::string out;
    for (size_t i = 0; i < cells.size(); ++i) {
      const size_t w = i == 0 ? key_width_ + 2 : widths[i];
      std::string cell = cells[i];
      if (i + 1 < cells.size() && cell.size() < w) cell.resize(w, ' ');
      else if (i + 1 < cells.size()) cell += ' ';
      out += cell;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    std::cout << out << '\n';
  }

  static ConfigColumns columns_of(const Spec& spec) {
    std::vector<std::string> names;
    std::vector<std::vector<Value>> values;
    for (const Parameter& p : spec.space().parameters()) {
      names.push_back(p.name);
      values.push_back(p.values);
    }
    return ConfigColumns(names, values);
  }

  const Spec& spec_;
  bool json_, show_log_;
  ConfigColumns columns_;
  size_t key_width_ = 0;
  uint64_t printed_ = 0;
};

// Compiles through the same pool of worker processes as `ktune tune`
// (NVRTC scales over processes, not threads: tuner/compile/pool.h), keeping a
// bounded window of configurations in flight; each is printed when it and
// every one before it are done, then forgotten (its cubin first). Ctrl-C stops
// it: what was done is printed. Returns {failed, interrupted}.
std::pair<uint64_t, bool> compile_all(const Spec& spec, const Arch& arch, const Selection& sel, unsigned jobs,
                                      double time_limit_s, RowPrinter& printer, bool progress) {
  CompilePoolOptions po;
  po.workers = jobs;
  po.time_limit_s = time_limit_s;
  po.cancel = ctrl_c().token();
  CompilePool pool(po);
  const uint64_t total = sel.size();
  const size_t window = std::max<size_t>(64, 8 * size_t(jobs));
  Progress bar("compile", total, progress);
  std::deque<Row> pending;  // selection order; front is the next to print
  uint64_t first = 0, next = 0, done = 0, failed = 0;
  std::vector<CompilePool::Ticket> waiting;
  std::unordered_map<CompilePool::Ticket, uint64_t> index_of;
  auto finished = [&](Row& row, CompileResult result) {
    row.build = finish_build(row.launch, std::move(result));
    row.done = true;
    row.build.compile.cubin.clear();
    row.build.compile.cubin.shrink_to_fit();
    if (!row.build.ok()) ++failed;
    bar.update(++done, "failed " + std::to_string(failed));
  };
  while (next < total || !waiting.empty()) {
    while (next < total && pending.size() < window && !ctrl_c().requested()) {
      Row& row = pending.emplace_back();
      row.config = sel.at(next);
      BuildPlan p = plan_build(spec, spec.space().values(row.config), arch);
      row.launch = std::move(p.launch);
      if (!p.request) {
        finished(row, {});
      } else {
        const CompilePool::Ticket t = pool.submit(std::move(*p.request));
        waiting.push_back(t);
        index_of[t] = next;
      }
      ++next;
    }
    if (ctrl_c().requested()) break;
    if (!waiting.empty()) {
      try {
        auto [ticket, result] = pool.take_any(waiting);
        Row& row = pending[index_of.at(ticket) - first];
        index_of.erase(ticket);
        finished(row, std::move(result));
      } catch (const Cancelled&) {  // Ctrl-C while waiting: what is done is printed
        break;
      }
    }
    while (!pending.empty() && pending.front().done) {
      printer.row(pending.front());
      pending.pop_front();
      ++first;
    }
  }
  bar.finish();
  return {failed, ctrl_c().requested()};
}

int run_compile(const CompileOptions& o) {
  const Spec spec = load_spec(o.spec, set_option(o.sets));
  spec.require_runnable();
  const Arch requested = Arch::parse(o.arch);
  // Once, before anything compiles: an architecture this NVRTC cannot target.
  if (const auto& archs = Compiler::supported_archs();
      !archs.empty() && std::find(archs.begin(), archs.end(), requested.sm) == archs.end()) {
    std::string list;
    for (int a : archs) list.append(list.empty() ? "sm_" : ", sm_").append(std::to_string(a));
    throw Error::bad_input("--arch " + o.arch + ": NVRTC " + Compiler::nvrtc_version() + " compiles for " + list +
                           " only");
  }
  const std::optional<Arch> target = spec.kernel.target_arch(requested);
  if (!target) throw Error::bad_input("--arch " + o.arch + ": " + spec.kernel.not_written_for(requested));
  const Arch arch = *target;
  const Selection sel = choose_configs(spec, o);
  const uint64_t total = sel.size();
  unsigned jobs = o.jobs ? o.jobs : usable_cpus();
  const double time_limit_s = o.compile_timeout.empty() ? CompilePoolOptions::kDefaultCompileTimeLimitS
                                                         : duration_option("--compile-timeout", o.compile_timeout);
  RowPrinter printer(spec, arch, total, o.json, o.show_log);
  const auto [failed, stopped] = [&] {
    const CatchInterrupt catching;
    return compile_all(spec, arch, sel, unsigned(std::min<uint64_t>(jobs, total)), time_limit_s, printer, !o.json);
  }();
  printer.finish(stopped);
  if (stopped) {
    std::cerr << "ktune: interrupted; the configurations printed were compiled\n";
    return interrupted_status();
  }
  return failed ? 1 : 0;
}

}  // namespace

void add_compile_command(CLI::App& app, CommandResult& result) {
  auto o = std::make_shared<CompileOptions>();
  CLI::App* sub = app.add_subcommand("compile", "Compile configurations with NVRTC (no GPU needed)");
  sub->add_option("spec", o->spec, "tuning spec (YAML or T1 JSON)")->required();
  sub->add_option("--set", o->sets, "override a constant of the spec: NAME=VALUE (repeatable)");
  sub->add_option("--arch", o->arch, "target architecture, e.g. sm_80, sm_90, sm_90a")->capture_default_str();
  auto* cfg = sub->add_option("--config", o->config, "one configuration: name=value,...");
  auto* smp = sub->add_option("--sample", o->sample, "N uniformly sampled valid configurations");
  auto* all = sub->add_flag("--all", o->all, "every valid configuration");
  cfg->excludes(smp)->excludes(all);
  smp->excludes(all);
  sub->add_option("--seed", o->seed, "seed for --sample");
  sub->add_option("-j,--jobs", o->jobs, "parallel compiles, one worker process each (default: one per core)");
  sub->add_option("--compile-timeout", o->compile_timeout,
                  "a configuration whose compile takes longer fails and the others go on (default 300s)");
  sub->add_flag("--log", o->show_log, "print each configuration's NVRTC log");
  sub->add_flag("--json", o->json, "machine-readable output");
  sub->callback([o, &result] { result.exit_status = run_compile(*o); });
}

}  // namespace ktune::cli
