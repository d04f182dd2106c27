// ktune::Launcher — run tuned kernels from an application.
//
// From a tuning spec (YAML or T1, the same file `ktune tune` used) and the
// tuning results (a ktune database, the file `ktune export --format json`
// writes, or a Kernel Tuner cache / T4 file), a Launcher picks the configuration for the current GPU and problem,
// compiles it through NVRTC with ktune's on-disk cubin cache, and launches it
// with the spec's launch geometry:
//
//   ktune::Launcher vadd({.spec = "vector_add.yaml", .results = "tuned.json"});
//   vadd({{"n", n}}, stream, c, a, b, n);   // kernel arguments as the kernel takes them
//
// A problem is given as values for the spec's constants ({"n", n} above); the
// spec's problem_size, grid and the constants derived from them follow it.
// Selection falls back in this order, and the choice is reported: the exact
// device (nearest problem size), the same compute capability, the same major
// architecture (nearest minor), the most portable configuration (of those
// measured on every device at the nearest problem size that has one, the one
// whose worst ratio to a device's optimum is smallest: `ktune compare`), the
// configuration that wins most often (where no configuration was measured on
// every device), and, when the results hold nothing for the kernel, the spec's
// default configuration (each parameter's first listed value; if that breaks a
// restriction, the first valid configuration) with a warning — never a failure.
//
// The first launch of a problem compiles (or loads from the cubin cache) and
// loads the module into the CUDA context current on the calling thread (the
// device's primary context, which the CUDA runtime uses too, when none is);
// choice(problem).compile_ms says what it cost. Later launches of the same
// problem cost one hash lookup over a raw cuLaunchKernel. All members are
// thread-safe.
//
// Errors (ktune::Error, what() gives the message): a spec or results file that
// cannot be read, a problem naming no constant of the spec, no CUDA driver, a
// configuration that does not compile for this GPU, a failed launch.
//
// This header needs only the C++ standard library; link ktune::runtime.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

struct CUstream_st;

namespace ktune {

struct LauncherOptions {
  std::string spec;     // tuning spec file
  std::string results;  // database, JSON export, Kernel Tuner cache or T4 file; "" = spec defaults
  std::string kernel;   // results' kernel name; "" = the spec's kernel name
  std::string cache_dir;  // cubin cache; "" = $KTUNE_CACHE_DIR, else the XDG cache folder
  // Receives the report of each problem's first launch and warnings; the
  // default writes "ktune: ..." lines to stderr. An empty function silences.
  std::function<void(const std::string&)> report = default_report;

  static void default_report(const std::string& line);
};

// Values of spec constants that define one problem, e.g. {{"n", 1 << 20}}.
using Problem = std::vector<std::pair<std::string, std::int64_t>>;

// What the launcher picked for a problem, and where it came from.
struct Choice {
  std::vector<std::pair<std::string, std::string>> config;  // parameter, value (as written in the spec)
  std::string match;   // "exact device", "same compute capability", "same major architecture",
                       // "most portable", "most often best" or "spec defaults"
  std::string source;  // the entry's device, problem size, time and run; for "most portable" its
                       // problem size, worst ratio and PP ("" for spec defaults)
  std::string device;  // the device chosen for (its name)
  int compute_capability = 0;           // of that device, e.g. 90
  std::int64_t problem_size_total = 0;  // product of the spec's problem_size for this problem
  std::array<unsigned, 3> grid{}, block{};
  unsigned shared_memory = 0;  // dynamic, bytes
  double compile_ms = 0;       // NVRTC or cache lookup plus module load; 0 from choose()
  bool cache_hit = false;

  std::string config_text() const;  // "block_size_x=128, tile=4"
  std::string str() const;          // one line for logs
};

class Launcher {
 public:
  // Reads the spec and the results; touches no GPU.
  explicit Launcher(LauncherOptions options);
  ~Launcher();
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  // The choice for a device described by name and compute capability (e.g.
  // "NVIDIA H100 80GB HBM3", 90), without compiling or any GPU: to inspect
  // or test selection offline.
  Choice choose(const Problem& problem, const std::string& device_name, int compute_capability) const;

  // Picks, compiles and loads for the current device on first use of the
  // problem; returns the choice (with its compile cost).
  const Choice& prepare(const Problem& problem);

  // Launches on `stream` (nullptr: the default stream). args: pointers to each
  // kernel argument, as cuLaunchKernel takes them. Asynchronous, like any launch.
  void launch(const Problem& problem, CUstream_st* stream, void** args);

  template <class... Args>
  void operator()(const Problem& problem, CUstream_st* stream, Args... args) {
    void* pointers[] = {static_cast<void*>(&args)..., nullptr};
    launch(problem, stream, pointers);
  }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ktune
