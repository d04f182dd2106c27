// The results data model: what one tuning measurement is, where it ran, and
// under which run. Plain values with no SQLite in them, shared by the Store,
// the interchange readers/writers and the tuner.
//
// A failing configuration is an Evaluation with a non-Ok Status and a reason,
// never an exception. Optional fields are std::nullopt when not measured
// (SQL NULL in the store, absent in interchange files).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "search/expr/value.h"

namespace ktune::db {

enum class Status { Ok, Invalid, CompileError, RuntimeError, Timeout, WrongResult };

// "ok", "invalid", "compile_error", "runtime_error", "timeout", "wrong_result".
const char* to_string(Status s);
// The inverse of to_string; std::nullopt for any other text.
std::optional<Status> status_from_string(std::string_view s);

// A GPU model. Identified by name in the store: results transfer between boards
// of one model, as in Kernel Tuner and Kernel Launcher. Zero/empty = unknown.
struct DeviceInfo {
  std::string name{};
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int64_t memory_bytes = 0;
  int sm_clock_mhz = 0;
  int memory_clock_mhz = 0;
  std::string driver_version{};
  std::string cuda_version{};
  std::string nvrtc_version{};
  std::string uuid{};
  // The device's measured limits, the roofline's roof (0: not measured):
  // device-to-device copy bandwidth counting bytes read and written, and an
  // FP32 FMA kernel's throughput (`ktune devices --limits`).
  double copy_gbs = 0;
  double fp32_gflops = 0;
  friend bool operator==(const DeviceInfo&, const DeviceInfo&) = default;
};

// A tunable kernel as specified. Identified by (name, spec_hash): editing a
// spec makes a new kernel record, so old results never answer for a new space.
struct KernelInfo {
  std::string name{};
  std::string source_hash{};
  std::string spec_hash{};
  std::vector<std::string> param_names{};  // the order of Evaluation::config
  std::vector<ValueType> param_types{};    // same length as param_names
  friend bool operator==(const KernelInfo&, const KernelInfo&) = default;
};

// One invocation of the tuner (or one import).
struct RunInfo {
  std::string strategy{};
  std::string strategy_options{};  // JSON text
  std::optional<int64_t> seed{};
  std::string budget{};            // e.g. "max_fevals=200" or "time_limit=10m"
  std::string started_at{};        // ISO 8601; filled with now() when empty
  std::string ended_at{};
  std::string host{};
  std::string ktune_version{};
  bool replay = false;           // measurements replayed from recorded data
  std::string replay_source{};
  std::string imported_from{};     // path of an imported file; empty = measured here
};

// 1 to 3 extents; empty = unknown (Kernel Tuner's "callable" or absent).
using ProblemSize = std::vector<int64_t>;

// Trailing 1s dropped ([n, 1, 1] is [n]); throws Error::bad_input for more
// than 3 extents or an extent < 1.
ProblemSize canonical_problem_size(ProblemSize ps);
// "[]", "[4096]", "[1024,768]": the store's key for a canonical size.
std::string problem_size_key(const ProblemSize& ps);

struct Evaluation {
  std::vector<Value> config{};  // in the kernel's parameter order
  Status status = Status::Ok;
  std::string reason{};         // one line: why it failed
  std::string log{};            // compiler log or error details

  // Times in milliseconds. time_ms is the objective's time (median of samples
  // for native runs, Kernel Tuner's `time` for imported ones).
  std::optional<double> time_ms{};
  std::optional<double> min_ms{};
  std::optional<double> mean_ms{};
  std::optional<double> stddev_ms{};
  int64_t sample_count = 0;
  std::vector<double> samples{};
  std::map<std::string, double> metrics{};

  // Resource usage from the compiler.
  std::optional<int64_t> registers{};
  std::optional<int64_t> shared_bytes{};  // static shared memory per block
  std::optional<int64_t> local_bytes{};   // local memory incl. spills, per thread
  std::optional<double> occupancy{};      // theoretical, 0..1

