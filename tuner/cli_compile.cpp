// `ktune compile SPEC`: NVRTC-compiles configurations for an architecture with
// no GPU, reporting per configuration ok/failed, compile time, registers,
// shared and local memory, spills and theoretical occupancy.
#include <CLI/CLI.hpp>

#include <algorithm>

#include <chrono>
#include <iostream>
#include <random>
#include <thread>
#include <unordered_map>

#include "search/error.h"
#include "tuner/cli.h"
#include "tuner/cli_json.h"
#include "tuner/compile_pool.h"
#include "tuner/kernel_build.h"
#include "tuner/progress.h"
#include "tuner/spec.h"
#include "tuner/table.h"

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
  std::string launch_error;
  CompileResult result;
};

std::vector<Config> choose_configs(const Spec& spec, const CompileOptions& o) {
  const SearchSpace& space = spec.space();
  if (!o.config.empty()) {
    auto c = space.config_of(parse_config_option(spec, o.config));
    if (!c || !space.is_valid(*c))
      throw Error::bad_input("--config " + o.config + " breaks the spec's restrictions");
    return {*c};
  }
  if (space.count_valid() == 0) throw Error::failed(spec.path + ": no valid configuration to compile");
  std::vector<Config> out;
  if (o.all) {
    for (uint64_t i = 0; i < space.size(); ++i) out.push_back(space.at(i));
    return out;
  }
  std::mt19937_64 rng(o.seed);
  return space.sample(o.sample ? o.sample : 1, rng, true);
}

// Compiles through the same pool of worker processes as `ktune tune`
// (NVRTC scales over processes, not threads: tuner/compile_pool.h).
void compile_all(const Spec& spec, const Arch& arch, std::vector<Row>& rows, unsigned jobs, double time_limit_s,
                 bool progress) {
  CompilePoolOptions po;
  po.workers = jobs;
  po.time_limit_s = time_limit_s;
  CompilePool pool(po);
  size_t done = 0, failed = 0;
  Progress bar("compile", rows.size(), progress);
  std::vector<CompilePool::Ticket> waiting;
  std::unordered_map<CompilePool::Ticket, size_t> row_of;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto values = spec.space().values(rows[i].config);
    KernelBuild b = plan_build(spec, values, arch);
    if (!b.request) {
      rows[i].launch_error = b.launch.error;
      ++failed;
      bar.update(++done, "failed " + std::to_string(failed));
      continue;
    }
    const CompilePool::Ticket t = pool.submit(std::move(*b.request));
    waiting.push_back(t);
    row_of[t] = i;
  }
  while (!waiting.empty()) {
    auto [ticket, result] = pool.take_any(waiting);
    Row& row = rows[row_of.at(ticket)];
    row.result = std::move(result);
    // A launch the architecture cannot take (static plus dynamic shared memory
    // past the opt-in maximum, a block past the kernel's thread limit) is found
    // here, from the cubin, as the GPU would find it before launching.
    if (row.result.ok && row.result.occupancy && !row.result.occupancy->error.empty())
      row.launch_error = row.result.occupancy->error;
    if (!row.result.ok || !row.launch_error.empty()) ++failed;
    bar.update(++done, "failed " + std::to_string(failed));
  }
  bar.finish();
}

void print_json(const Spec& spec, const Arch& arch, const std::vector<Row>& rows) {
  Json a = Json::array();
  for (const Row& r : rows) {
    Json j = {{"config", config_json(spec.space(), r.config)}};
    const bool ok = r.launch_error.empty() && r.result.ok;
    j["status"] = ok ? "ok" : (r.launch_error.empty() ? "compile_error" : "invalid");
    if (!r.launch_error.empty()) {
      j["reason"] = r.launch_error;
    } else {
      const KernelResources& res = r.result.resources;
      j["compile_ms"] = r.result.compile_ms;
      j["cache_hit"] = r.result.cache_hit;
      if (ok) {
        j["registers"] = res.registers;
        j["static_shared_bytes"] = res.static_smem;
        j["local_bytes"] = res.local_bytes;
        j["spill_store_bytes"] = res.spill_store_bytes;
        j["spill_load_bytes"] = res.spill_load_bytes;
        if (r.result.occupancy) {
          j["occupancy"] = r.result.occupancy->fraction;
          j["occupancy_limited_by"] = r.result.occupancy->limited_by;
          if (!r.result.occupancy->error.empty()) j["occupancy_error"] = r.result.occupancy->error;
        }
      }
      j["log"] = r.result.log;
    }
    a.push_back(j);
  }
  Json out = {{"spec", spec.path}, {"kernel", spec.kernel.name}, {"arch", arch.name()}, {"configurations", a}};
  std::cout << out.dump(2) << '\n';
}

void print_table(const Spec& spec, const Arch& arch, const std::vector<Row>& rows, bool show_log) {
  std::cout << spec.kernel.name << " for " << arch.name() << ", " << rows.size() << " configuration"
            << (rows.size() == 1 ? "" : "s") << "\n";
  Table t({"configuration", "status", "ms", "regs", "smem", "local", "spill", "occupancy", "cache"});
  for (const Row& r : rows) {
    const std::string key = spec.space().key(r.config);
    if (!r.launch_error.empty()) {
      t.add({key, "invalid", "", "", "", "", "", "", r.launch_error});
      continue;
    }
    const auto& res = r.result.resources;
    if (!r.result.ok) {
      t.add({key, "FAILED", fixed(r.result.compile_ms, 1), "", "", "", "", "", r.result.error_line()});
      continue;
    }
    const int spill = std::max(res.spill_store_bytes, 0) + std::max(res.spill_load_bytes, 0);
    std::string occ = "-";
    if (r.result.occupancy)
      occ = r.result.occupancy->error.empty() ? fixed(100 * r.result.occupancy->fraction, 0) + "%" : "n/a";
    t.add({key, "ok", fixed(r.result.compile_ms, 1), std::to_string(res.registers), std::to_string(res.static_smem),
           std::to_string(res.local_bytes), std::to_string(spill), occ, r.result.cache_hit ? "hit" : "miss"});
  }
  t.print(std::cout);
  if (show_log)
    for (const Row& r : rows)
      if (!r.result.log.empty()) std::cout << "\n--- " << spec.space().key(r.config) << "\n" << r.result.log;
}

int run_compile(const CompileOptions& o) {
  const Spec spec = load_spec(o.spec, parse_constant_overrides(o.sets));
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
  std::vector<Row> rows;
  for (Config& c : choose_configs(spec, o)) rows.push_back({std::move(c), {}, {}});
  unsigned jobs = o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  const double time_limit_s = o.compile_timeout.empty() ? CompilePoolOptions::kDefaultCompileTimeLimitS
                                                         : duration_option("--compile-timeout", o.compile_timeout);
  compile_all(spec, arch, rows, std::min<unsigned>(jobs, rows.size()), time_limit_s, !o.json);
  if (o.json) print_json(spec, arch, rows);
  else print_table(spec, arch, rows, o.show_log);
  for (const Row& r : rows)
    if (!r.launch_error.empty() || !r.result.ok) return 1;
  return 0;
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
