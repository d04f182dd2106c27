#include "tuner/compile/compiler.h"

#include <nvrtc.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "ktune/error.h"
#include "tuner/compile/compile_parts.h"
#include "tuner/compile/hip_headers.h"
#include "tuner/compile/std_headers.h"
#include "tuner/base/sha256.h"

#ifndef KTUNE_CUDA_INCLUDE_DIR
#define KTUNE_CUDA_INCLUDE_DIR "/usr/local/cuda/include"
#endif

namespace ktune {
namespace fs = std::filesystem;
using namespace compile_detail;
namespace {

bool has_word(std::string_view text, std::string_view word) {
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    const bool left = at == 0 || !ident(text[at - 1]);
    const bool right = at + word.size() == text.size() || !ident(text[at + word.size()]);
    if (left && right) return true;
  }
  return false;
}

// A tunable passed as -Dname breaks CUDA's own headers when `name` is also an
// identifier there (`mode` is a parameter name in NVRTC's builtin header):
// every configuration then fails with errors deep in a header the user never
// wrote. When errors are in NVRTC's builtin header or the toolkit's headers
// and their context names a defined macro, say so first, in one line.
std::string header_clash_hint(const std::string& log, const CompileRequest& request, const fs::path& cuda_include) {
  std::istringstream lines(log);
  std::string line, where;
  std::set<std::string> clashing;
  bool in_header_error = false;
  while (std::getline(lines, line)) {
    const size_t paren = line.find('(');
    const bool error_line = line.find(": error") != std::string::npos && paren != std::string::npos;
    if (error_line) {
      const std::string file = line.substr(0, paren);
      in_header_error = file == "__nv_nvrtc_builtin_header.h" ||
                        (!cuda_include.empty() && file.rfind(cuda_include.string(), 0) == 0);
      if (in_header_error && where.empty()) where = line.substr(0, line.find(':'));
    }
    if (!in_header_error) continue;
    for (const auto& [name, value] : request.defines)
      if (has_word(error_line ? line.substr(line.find(": error")) : line, name)) clashing.insert(name);
  }
  if (clashing.empty()) return "";
  std::string names;
  for (const std::string& n : clashing) names += (names.empty() ? "'" : ", '") + n + "'";
  return "error: " + names + (clashing.size() > 1 ? " are" : " is") +
         " passed as -D macro and also an identifier in a CUDA header (first error at " + where +
         "): rename the tunable parameter in the spec and the kernel";
}

constexpr std::string_view kSameCodeKeySchema = "ktune-same-code-key 1";
// The longest a compile waits for another process's compile of the same code
// (whose claim also ends when that process dies).
constexpr double kSameCodeWaitS = 600;

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

class Program {
 public:
  ~Program() {
    if (prog_ != nullptr) nvrtcDestroyProgram(&prog_);
  }
  nvrtcProgram& get() { return prog_; }

 private:
  nvrtcProgram prog_ = nullptr;
};

std::string program_log(nvrtcProgram prog) {
  std::size_t size = 0;
  if (nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size <= 1) return "";
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(prog, log.data()) != NVRTC_SUCCESS) return "";
  // NVRTC joins the front end's and ptxas's logs with a NUL between them.
  std::erase(log, '\0');
  return log;
}

// A program for the request's source and name expression, with ktune's
// in-memory headers.
nvrtcResult create_program(Program& prog, const CompileRequest& request, const std::string& source) {
  std::string name = request.source_path.empty() ? "kernel.cu" : request.source_path.filename().string();
  std::vector<std::string> header_text, header_name;
  for (const auto& [include, text] : nvrtc_headers()) {
    header_name.emplace_back(include);
    header_text.emplace_back(text);
  }
  std::vector<const char*> headers, includes;
  for (size_t i = 0; i < header_text.size(); ++i) {
    headers.push_back(header_text[i].c_str());
    includes.push_back(header_name[i].c_str());
  }
  nvrtcResult rc = nvrtcCreateProgram(&prog.get(), source.c_str(), name.c_str(), static_cast<int>(headers.size()),
                                      headers.data(), includes.data());
  if (rc == NVRTC_SUCCESS) rc = nvrtcAddNameExpression(prog.get(), request.name_expression().c_str());
  return rc;
}

}  // namespace

