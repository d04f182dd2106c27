// The commands of the GPU itself. `ktune devices`: the GPUs the CUDA driver
// sees; without a driver this is a normal, reported condition ("no CUDA
// driver"), exit status 1. `ktune profile SPEC`: hardware counters (CUPTI)
// for the best stored configurations of a series, or for named ones, added
// to their stored rows, with each one's place on the device's roofline
// (docs/profiling.md).
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "db/roofline.h"
#include "db/store.h"
#include "ktune/error.h"
#include "tuner/build/config_text.h"
#include "tuner/cli/cli.h"
#include "tuner/cli/print/json.h"
#include "tuner/cli/print/profile.h"
#include "tuner/cli/print/table.h"
#include "tuner/gpu/engine.h"
#include "tuner/tune/gpu_evaluator.h"
#include "tuner/tune/profile.h"

namespace ktune::cli {
namespace {

const char* state_name(gpu::DriverState s) {
  switch (s) {
    case gpu::DriverState::Ready: return "ready";
    case gpu::DriverState::NoDriver: return "no CUDA driver";
    case gpu::DriverState::Unusable: return "unusable";
  }
  return "?";
}

Json device_json(const gpu::DeviceProperties& d) {
  return {{"index", d.ordinal}, {"name", d.name}, {"uuid", d.uuid}, {"arch", d.arch()},
          {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
          {"sm_count", d.sm_count}, {"memory_bytes", d.total_memory}, {"max_sm_clock_mhz", d.max_sm_clock_mhz},
          {"max_memory_clock_mhz", d.max_mem_clock_mhz}, {"l2_bytes", d.l2_bytes},
          {"shared_memory_per_block_optin", d.smem_per_block_optin}, {"max_threads_per_block", d.max_threads_per_block},
          {"driver_version", d.driver_version},
          {"cuda_version", std::to_string(d.cuda_version / 1000) + "." + std::to_string(d.cuda_version % 1000 / 10)}};
}

int run_devices(bool json) {
  const gpu::DeviceProbe probe = gpu::probe_devices();
  if (json) {
    Json out = {{"driver", state_name(probe.state)}, {"devices", Json::array()}};
    if (!probe.message.empty()) out["message"] = probe.message;
    for (const auto& d : probe.devices) out["devices"].push_back(device_json(d));
    std::cout << out.dump(2) << '\n';
  } else if (probe.state != gpu::DriverState::Ready) {
    // The engine's message already names the condition ("no CUDA driver: ...").
    std::cout << (probe.message.empty() ? std::string(state_name(probe.state)) : probe.message) << '\n';
  } else {
    Table t({"#", "name", "arch", "SMs", "memory GiB", "SM MHz", "mem MHz", "driver", "CUDA"});
    for (const auto& d : probe.devices)
      t.add({std::to_string(d.ordinal), d.name, d.arch(), std::to_string(d.sm_count),
             fixed(d.total_memory / double(1ull << 30), 1), std::to_string(d.max_sm_clock_mhz),
             std::to_string(d.max_mem_clock_mhz), d.driver_version,
             std::to_string(d.cuda_version / 1000) + "." + std::to_string(d.cuda_version % 1000 / 10)});
    t.print(std::cout);
  }
  return probe.state == gpu::DriverState::Ready && !probe.devices.empty() ? 0 : 1;
}

}  // namespace

void add_devices_command(CLI::App& app, CommandResult& result) {
  auto json = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand("devices", "List the GPUs the CUDA driver sees");
  sub->add_flag("--json", *json, "machine-readable output");
  sub->callback([json, &result] { result.exit_status = run_devices(*json); });
}

}  // namespace ktune::cli

namespace ktune::cli {
namespace {

struct ProfileCommandOptions : ResultsOptions {
  std::string spec;
  std::vector<std::string> sets;
  std::vector<std::string> configs;  // --config name=value,... (repeatable)
  std::vector<std::string> metrics;  // --metrics a,b,...: extra CUPTI metrics
  size_t top = 5;
  int gpu = 0;
  bool measure_limits = false;
};

}  // namespace

db::DeviceInfo profile_device_limits(const db::DeviceInfo& here, Profiler& profiler, db::Store& store, bool again) {
  if (!again)
    for (const db::DeviceRow& d : store.devices())
      if (d.info.name == here.name && d.info.copy_gbs > 0 && d.info.fp32_gflops > 0) return d.info;
  db::DeviceInfo measured = profiler.measure_limits();
  store.upsert_device(measured);
  return measured;
}

namespace {

int run_profile(const ProfileCommandOptions& o) {
  const Spec spec = load_spec(o.spec, set_option(o.sets));
  spec.require_runnable();
  tune::ProfileOptions po;
  po.top = o.top;
  po.metrics = o.metrics;
  for (const std::string& c : o.configs) po.configs.push_back(config_option(spec, c));
  db::Store store = open_results_db(o.resolved_db());
  GpuEvaluatorOptions go;
  go.gpu = o.gpu;
  go.cancel = ctrl_c().token();
  GpuEvaluator evaluator(spec, go);
  const CatchInterrupt catching;
  const db::DeviceInfo device = profile_device_limits(evaluator.device(), evaluator, store, o.measure_limits);
  const std::vector<tune::ProfiledRow> rows = tune::profile_stored(spec, evaluator, store, po);
  print_profile(spec, device, rows, o.json, std::cout);
  for (const auto& r : rows)
    if (!r.note.empty() && !o.json) std::cerr << "ktune: note: " << config_key(r.eval.config) << ": " << r.note << '\n';
  bool any = false;
  for (const auto& r : rows) any = any || r.eval.dram_read_bytes.has_value();
  return any ? 0 : 1;
}

}  // namespace

void add_profile_command(CLI::App& app, CommandResult& result) {
  auto o = std::make_shared<ProfileCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "profile", "Hardware counters (CUPTI) and roofline position for the best stored configurations of a spec");
  sub->add_option("spec", o->spec, "tuning spec (YAML or T1 JSON)")->required();
  sub->add_option("--set", o->sets, "override a constant of the spec: NAME=VALUE (repeatable)");
  sub->add_option("--top", o->top, "profile the N best stored configurations")->capture_default_str();
  sub->add_option("--config", o->configs, "profile this stored configuration instead: name=value,... (repeatable)");
  sub->add_option("--metrics", o->metrics,
                  "further CUPTI / Nsight Compute metric names, stored under their names (comma-separated)")
      ->delimiter(',');
  sub->add_flag("--measure-limits", o->measure_limits,
                "measure the device's copy bandwidth and FP32 throughput again (default: once per database)");
  sub->add_option("--gpu", o->gpu, "GPU index");
  sub->add_option("--db", o->db, "results database (default $KTUNE_DB, else ./ktune.db)");
  sub->add_flag("--json", o->json, "machine-readable output");
  sub->callback([o, &result] { result.exit_status = run_profile(*o); });
}

}  // namespace ktune::cli
