// A tuning spec: everything ktune needs to know about one tuning problem, in
// one in-memory model whichever file it came from (ktune's YAML or a T1 JSON
// file from the BAT suite / Kernel Tuner; see docs/spec.md).
//
// load_spec() validates every key and every expression before it returns: an
// unknown key, a value of the wrong kind, a name no expression can resolve, a
// missing kernel file or malformed YAML/JSON throws Error::bad_input with the
// file, line and column. Nothing the user wrote wrong is silently defaulted.
//
// After loading, the per-configuration helpers never throw: a configuration
// whose launch geometry cannot be evaluated (division by zero, a block of 0
// threads, ...) is an invalid configuration, reported as an error string.
//
// Configuration values are passed as std::vector<Value> in the order of
// space().parameters() (which is the order the spec declared them).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <string>
#include <utility>
#include <vector>

#include "search/expr/expr.h"
#include "search/space/space.h"
#include "search/expr/value.h"
#include "tuner/base/arch.h"
#include "tuner/base/elem_type.h"

namespace ktune {

// Element type of a kernel argument (a buffer's element or a by-value scalar).

// How a device buffer is filled before every launch. Unset optionals keep the
// engine's defaults (gpu::Fill): seed derived from the argument name, range
// [0, 1) for floats and [0, 100) for integers.
struct ArgFill {
  enum class Kind { Zeros, Constant, Random, Sequence, Generator, File, Normal, Copy };
  Kind kind = Kind::Zeros;
  Value value;              // Constant: the element value
  std::optional<double> lo, hi;      // Random: uniform in [lo, hi)
  std::optional<uint64_t> seed;      // Random, Normal
  double mean = 0, stddev = 1;       // Normal: normally distributed
  std::string copy_of;               // Copy: the argument whose initial contents this one starts with
  double start = 0, step = 1;  // Sequence: start + i * step
  std::optional<expr::Expression> generator;  // Generator: an expression of `i` (and constants)
  expr::CompiledExpr generator_code;          // ... compiled with slot 0 = i
  std::string path;         // File: absolute path of raw little-endian elements
};
const char* fill_kind_name(ArgFill::Kind k);

// A TMA tensor map (CUtensorMap, 128 bytes passed by value) over a buffer
// argument: the kernel copies boxes of it with cp.async.bulk.tensor. Every
// entry is a constant of the spec; the first dimension is the innermost.
struct TensorMapArg {
  std::string of;                // the buffer argument it describes
  std::vector<int64_t> dims;     // elements per dimension, innermost first (1 to 5 entries)
  std::vector<int64_t> strides;  // elements between consecutive entries of dims 1.. (default: packed)
  std::vector<int64_t> box;      // elements per dimension of one copy (1 to 256 each)
  int swizzle = 0;               // bytes of the shared-memory swizzle span: 0 (none), 32, 64 or 128
};

struct Argument {
  std::string name;
  ElemType type = ElemType::F32;
  bool pointer = false;         // a device buffer (float*) rather than a by-value scalar
  int64_t size = 0;             // pointers: number of elements of `type` (evaluated at load)
  int components = 1;           // pointers: a vector type's lanes (float2: 2); size counts the lanes
  ArgFill fill;                 // pointers
  Value value;                  // scalars: the value passed, already of the right kind
  bool output = false;          // compared against the reference after each run
  std::optional<double> atol, rtol;  // an output's own tolerances, in place of verify's
  bool read_write = false;      // an output the kernel also reads (restored, not poisoned)
  // YAML `memory: constant`, T1 MemType Constant: copied to the __constant__
  // array `name` of each configuration's module, not a kernel parameter...
  bool constant_memory = false;
  // ...unless the kernel takes it as one too (Kernel Tuner's T1 reader passes
  // it both ways); set by the signature check.
  bool passed_too = false;
  // YAML `type: tensor_map`: passed by value, 128 bytes; `type` is its buffer's.
  std::optional<TensorMapArg> tensor_map;
  SourceLocation where;
};

struct Verify {
  enum class Mode { None, Reference, FirstValid, File };
  Mode mode = Mode::None;
  std::string kernel;  // Reference: a kernel of the same source, compiled without tunable defines
  std::string path;    // File: absolute path of the expected outputs (raw, outputs in order)
  std::array<int64_t, 3> block{256, 1, 1};  // Reference: its launch geometry
  std::array<int64_t, 3> grid{1, 1, 1};
  double atol = 1e-6;
  double rtol = 0;
  SourceLocation where;
};

struct StrategySpec {
  std::string name;                    // "" = not given (the command picks its default)
  std::optional<uint64_t> max_fevals;
  std::optional<double> time_limit_s;
  std::optional<uint64_t> seed;
  std::optional<double> max_fraction;  // T1 ConfigurationFraction: of the valid space
  // Every other option, verbatim; the strategy validates them (make_strategy).
  std::map<std::string, Value, std::less<>> options;
  SourceLocation where;
};

struct KernelSpec {
  std::string name;
  std::string source_path;  // absolute
  std::string source;       // the file's text
  std::vector<std::string> template_args;  // parameter/constant names; empty = -D mode
  std::vector<std::string> compiler_options;
  // kernel.compiler: "nvrtc" (default) or "nvcc" (for headers that need a host
  // compiler: <cub/cub.cuh>, thrust), with the same defines, options and arch.
  std::string compiler = "nvrtc";
  // kernel.archs: the only targets the source is written for (e.g. sm_90a for
  // wgmma); empty = any architecture, compiled for the device's own sm_XY.
  std::vector<Arch> archs;
  SourceLocation where;

