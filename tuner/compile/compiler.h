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
//  * compile() is safe to call from several threads, and several processes
//    may share one cache directory.
#pragma once

#include <cstddef>
#include <filesystem>
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
  std::string cache_key;     // 64 hex digits
  KernelResources resources;
  std::optional<Occupancy> occupancy;  // when block_threads > 0 and the arch is in the table

  // The log's line holding the first "error" (the log's first line when none
  // does; "" for an empty log): a one-line reason for tables and the database.
  std::string error_line() const;
};

struct CompilerOptions {
  bool use_cache = true;
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

  std::optional<CubinCache> cache_;
  std::filesystem::path cuda_include_dir_;
};

// The cache key of a request: SHA-256 over the source and every local header
// it includes (recursively, `#include "..."` resolved like NVRTC does), the
// name expression, all options that reach NVRTC except machine-specific
// include paths, the arch and NVRTC's version. Exposed for tests and tools.
std::string compile_cache_key(const CompileRequest& request, const std::string& source);

}  // namespace ktune