namespace compile_detail {

std::optional<std::string> slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path source_dir(const CompileRequest& r) {
  return r.source_path.empty() ? fs::path() : r.source_path.parent_path();
}

std::vector<fs::path> search_dirs(const CompileRequest& r) {
  std::vector<fs::path> dirs;
  if (!source_dir(r).empty()) dirs.push_back(source_dir(r));
  dirs.insert(dirs.end(), r.include_dirs.begin(), r.include_dirs.end());
  return dirs;
}

std::vector<std::string> portable_options(const CompileRequest& r) {
  std::vector<std::string> opts = {"-arch=" + r.arch.name(), "-std=" + r.std};
  for (const auto& [name, value] : r.defines) opts.push_back("-D" + name + (value.empty() ? "" : "=" + value));
  bool verbose = false;
  for (const std::string& o : r.options) {
    opts.push_back(o);
    verbose = verbose || o == kPtxasVerbose || o == "-Xptxas=-v";
  }
  // ptxas's report is the only source of spill figures.
  if (!verbose) opts.emplace_back(kPtxasVerbose);
  return opts;
}

fs::path default_cuda_include_dir() {
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0') {
    return fs::path(home) / "include";
  }
  std::string built_with = KTUNE_CUDA_INCLUDE_DIR;
  fs::path dir = built_with.substr(0, built_with.find(';'));  // CMake may hand over a list
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) dir = "/usr/local/cuda/include";
  return dir;
}

const std::vector<std::pair<std::string_view, std::string_view>>& nvrtc_headers() {
  static const auto all = [] {
    std::vector<std::pair<std::string_view, std::string_view>> v = nvrtc_std_headers();
    v.insert(v.end(), hip_headers().begin(), hip_headers().end());
    return v;
  }();
  return all;
}

void append_line(std::string& log, const std::string& line) {
  if (!log.empty() && log.back() != '\n') log += '\n';
  log += line + '\n';
}

}  // namespace compile_detail

std::string CompileRequest::name_expression() const {
  if (template_args.empty()) return kernel_name;
  std::string expr = kernel_name + "<";
  for (std::size_t i = 0; i < template_args.size(); ++i) expr += (i ? ", " : "") + template_args[i];
  return expr + ">";
}

std::string CompileResult::error_line() const {
  size_t at = log.find("error");
  if (at == std::string::npos) at = 0;
  size_t start = log.rfind('\n', at);
  start = start == std::string::npos ? 0 : start + 1;
  return log.substr(start, log.find('\n', start) - start);
}

Compiler::Compiler(CompilerOptions options)
    : cuda_include_dir_(options.cuda_include_dir.empty() ? default_cuda_include_dir()
                                                         : options.cuda_include_dir) {
  if (options.use_cache) {
    cache_.emplace(options.cache_dir.empty() ? CubinCache::default_dir() : options.cache_dir);
  }
  code_reuse_ = options.code_reuse;
  if (const char* env = std::getenv("KTUNE_CODE_REUSE"); env != nullptr && std::string_view(env) == "0") {
    code_reuse_ = CodeReuse::off;
  } else if (env != nullptr && std::string_view(env) == "1") {
    code_reuse_ = CodeReuse::always;
  }
}

std::string Compiler::nvrtc_version() {
  static const std::string version = [] {
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    return std::to_string(major) + "." + std::to_string(minor);
  }();
  return version;
}

const std::vector<int>& Compiler::supported_archs() {
  static const std::vector<int> archs = [] {
    int n = 0;
    std::vector<int> out;
    if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0) return out;
    out.resize(static_cast<size_t>(n));
    if (nvrtcGetSupportedArchs(out.data()) != NVRTC_SUCCESS) out.clear();
    return out;
  }();
  return archs;
}

CompileResult Compiler::compile(const CompileRequest& request) const {
  auto start = std::chrono::steady_clock::now();
  std::string source = request.source;
  if (source.empty() && !request.source_path.empty()) {
    std::optional<std::string> text = slurp(request.source_path);
    if (!text) throw Error::bad_input("cannot read kernel source", {request.source_path.string()});
    source = std::move(*text);
  }
  std::string key = compile_cache_key(request, source);
  CompileResult result;
  bool cacheable = false;
  std::optional<CacheEntry> hit = cache_ ? cache_->load(key) : std::nullopt;
  if (hit) {
    result.ok = hit->ok;
    result.log = std::move(hit->log);
    result.cubin = std::move(hit->cubin);
    result.lowered_name = std::move(hit->lowered_name);
    result.resources = hit->resources;
    result.cache_hit = true;
  } else if (request.compiler == "nvcc") {
    result = compile_with_nvcc(request, source, &cacheable);
  } else {
    result = compile_missed(request, source, &cacheable);
  }
  result.cache_key = key;
  const ArchLimits* limits = find_arch_limits(request.arch.sm);
  if (result.ok && limits != nullptr) {
    result.resources.max_threads_per_block = kernel_max_threads_per_block(*limits, result.resources);
    if (request.block_threads > 0) {
      result.occupancy = theoretical_occupancy(*limits, result.resources, request.block_threads,
                                               request.dynamic_smem);
    }
  }
  result.compile_ms = ms_since(start);
  if (cache_ && !hit && cacheable) {
    cache_->store(key, {result.ok, result.cubin, result.lowered_name, result.log, result.resources,
                        result.compile_ms});
  }
  return result;
}