  // Device state while measured.
  std::optional<double> sm_clock_mhz{};
  std::optional<double> temperature_c{};
  std::optional<double> power_w{};
  // Energy of one launch, J: NVML's energy counter over a window of
  // back-to-back launches (tune --energy), divided by the launches in it.
  std::optional<double> energy_j{};
  std::optional<int64_t> throttled_samples{};  // samples taken while NVML reported throttling

  // Hardware counters of one launch (CUPTI's range profiler, `ktune profile`,
  // `tune --profile-top`): what the kernel moved and how busy it kept the GPU.
  std::optional<double> dram_read_bytes{};
  std::optional<double> dram_write_bytes{};
  std::optional<double> dram_util{};          // DRAM throughput / the device's peak, 0..1
  std::optional<double> l2_hit_rate{};        // 0..1
  std::optional<double> load_requests{};      // global load instructions (warp requests)
  std::optional<double> load_sectors{};       // 32-byte sectors they touched
  std::optional<double> store_requests{};
  std::optional<double> store_sectors{};
  std::optional<double> achieved_occupancy{}; // active warps / the SM's maximum, 0..1
  std::optional<double> sm_util{};            // the busiest SM unit's throughput / its peak, 0..1
  std::optional<double> tensor_util{};        // tensor pipes' active cycles / peak, 0..1
  std::optional<double> bank_conflicts{};     // shared-memory bank conflicts
  std::optional<double> flop{};               // FP16/32/64 CUDA-core operations (an FMA counts 2)
  std::optional<double> tensor_flop{};        // tensor-core operations (hmma, hgmma paths)
  std::optional<double> profiled_ms{};        // the launch's time under the profiler

  // Where the tuner's time went, ms.
  std::optional<double> compile_ms{};
  std::optional<double> load_ms{};       // cuModuleLoadData and function lookup
  std::optional<double> verify_ms{};
  std::optional<double> benchmark_ms{};
  std::optional<double> strategy_ms{};
  std::optional<double> framework_ms{};

  // 1: sampling stopped early (racing): after a few samples the configuration
  // could not come near the best so far, so its time rests on fewer samples.
  std::optional<int64_t> stopped_early{};

  std::string timestamp{};  // ISO 8601 (or as read from an imported file); empty = not known, stored as NULL

  // Fills samples-derived statistics (min, mean, stddev, count) that are unset.
  void complete_stats();
  friend bool operator==(const Evaluation&, const Evaluation&) = default;
};

// The optional figures of an Evaluation besides its time statistics, in one
// table that the store (its columns, INSERT and SELECT), `results --json`,
// Kernel Tuner caches and T4 files (their names for each figure) and the
// replay (what an evaluation cost the tuner) all walk: a new figure is one line
// here plus the migration that adds its column (db/schema.cpp).
struct EvaluationField {
  enum class Kind {
    Resource,  // what the compiled kernel uses
    Phase,     // milliseconds of the tuner's time spent evaluating it (a replay's recorded cost)
    Search,    // milliseconds the strategy spent on it
    Device,    // the device's state while it was measured
    Sampling,  // how the time was sampled
    Counter,   // hardware counters of one launch
  };
  const char* column;                                    // the store's column, its `results --json` key
  std::optional<double> Evaluation::*real = nullptr;     // the member: one of these two
  std::optional<int64_t> Evaluation::*integer = nullptr;
  Kind kind = Kind::Resource;
  const char* kernel_tuner = "";  // its key in a Kernel Tuner cache record ("": not carried)
  const char* t4 = "";            // its name in a T4 result's "times" (Phase, Search) or "measurements"
  const char* unit = "";          // T4 measurement unit
  bool in_results = true;         // shown by `results --json`

  std::optional<double> get(const Evaluation& e) const;
  void set(Evaluation& e, std::optional<double> v) const;  // integers are rounded
};
const std::vector<EvaluationField>& evaluation_fields();

// Current UTC time as "2024-05-01T12:34:56.789Z".
std::string now_iso8601();

}  // namespace ktune::db
