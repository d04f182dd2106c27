// Compiling one kernel configuration to a cubin with NVRTC, offline.
//
// Compiler turns a CompileRequest (source, kernel name, template arguments,
// -D defines, options, target arch) into a CompileResult: the cubin, the
// lowered (mangled) kernel name, the NVRTC log, and the kernel's resource
// usage and theoretical occupancy, all without a GPU or a CUDA driver.
//
// Contract:
//  * A configuration that does not compile (bad code, missing kernel, unknown
//    option) is data: ok == false with NVRTC's log. compile() throws
//    ktune::Error only for problems of the whole run: an unreadable source
//    file (bad input).
//  * Results go through a content-addressed CubinCache (cubin_cache.h) keyed
//    by the SHA-256 of everything that decides the output; a hit skips NVRTC
//    entirely. Failures that NVRTC reports for the code are cached too.
//  * A second cache level shares one cubin among configurations whose code
//    is the same: tunable parameters that the kernel never reads (or that
//    change nothing the compiler sees) make distinct first-level keys but the
//    same program. On a first-level miss NVRTC's front end runs alone (-dlto:
//    the program as NVVM IR, before the optimizer and ptxas, which take most
//    of a heavy kernel's compile time: docs/benchmarks.md), and the SHA-256 of
//    that IR with every option but the -D defines keys the second level. A
//    hit there returns the stored cubin (same_code); a miss compiles as
//    without it, so every cubin is the one NVRTC makes from that request.
//    Concurrent compiles of the same code in several processes wait for one
//    (CubinCache::claim). Each process stops paying for the front-end pass
//    for a kernel once, after 4 passes, the passes cost more than a twentieth
//    of its compiles plus what hits saved (measured: ~1% of the 15x15
//    convolution's compiles, ~9% of the BAT GEMM's, most of a tiny kernel's).
//  * compile() is safe to call from several threads, and several processes
//    may share one cache directory.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tuner/compile/cubin_cache.h"
#include "tuner/compile/cubin_info.h"
#include "tuner/compile/occupancy.h"

namespace ktune {

struct CompileRequest {
  std::string source;                  // CUDA C++ text; read from source_path when empty
  std::filesystem::path source_path;   // the file it came from: its folder is on the include path
  std::string kernel_name;             // "vadd", "gemm" or "ns::kern"
  std::vector<std::string> template_args;  // {"128", "float"} instantiates kernel_name<128, float>
  std::vector<std::pair<std::string, std::string>> defines;  // -Dname=value (value "" gives -Dname)
  std::vector<std::string> options;    // further NVRTC options, e.g. "-use_fast_math"
  std::vector<std::filesystem::path> include_dirs;  // searched after the source's folder
  Arch arch = Arch(90);
  std::string std = "c++17";
  // "nvrtc" (default) or "nvcc": kernels whose headers need a host compiler
  // (<cub/cub.cuh>, thrust) build with nvcc -cubin, in the same workers and cache.
  std::string compiler = "nvrtc";
  // Launch shape for the occupancy figure; 0 threads = no occupancy wanted.
  int block_threads = 0;
  std::size_t dynamic_smem = 0;
  // When another process or thread is compiling the same code right now,
  // return at once with CompileResult::deferred instead of waiting for it
  // (CompilePool sets this: it queues the request again and its worker
  // compiles something else meanwhile). Not part of the cache key.
  bool defer_if_busy = false;

  // kernel_name, or kernel_name<args...> when template arguments are given.
  std::string name_expression() const;
};

struct CompileResult {
  bool ok = false;
  std::string log;           // NVRTC's log (ptxas -v lines included); always kept on failure
  std::string cubin;         // ELF bytes, for cuModuleLoadData
  std::string lowered_name;  // for cuModuleGetFunction
  double compile_ms = 0;     // wall time of this call (a cache lookup on a hit)
  bool cache_hit = false;
  // The cubin of another configuration with the same front-end output (the
  // second cache level): NVRTC's front end ran, its optimizer and ptxas did not.
  bool same_code = false;
  // Not compiled: defer_if_busy was set and the same code was being compiled
  // elsewhere. Never cached; ask again later.
  bool deferred = false;
  std::string cache_key;     // 64 hex digits
  KernelResources resources;
  std::optional<Occupancy> occupancy;  // when block_threads > 0 and the arch is in the table

