// Comparing one kernel's results across devices: each device's optimum, the
// portability matrix, the most portable configuration with its performance
// portability (Pennycook et al.), and how much each parameter matters on each
// device. `ktune compare`, `ktune report` and the deployment exports' fallback
// for an unknown device (db/export/deploy.h) all use it.
//
// Definitions (docs/compare.md):
//  * A configuration counts with its latest evaluation on a device, as resume
//    reads it; it is measured there when that evaluation is ok with a time.
//  * A device's optimum: its fastest measured configuration (ties: the smaller
//    configuration key). Devices with no measured configuration are left out.
//  * matrix[a][b] = time on b of a's optimum / b's optimum (>= 1; 1 on the
//    diagonal); no ratio where b has not measured a's optimum (NotMeasured) or
//    where it failed there (Failed, with its status).
//  * The most portable configuration: among those measured on every device,
//    the one whose worst ratio to the devices' optima is smallest (ties: the
//    higher PP, then the smaller key). PP = the harmonic mean of its
//    efficiencies optimum/time, n / sum(time/optimum).
//  * A parameter's effect on a device, from its measured configurations:
//    for each value v, best_ratio(v) = the fastest time with p = v / the
//    optimum (what fixing p to v costs when every other parameter is tuned);
//    worst_best_ratio = the largest of those (how much a wrong choice of p can
//    cost); variance_explained = the share of the variance of log(time) that
//    p's values explain (eta squared of a one-way analysis of variance).
//
// compute_portability() is pure; load_series() reads the rows from a Store.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "db/record/record.h"
#include "db/store.h"

namespace ktune::db {

// One device's evaluations of one kernel at one problem size.
struct DeviceSeries {
  std::string device{};          // as stored; "NAME (replay)" for the rows replays stored
  int compute_capability = 0;    // major*10+minor; 0 = unknown
  bool replayed = false;
  std::vector<ResultRow> rows{};  // every evaluation, in the order stored
  // The latest evaluation of each configuration: config key -> index into rows.
  std::map<std::string, size_t> latest() const;
};

// One kernel at one problem size, on every device that has results for it.
struct KernelSeries {
  std::string kernel{};
  ProblemSize problem_size{};
  std::vector<std::string> param_names{};
  std::vector<DeviceSeries> devices{};  // sorted by name
};

// Every (kernel name, problem size) matching f (kernel, problem size,
// replayed; f.device keeps one device), sorted by kernel then problem size.
// Kernel records of one name are merged when their parameter names are the
// newest record's (as the deployment exports merge them); rows under other
// parameter names are left out.
std::vector<KernelSeries> load_series(Store& store, const Filter& f);

// A configuration's latest result on one device.
struct ConfigResult {
  std::vector<Value> config{};
  std::optional<double> time_ms{};  // set when measured (status ok)
  Status status = Status::Ok;
};

// The input of compute_portability: one device's results, by config key.
struct DeviceResults {
  std::string device{};
  int compute_capability = 0;
  std::map<std::string, ConfigResult> configs{};
};

DeviceResults device_results(const DeviceSeries& s);

struct DeviceOptimum {
  std::string device{};
  int compute_capability = 0;
  std::vector<Value> config{};
  std::string config_key{};
  double time_ms = 0;
  size_t measured = 0;  // configurations with a time
  size_t failed = 0;    // configurations whose latest evaluation failed
};

enum class CellState { Measured, Failed, NotMeasured };

struct PortabilityCell {
  CellState state = CellState::NotMeasured;
  std::optional<double> ratio{};  // when Measured
  Status status = Status::Ok;     // when Failed: how
};

struct PortableConfig {
  std::vector<Value> config{};
  std::string config_key{};
  double worst = 1;            // largest time/optimum over the devices
  double pp = 1;               // harmonic mean of the efficiencies optimum/time
  std::vector<double> ratios{};  // time/optimum per device, in Portability::devices order
};

struct ValueEffect {
  Value value{};
  size_t configs = 0;     // measured configurations with this value
  double best_ratio = 0;  // fastest of those / the optimum
};

struct ParameterDeviceEffect {
  std::vector<ValueEffect> values{};  // the values measured, sorted
  double worst_best_ratio = 1;
  double variance_explained = 0;  // 0..1
};

struct ParameterEffect {
  std::string name{};
  bool differs = false;                          // the devices' optima disagree on it
  std::vector<ParameterDeviceEffect> devices{};  // in Portability::devices order
};

struct Portability {
  std::vector<std::string> param_names{};
  std::vector<DeviceOptimum> devices{};
  std::vector<std::string> left_out{};  // devices without a measured configuration
  std::vector<std::vector<PortabilityCell>> matrix{};  // [optimum of][measured on]
  size_t common = 0;                    // configurations measured on every device
  std::optional<PortableConfig> portable{};  // none when `common` is 0
  std::vector<ParameterEffect> parameters{};
};

// The comparison of `devices` (in that order, those without a measurement
// left out). Deterministic.
Portability compute_portability(const std::vector<std::string>& param_names, const std::vector<DeviceResults>& devices);

}  // namespace ktune::db
