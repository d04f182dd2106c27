// `ktune devices`: the GPUs the CUDA driver sees. Without a driver this is a
// normal, reported condition ("no CUDA driver"), exit status 1.
#include <CLI/CLI.hpp>

#include <iostream>

#include "tuner/cli/cli.h"
#include "tuner/cli/print/json.h"
#include "tuner/gpu/engine.h"
#include "tuner/cli/print/table.h"

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