std::vector<std::string> Compiler::nvrtc_arguments(const CompileRequest& request) const {
  std::vector<std::string> opts = portable_options(request);
  for (const fs::path& dir : search_dirs(request)) opts.push_back("-I" + dir.string());
  std::error_code ec;
  if (fs::is_directory(cuda_include_dir_, ec)) opts.push_back("-I" + cuda_include_dir_.string());
  // CUDA 13 keeps CCCL (cub, thrust, cuda/std, nv) in include/cccl; nvcc adds it by itself.
  if (fs::is_directory(cuda_include_dir_ / "cccl", ec)) opts.push_back("-I" + (cuda_include_dir_ / "cccl").string());
  // Where a driver is installed NVRTC reuses cubins from the driver's compute
  // cache, and a reused cubin comes without ptxas's report (so without spill
  // figures) and without an honest compile time. Our own cache stands in.
  opts.emplace_back("--no-cache");
  return opts;
}

// -D defines act only through the preprocessor, so two requests that differ
// in defines alone and give the same IR give the same program to NVVM's
// optimizer and ptxas, which are deterministic: the same cubin. Everything
// else that reaches them (arch, standard, every other option, NVRTC's
// version, the name expression) is in the key.
std::optional<std::string> Compiler::same_code_key(const CompileRequest& request, const std::string& source,
                                                   double* ms) const {
  const auto start = std::chrono::steady_clock::now();
  Program prog;
  std::optional<std::string> key;
  if (create_program(prog, request, source) == NVRTC_SUCCESS) {
    std::vector<std::string> opts = nvrtc_arguments(request);
    std::erase_if(opts, [](const std::string& o) { return o == kPtxasVerbose || o == "-Xptxas=-v"; });
    opts.emplace_back("-dlto");
    std::vector<const char*> argv;
    for (const std::string& o : opts) argv.push_back(o.c_str());
    std::size_t size = 0;
    if (nvrtcCompileProgram(prog.get(), static_cast<int>(argv.size()), argv.data()) == NVRTC_SUCCESS &&
        nvrtcGetLTOIRSize(prog.get(), &size) == NVRTC_SUCCESS && size > 0) {
      std::string ir(size, '\0');
      if (nvrtcGetLTOIR(prog.get(), ir.data()) == NVRTC_SUCCESS) {
        CompileRequest without_defines = request;
        without_defines.defines.clear();
        Sha256 h;
        h.update_field(kSameCodeKeySchema);
        h.update_field(Compiler::nvrtc_version());
        h.update_field(request.name_expression());
        const std::vector<std::string> portable = portable_options(without_defines);
        h.update_field(std::to_string(portable.size()));
        for (const std::string& o : portable) h.update_field(o);
        h.update_field(ir);
        key = Sha256::hex(h.digest());
      }
    }
  }
  *ms = ms_since(start);
  return key;
}

CompileResult Compiler::compile_missed(const CompileRequest& request, const std::string& source,
                                       bool* cacheable) const {
  const std::string kernel = request.source_path.string() + "\n" + request.kernel_name;
  bool worth = false;
  if (cache_ && code_reuse_ == CodeReuse::always) {
    worth = true;
  } else if (cache_ && code_reuse_ == CodeReuse::automatic) {
    std::lock_guard lock(reuse_ledger_->mutex);
    worth = reuse_ledger_->kernels[kernel].worth();
  }
  double key_ms = 0;
  std::optional<std::string> key = worth ? same_code_key(request, source, &key_ms) : std::nullopt;
  auto account = [&](double compile_ms, double saved_ms) {
    if (!worth) return;
    std::lock_guard lock(reuse_ledger_->mutex);
    ReuseStats& s = reuse_ledger_->kernels[kernel];
    ++s.keys;
    s.key_ms += key_ms;
    s.compile_ms += compile_ms;
    s.saved_ms += saved_ms;
  };
  if (!key) {
    const auto start = std::chrono::steady_clock::now();
    CompileResult r = compile_with_nvrtc(request, source, cacheable);
    account(ms_since(start), 0);
    return r;
  }
  auto reuse = [&](CacheEntry e) {
    account(0, e.nvrtc_ms);
    CompileResult r;
    r.ok = e.ok;
    r.log = std::move(e.log);
    r.cubin = std::move(e.cubin);
    r.lowered_name = std::move(e.lowered_name);
    r.resources = e.resources;
    r.same_code = true;
    *cacheable = true;
    return r;
  };
  // Another process compiling the same code now: wait for it rather than
  // compile it twice. A claim that goes away without an entry (its compile
  // failed in a way not cached, or its process died) leaves it to us.
  for (int round = 0; round < 3; ++round) {
    if (std::optional<CacheEntry> e = cache_->load(*key)) return reuse(std::move(*e));
    if (cache_->claim(*key)) {
      struct Release {  // also when the compile throws: others would wait on a live process's claim
        const CubinCache& cache;
        const std::string& key;
        ~Release() { cache.release(key); }
      } release{*cache_, *key};
      // The claim may be one its holder released just after storing the
      // entry (between the load above and the claim): read it rather than
      // compile the same code again.
      if (std::optional<CacheEntry> e = cache_->load(*key)) return reuse(std::move(*e));
      const auto start = std::chrono::steady_clock::now();
      CompileResult r = compile_with_nvrtc(request, source, cacheable);
      const double ms = ms_since(start);
      if (*cacheable) cache_->store(*key, {r.ok, r.cubin, r.lowered_name, r.log, r.resources, ms});
      account(ms, 0);
      return r;
    }
    if (request.defer_if_busy) {
      account(0, 0);
      CompileResult r;
      r.deferred = true;
      r.log = "ktune: deferred: the same code is being compiled elsewhere\n";
      *cacheable = false;
      return r;
    }
    if (std::optional<CacheEntry> e = cache_->wait_for(*key, kSameCodeWaitS)) return reuse(std::move(*e));
  }
  const auto start = std::chrono::steady_clock::now();
  CompileResult r = compile_with_nvrtc(request, source, cacheable);
  account(ms_since(start), 0);
  return r;
}