  // The log's line holding the first "error" (the log's first line when none
  // does; "" for an empty log): a one-line reason for tables and the database.
  std::string error_line() const;
};

// The second cache level (same code, other parameters): `automatic` pays for
// the front-end pass while it pays back for a kernel (the contract above),
// `always` for every miss, `off` never. KTUNE_CODE_REUSE=0 or =1 in the
// environment means off or always, whatever the options say.
enum class CodeReuse { automatic, always, off };

struct CompilerOptions {
  bool use_cache = true;
  CodeReuse code_reuse = CodeReuse::automatic;  // needs use_cache
  std::filesystem::path cache_dir{};  // empty: CubinCache::default_dir()
  // Folder of the CUDA headers; empty: $CUDA_HOME/include, else the toolkit
  // ktune was built against.
  std::filesystem::path cuda_include_dir{};
};

class Compiler {
 public:
  explicit Compiler(CompilerOptions options = {});

  CompileResult compile(const CompileRequest& request) const;

  // NVRTC's version as "13.0"; part of every cache key.
  static std::string nvrtc_version();
  // The nvcc the nvcc backend runs: $CUDA_HOME/bin/nvcc, else the toolkit's
  // beside its include folder, else nvcc on PATH.
  std::filesystem::path nvcc_path() const;
  // The sm numbers this NVRTC can compile for (nvrtcGetSupportedArchs), ascending.
  static const std::vector<int>& supported_archs();
  const CubinCache* cache() const { return cache_ ? &*cache_ : nullptr; }
  const std::filesystem::path& cuda_include_dir() const { return cuda_include_dir_; }

 private:
  CompileResult compile_with_nvcc(const CompileRequest& request, const std::string& source, bool* cacheable) const;
  static CompileResult with_resources(CompileResult r);
  CompileResult compile_with_nvrtc(const CompileRequest& request, const std::string& source,
                                   bool* cacheable) const;
  // NVRTC's full argument list for a request: its portable options, the
  // include paths, --no-cache.
  std::vector<std::string> nvrtc_arguments(const CompileRequest& request) const;
  // The second-level key (compiler.h's contract), or nullopt when the front
  // end alone fails; *ms is what it cost.
  std::optional<std::string> same_code_key(const CompileRequest& request, const std::string& source,
                                           double* ms) const;
  // First-level miss of an NVRTC request: through the second level when that
  // pays for this kernel (what this process has seen), else straight to NVRTC.
  CompileResult compile_missed(const CompileRequest& request, const std::string& source, bool* cacheable) const;

  // What the second level cost and saved per kernel (source path and name),
  // in this process.
  struct ReuseStats {
    int keys = 0;
    double key_ms = 0, compile_ms = 0, saved_ms = 0;
    bool worth() const { return keys < 4 || key_ms <= 0.05 * compile_ms + saved_ms; }
  };
  std::optional<CubinCache> cache_;
  CodeReuse code_reuse_ = CodeReuse::automatic;
  std::filesystem::path cuda_include_dir_;
  struct ReuseLedger {
    std::mutex mutex;
    std::map<std::string, ReuseStats> kernels;
  };
  std::shared_ptr<ReuseLedger> reuse_ledger_ = std::make_shared<ReuseLedger>();
};

// The cache key of a request: SHA-256 over the source and every local header
// it includes (recursively, `#include "..."` resolved like NVRTC does), the
// name expression, all options that reach NVRTC except machine-specific
// include paths, the arch and NVRTC's version. Exposed for tests and tools.
std::string compile_cache_key(const CompileRequest& request, const std::string& source);

}  // namespace ktune
