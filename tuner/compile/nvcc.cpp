// The nvcc backend (a spec's `compiler: nvcc`): nvcc -cubin run in a scratch
// folder with the options NVRTC would get, and its version for the cache key.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "tuner/compile/compile_parts.h"
#include "tuner/compile/compiler.h"
#include "tuner/compile/hip_headers.h"

namespace ktune {
namespace fs = std::filesystem;
using namespace compile_detail;
namespace {

fs::path find_nvcc(const fs::path& cuda_include_dir) {
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0') return fs::path(home) / "bin" / "nvcc";
  std::error_code ec;
  if (fs::path beside = cuda_include_dir.parent_path() / "bin" / "nvcc"; fs::exists(beside, ec)) return beside;
  return "nvcc";
}

std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs a command line; its stdout and stderr end up in *output. The exit status.
int run_command(const std::string& command, const fs::path& output_file, std::string* output) {
  const int rc = std::system((command + " > " + shell_quoted(output_file.string()) + " 2>&1").c_str());
  *output = slurp(output_file).value_or("");
  return rc;
}

// The Itanium-mangled prefix of a function's name: _Z9block_sum for
// block_sum, _ZN2ns4kernE for ns::kern (its parameter types follow).
std::string mangled_prefix(const std::string& name) {
  std::vector<std::string> parts;
  for (size_t at = 0; at <= name.size();) {
    const size_t sep = std::min(name.find("::", at), name.size());
    parts.push_back(name.substr(at, sep - at));
    at = sep + 2;
  }
  std::string out = parts.size() == 1 ? "_Z" : "_ZN";
  for (const std::string& p : parts) out += std::to_string(p.size()) + p;
  return parts.size() == 1 ? out : out + "E";
}

}  // namespace

namespace compile_detail {

std::string nvcc_version() {
  static const std::string version = [] {
    const fs::path out = fs::temp_directory_path() / ("ktune-nvcc-version-" + std::to_string(::getpid()));
    std::string text;
    run_command(shell_quoted(find_nvcc(default_cuda_include_dir()).string()) + " --version", out, &text);
    std::error_code ec;
    fs::remove(out, ec);
    const size_t at = text.find("release ");
    return at == std::string::npos ? std::string("unknown") : text.substr(at, text.find('\n', at) - at);
  }();
  return version;
}

}  // namespace compile_detail

fs::path Compiler::nvcc_path() const { return find_nvcc(cuda_include_dir_); }

// nvcc -cubin in a scratch folder, with the options NVRTC would get (the
// source's folder and its include path, the defines, the arch and standard).
CompileResult Compiler::compile_with_nvcc(const CompileRequest& request, const std::string& source,
                                          bool* cacheable) const {
  CompileResult r;
  *cacheable = true;
  if (!request.template_args.empty()) {
    r.log = "ktune: kernel.template_args need NVRTC's name expressions; with compiler nvcc pass the parameters "
            "as -D defines (leave template_args out)\n";
    return r;
  }
  std::string dir_template = (fs::temp_directory_path() / "ktune-nvcc-XXXXXX").string();
  if (!::mkdtemp(dir_template.data())) {
    r.log = "ktune: cannot make a scratch folder for nvcc\n";
    *cacheable = false;
    return r;
  }
  const fs::path dir = dir_template;
  const std::string name = request.source_path.empty() ? "kernel.cu" : request.source_path.filename().string();
  { std::ofstream(dir / name, std::ios::binary) << source; }
  // HIP's kernel-language header as NVRTC gets it, searched after the
  // kernel's own folders (a header of its own comes first); ktune's
  // stand-ins for the standard headers are NVRTC's alone: nvcc has the real
  // ones.
  const fs::path hip_dir = dir / "hip-include";
  for (const auto& [include, text] : hip_headers()) {
    fs::create_directories((hip_dir / include).parent_path());
    std::ofstream(hip_dir / include, std::ios::binary) << text;
  }
  std::string command = shell_quoted(nvcc_path().string()) + " -cubin";
  for (const std::string& o : portable_options(request)) command += " " + shell_quoted(o);
  for (const fs::path& d : search_dirs(request)) command += " " + shell_quoted("-I" + d.string());
  command += " " + shell_quoted("-I" + hip_dir.string());
  // CUDA whatever the file is called (the hub's dedispersion.cu.hip): nvcc
  // goes by the extension otherwise and refuses one it does not know.
  command += " -x cu -o " + shell_quoted((dir / "k.cubin").string()) + " " + shell_quoted((dir / name).string());
  const int rc = run_command(command, dir / "log.txt", &r.log);
  std::optional<std::string> cubin = rc == 0 ? slurp(dir / "k.cubin") : std::nullopt;
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (!cubin) {
    append_line(r.log, "nvcc: exit status " + std::to_string(rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : rc));
    if (rc == -1 || (WIFEXITED(rc) && WEXITSTATUS(rc) == 127)) *cacheable = false;  // no nvcc here: not the code's fault
    return r;
  }
  r.cubin = std::move(*cubin);
  // extern "C" kernels keep their name; a C++ one is found by its mangled
  // prefix (nvcc has no name expressions).
  const std::string mangled = mangled_prefix(request.kernel_name);
  for (const std::string& k : cubin_kernel_names(r.cubin))
    if (k == request.kernel_name || (r.lowered_name != request.kernel_name && k.rfind(mangled, 0) == 0))
      r.lowered_name = k;
  if (r.lowered_name.empty()) {
    append_line(r.log, "ktune: nvcc's cubin has no kernel '" + request.kernel_name + "'");
    return r;
  }
  return with_resources(std::move(r));
}

}  // namespace ktune