  // The target to compile for when `requested` is asked for (a device's
  // compute capability, or --arch): `requested` itself when archs is empty; else
  // the listed entry of the same sm number (sm_90 -> sm_90a), or requested when
  // it carries a suffix and is listed. nullopt: the kernel cannot run there.
  std::optional<Arch> target_arch(const Arch& requested) const;
  std::string archs_text() const;  // "sm_90a, sm_100a"
  // Why target_arch(requested) has none: "kernel 'k' is written for sm_90a
  // (kernel.archs), not sm_80".
  std::string not_written_for(const Arch& requested) const;
};

// An expression as written plus its form compiled against the spec's scope
// (slot i = parameter i, constants folded in).
struct BoundExpr {
  expr::Expression expression;
  expr::CompiledExpr code;
};

struct Metric {
  std::string name;
  BoundExpr expr;  // slots: parameters, then time_ms, energy_j, then earlier metrics
};

using Dim3 = std::array<int64_t, 3>;

struct Launch {
  Dim3 grid{1, 1, 1};   // in blocks
  Dim3 block{1, 1, 1};  // in threads
  int64_t shared_memory = 0;  // dynamic, bytes
  Dim3 problem_size{1, 1, 1};
};

struct LaunchResult {
  std::optional<Launch> launch;
  std::string error;  // set when launch is empty
  bool ok() const { return launch.has_value(); }
};

enum class GridMode {
  Divisors,    // grid[i] = ceil(problem_size[i] / product(grid_div[i]))  (Kernel Tuner)
  Explicit,    // grid[i] = expression
  GlobalSize,  // T1 GlobalSize: blocks (CUDA) or threads (OpenCL, divided by the block)
};

struct Spec {
  enum class Format { Yaml, T1 };
  Format format = Format::Yaml;
  std::string path;  // the spec file as given
  std::string dir;   // its folder (absolute); relative paths resolve against it

  KernelSpec kernel;
  std::vector<std::pair<std::string, Value>> constants;  // in declaration order
  std::vector<BoundExpr> problem_size;                   // 1 to 3
  // problem_size names a tunable parameter (Kernel Tuner's reduction example:
  // problem_size = "num_blocks"): it sets the grid of each configuration and
  // is no problem size of the series; results are stored under none.
  bool problem_size_tuned = false;
  GridMode grid_mode = GridMode::Divisors;
  std::array<std::vector<BoundExpr>, 3> grid_div;        // Divisors
  std::vector<BoundExpr> grid;                           // Explicit/GlobalSize: 3 entries
  bool global_size_in_threads = false;                   // GlobalSize with GlobalSizeType OpenCL
  std::vector<std::string> block_size_names;             // YAML; empty for T1
  std::array<BoundExpr, 3> block;                        // the block's x, y, z
  BoundExpr shared_memory;
  std::vector<expr::Expression> restrictions;
  // Limits of every CUDA device the space applies beside the restrictions (the
  // space's own restriction list ends with them), e.g. "threads per block <= 1024".
  std::vector<std::string> device_limits;
  std::vector<Argument> arguments;                       // in kernel-parameter order
  Verify verify;
  std::vector<Metric> metrics;
  std::string objective = "time";  // "time", "energy" (J per launch) or a metric name
  bool higher_is_better = false;
  // The objective is a value only recordings hold (a Kernel Tuner
  // hyper-parameter recording's `score`): replays and comparisons read it,
  // nothing can measure it.
  bool objective_recorded = false;
  StrategySpec strategy;
  // Always passed as -D (T1 BenchmarkConfig entries, as BAT's runner does).
  std::vector<std::pair<std::string, Value>> fixed_defines;
  // Things the file says that ktune accepts but does not act on, for the user.
  std::vector<std::string> notes;
  // Why this spec cannot be compiled or launched though it describes a space:
  // files that only compiling and launching read (the kernel source, fill and
  // reference files) and that were not found, a kernel in another language or
  // none (T1), arguments that do not match the kernel's parameters. Published
  // T1 files and specs from elsewhere often arrive so; the space, replays and
  // strategy comparisons do not need more, so loading goes on (with a note)
  // and require_runnable() stops a command that compiles, with the first
  // one's location (bad input, exit 2).
  struct NotRunnable {
    std::string what;  // "KernelFile", "kernel source", "fill file", "Language", "arguments", ...
    std::string path;
    SourceLocation where;
    std::string why{};  // the whole message where it is not "WHAT 'PATH' does not exist"
  };
  std::vector<NotRunnable> not_runnable;
  void require_runnable() const;
  // Checks every configuration's outputs against the first configuration's
  // that runs, for a spec that says nothing of verification (a T1 file as
  // published): `tune --verify first-valid`. The hash follows. Bad input when
  // the spec verifies otherwise already or marks no output.
  void verify_against_first_valid();

