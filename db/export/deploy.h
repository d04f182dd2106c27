// Deployment exports: the best configurations in the Store, shaped for use
// outside ktune — ktune's own JSON, Kernel Launcher wisdom files and a C++17
// header (db/export/header.h).
//
// collect_deploy() gathers Store::best() over a filter into one DeployKernel
// per kernel name. Kernel records of one name (several spec hashes) are merged
// when their parameter names agree; rows under a differing parameter list are
// left out (the newest kernel record's list wins), since one exported Config
// type cannot describe both. When two records answer for the same
// (device, problem size), the faster wins. Everything is sorted (kernels by
// name, entries by device name then problem size), so the same database always
// gives the same bytes.
//
// Errors: export_deploy() throws Error::bad_input for unknown kernels/devices
// (via Store::require_known) and Error::failed when nothing matched.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/store.h"

namespace ktune::db {

struct DeployEntry {
  std::string device{};
  int compute_capability = 0;  // major*10+minor; 0 = unknown
  ProblemSize problem_size{};  // canonical; empty = unknown
  std::vector<Value> config{};
  double time_ms = 0;
  std::string timestamp{};
  std::optional<int64_t> run_id{};
  std::string config_key{};    // Kernel Tuner's key of config
  bool replayed = false;       // a replay's row (recorded elsewhere), exported only when asked for
};

// The most portable configuration at one problem size (db/portability.h):
// of the configurations measured on every device with results at that size,
// the one whose worst ratio to each device's optimum is smallest.
struct DeployPortable {
  ProblemSize problem_size{};
  std::vector<Value> config{};
  std::string config_key{};
  double worst = 1;  // its largest time / a device's optimum
  double pp = 1;     // performance portability: harmonic mean of optimum/time
  std::vector<std::string> devices{};  // over which it was computed, sorted
};

struct DeployKernel {
  std::string name{};
  std::vector<std::string> param_names{};
  std::vector<ValueType> param_types{};
  std::vector<DeployEntry> entries{};  // best per (device, problem size)
  // Per problem size where some configuration was measured on every device
  // (sorted by problem size): the fallback for a device the results do not know.
  std::vector<DeployPortable> portable{};
};

// Product of the extents; 0 for an unknown size.
int64_t problem_size_total(const ProblemSize& ps);

std::vector<DeployKernel> collect_deploy(Store& store, const Filter& f);

// Per (compute capability, problem size): the fastest among that
// architecture's devices. Entries with an unknown compute capability are left
// out. Sorted by compute capability, then problem size.
std::vector<DeployEntry> best_per_arch(const DeployKernel& k);
// The configuration that is best for the most (device, problem size) pairs;
// ties go to the smaller config key. REQUIRES: !k.entries.empty().
const DeployEntry& most_often_winner(const DeployKernel& k);
// The most portable configuration for a problem size total: that of the
// nearest problem size that has one (ties: the smaller size); nullptr when no
// problem size has one.
const DeployPortable* nearest_portable(const DeployKernel& k, int64_t problem_size_total);
// The most portable configuration of the problem size measured on the most
// devices (ties: the larger size), for a default that ignores problem sizes
// (Kernel Tuner's defines); nullptr when no problem size has one.
const DeployPortable* widest_portable(const DeployKernel& k);

// {"kernels":[{"name","parameters","entries":[...]}]} (docs/database.md).
std::string deploy_json(const std::vector<DeployKernel>& kernels);
// The inverse of deploy_json (config keys recomputed, parameter types taken
// from the values). Throws Error::bad_input naming `where` on malformed text.
std::vector<DeployKernel> parse_deploy_json(const std::string& text, const std::string& where);

// How a configuration was chosen for a device, in fallback order.
enum class DeployMatch { ExactDevice, SameComputeCapability, SameMajor, MostPortable, MostOften };
// "exact device", "same compute capability", "same major architecture",
// "most portable", "most often best"
const char* to_string(DeployMatch m);

struct DeploySelection {
  DeployEntry entry{};  // for MostPortable: device "", the portable configuration at its problem size
  DeployMatch match = DeployMatch::MostOften;
  std::optional<DeployPortable> portable{};  // set for MostPortable
};

// The run-time twin of the exported header's select(device_name, cc, total):
// the exact device (nearest problem size total), else the best among the
// devices of the same compute capability, else of the same major architecture
// (nearest minor), else nearest_portable, else most_often_winner; sizes by
// nearest total. The header and this function must agree
// (tests/export_header_test.cpp compiles the one and compares with the
// other). REQUIRES: !k.entries.empty().
DeploySelection select_deploy(const DeployKernel& k, const std::string& device_name, int compute_capability,
                              int64_t problem_size_total);

// Kernel Launcher wisdom file name for a key: [^0-9A-Za-z_.-] -> '_' + ".wisdom".
std::string wisdom_file_name(const std::string& key);
// The text of one kernel's wisdom file (JSON lines, docs/formats.md).
// devices supplies driver/NVRTC versions where the store knows them.
std::string wisdom_text(const DeployKernel& k, const std::vector<DeviceRow>& devices);

enum class DeployFormat { Header, Json, Wisdom };
// "header" / "json" / "wisdom"; std::nullopt otherwise.
std::optional<DeployFormat> deploy_format_from_string(const std::string& s);

struct DeployOptions {
  std::string header_namespace = "ktune_tuned";
  bool kernel_tuner_defines = false;
};

struct DeploySummary {
  size_t kernels = 0;
  size_t entries = 0;
  std::vector<std::string> files{};  // what was written
};

// Writes path (a file; for Wisdom a directory, created when missing).
DeploySummary export_deploy(Store& store, const Filter& f, DeployFormat format, const std::string& path,
                            const DeployOptions& options = {});

}  // namespace ktune::db