// Failures the code could not have caused (out of memory, a broken
// installation) come back with *cacheable false: the next run may succeed.
CompileResult Compiler::compile_with_nvrtc(const CompileRequest& request, const std::string& source,
                                           bool* cacheable) const {
  CompileResult r;
  *cacheable = true;
  Program prog;
  const std::string expr = request.name_expression();
  nvrtcResult rc = create_program(prog, request, source);
  if (rc != NVRTC_SUCCESS) {
    r.log = std::string("nvrtc: cannot create the program: ") + nvrtcGetErrorString(rc) + "\n";
    *cacheable = false;
    return r;
  }
  std::vector<std::string> opts = nvrtc_arguments(request);
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  rc = nvrtcCompileProgram(prog.get(), static_cast<int>(argv.size()), argv.data());
  r.log = program_log(prog.get());
  if (rc != NVRTC_SUCCESS) {
    if (const std::string hint = header_clash_hint(r.log, request, cuda_include_dir_); !hint.empty()) r.log = hint + "\n" + r.log;
    // <cub/cub.cuh> and thrust pull in host code, which NVRTC cannot compile.
    if (r.log.find("not allowed in JIT mode") != std::string::npos)
      r.log = "ktune: this kernel includes host code (e.g. <cub/cub.cuh> whole, thrust), which NVRTC cannot compile: "
              "build it with nvcc (kernel.compiler: nvcc in the spec)\n" + r.log;
    append_line(r.log, std::string("nvrtc: ") + nvrtcGetErrorString(rc));
    if (rc != NVRTC_ERROR_COMPILATION && rc != NVRTC_ERROR_INVALID_OPTION) *cacheable = false;
    return r;
  }
  const char* lowered = nullptr;
  std::size_t size = 0;
  if (nvrtcGetLoweredName(prog.get(), expr.c_str(), &lowered) != NVRTC_SUCCESS || lowered == nullptr ||
      nvrtcGetCUBINSize(prog.get(), &size) != NVRTC_SUCCESS || size == 0) {
    append_line(r.log, "ktune: NVRTC produced no cubin for '" + expr + "' (is " + request.arch.name() +
                           " a real architecture?)");
    return r;
  }
  r.lowered_name = lowered;
  r.cubin.resize(size);
  nvrtcGetCUBIN(prog.get(), r.cubin.data());
  return with_resources(std::move(r));
}

// The compiled kernel's resource usage, from the cubin and ptxas's report in
// the log; r.cubin and r.lowered_name set.
CompileResult Compiler::with_resources(CompileResult r) {
  std::string error;
  std::optional<KernelResources> res = read_kernel_resources(r.cubin, r.lowered_name, &error);
  if (!res) {
    append_line(r.log, "ktune: cannot read the kernel's resource usage: " + error);
    return r;
  }
  auto usage = parse_ptxas_log(r.log);
  if (auto it = usage.find(r.lowered_name); it != usage.end()) {
    res->spill_store_bytes = static_cast<int>(it->second.spill_stores);
    res->spill_load_bytes = static_cast<int>(it->second.spill_loads);
  }
  r.resources = *res;
  r.ok = true;
  return r;
}

}  // namespace ktune
