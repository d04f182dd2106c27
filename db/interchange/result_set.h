// ResultSet: the measurements of one kernel on one device at one problem size,
// as an interchange file holds them. Readers (Kernel Tuner cache, T4) produce
// one; writers consume one; import/export move one in and out of the Store.
//
// Also the one mapping between ktune's measured fields and the names other
// tools give them (Kernel Tuner's observers: num_regs, core_freq, ...), so
// both formats and both directions agree.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "db/record/record.h"

namespace ktune::db {

struct ResultSet {
  std::string format{};        // "kernel-tuner" or "t4"
  std::string device_name{};   // empty when the file does not say
  std::string kernel_name{};
  ProblemSize problem_size{};  // empty = unknown ("callable" or absent)
  std::vector<std::string> param_names{};
  std::vector<ValueType> param_types{};
  std::vector<std::vector<Value>> param_values{};  // tune_params, per parameter; may be empty
  std::vector<std::string> objectives{};           // default {"time"}
  std::vector<Evaluation> evaluations{};           // in file order
  bool truncated = false;    // an interrupted Kernel Tuner run, repaired on read
  size_t dropped = 0;        // partial records cut off by an interruption
};

// Kernel Tuner's observer fields are the Resource, Device and Counter entries
// of evaluation_fields() (num_regs -> registers, core_freq -> sm_clock_mhz,
// temperature, nvml_power -> power_w, nvml_energy -> energy_j, shared_bytes,
// local_bytes, occupancy, and Nsight Compute's metric names for counters).
inline bool is_observer(const EvaluationField& f) {
  return f.kind == EvaluationField::Kind::Resource || f.kind == EvaluationField::Kind::Device ||
         f.kind == EvaluationField::Kind::Counter;
}
// Stores a named numeric field in its ktune member when it has one; returns
// false otherwise, leaving the caller to treat it as a user metric.
bool take_observer_field(Evaluation& e, const std::string& name, double value);
// Calls out(name, value, unit) for each such member that is set.
void for_each_observer_field(const Evaluation& e,
                             const std::function<void(const char*, double, const char*)>& out);

// The domain of each parameter: rs.param_values when known, else the distinct
// values seen in the evaluations, sorted.
std::vector<std::vector<Value>> parameter_domains(const ResultSet& rs);

// Whole-file I/O with ktune::Error::bad_input / failed naming the path. A
// gzip file (by its magic bytes, whatever its name) is read decompressed, up
// to kMaxGunzipped bytes.
constexpr size_t kMaxGunzipped = size_t{256} << 20;
std::string read_text_file(const std::string& path);
void write_text_file(const std::string& path, const std::string& text);

}  // namespace ktune::db