  std::string source_hash;  // SHA-256 (hex) of the kernel source text; "" when it is missing
  // SHA-256 (hex) of the canonical spec + source: everything that changes what a
  // measurement means. Strategy, budget, objective and metrics are left out so
  // results survive a change of search settings.
  std::string hash;

  const SearchSpace& space() const { return *space_; }

  // Launch geometry of one configuration; never throws.
  LaunchResult geometry(const std::vector<Value>& config) const;
  // -D definitions (name, C literal): grid_size_x/y/z and block size names (as
  // Kernel Tuner does), every tunable parameter not passed as a template
  // argument, the fixed defines, and kernel_tuner=1 (as Kernel Tuner defines
  // it). The geometry ones are left out when the geometry cannot be evaluated.
  std::vector<std::pair<std::string, std::string>> defines(const std::vector<Value>& config) const;
  std::vector<std::pair<std::string, std::string>> defines(const std::vector<Value>& config,
                                                           const Launch& launch) const;
  // Template arguments (C++ spelling) for kernel.template_args; empty in -D mode.
  std::vector<std::string> template_arguments(const std::vector<Value>& config) const;
  // The NVRTC name expression: "name<a, b>" in template mode, else the name.
  std::string name_expression(const std::vector<Value>& config) const;
  // Each metric's value in metrics order; nullopt where it cannot be evaluated
  // (e.g. division by zero, or energy_j used but not measured) or is not a number.
  std::vector<std::optional<double>> evaluate_metrics(const std::vector<Value>& config, double time_ms,
                                                      std::optional<double> energy_j = std::nullopt) const;
  // The objective's value (time_ms itself for "time", energy_j for "energy").
  std::optional<double> objective_value(const std::vector<Value>& config, double time_ms,
                                        std::optional<double> energy_j = std::nullopt) const;
  // `tune --objective NAME`: "time", "energy" or one of the metrics (lower is
  // better for time and energy; a metric keeps the spec's higher_is_better).
  // Bad input for anything else. Not part of the hash, as in the file.
  void set_objective(const std::string& name);
  // Whether the objective or a metric needs each configuration's energy
  // measured (`objective: energy`, a metric over energy_j).
  bool needs_energy() const;

  std::optional<SearchSpace> space_;  // set by the loader
};

// Values that replace the spec's own for named constants (`ktune tune --set
// n=4096`, the launcher's problem sizes). Constants defined by expressions
// over an overridden one follow it; naming a constant the spec does not have
// is bad input.
using ConstantOverrides = std::vector<std::pair<std::string, Value>>;

// Loads a spec: a .json file (or text starting with '{') is T1, anything else YAML.
Spec load_spec(const std::string& path, const ConstantOverrides& overrides = {});
// The same from text already read; `path` names it in messages and its folder
// resolves relative paths.
Spec load_spec_text(const std::string& text, const std::string& path, Spec::Format format,
                    const ConstantOverrides& overrides = {});

// Parses "name=value" items (a value is an int, a float, true/false, or else a
// string). Throws Error::bad_input for an item without a name and '='.
ConstantOverrides parse_constant_overrides(const std::vector<std::string>& items);

// Throws Error::failed("no valid configuration: ...") when the space is empty
// (naming any restriction that raised, as restriction_notes() does).
void require_valid_configurations(const Spec& spec);

// One note per restriction that raised an error for some configurations
// (which count as invalid), with how often and the first such configuration;
// known once the space has been counted (SearchSpace::raised_restrictions).
std::vector<std::string> restriction_notes(const Spec& spec);

// A duration with a unit: "500ms", "90s", "10m", "1.5h" -> seconds; nullopt
// for anything else (no unit, not positive, longer than kMaxDurationS, which
// also keeps it finite: "1e300h" is a typo, not a time limit).
constexpr double kMaxDurationS = 365.0 * 24 * 3600;
std::optional<double> parse_duration(std::string_view text);

// C literal for -D: ints as is, floats with a decimal point or exponent,
// bools 1/0, strings verbatim.
std::string c_define_literal(const Value& v);
// C++ template argument: like c_define_literal but bools as true/false.
std::string template_literal(const Value& v);

}  // namespace ktune
