// Where NVRTC's time goes for a kernel's configurations, and how many
// distinct programs they are (docs/benchmarks.md, "Compile-bound spaces").
//
//   build/bench/compile_phases SOURCE KERNEL STD [--ir-only] < configurations
//
// Each input line is one configuration, `name=value ...`, compiled as ktune
// compiles it (-std=STD, the values as -D defines, --no-cache). Per line it
// prints, tab-separated, the process CPU ms of: NVRTC's front end alone
// (-dlto, the second-level cache key of tuner/compile/compiler.h) and the
// SHA-256 of its IR; with --ir-only nothing more. Otherwise also NVRTC to PTX
// (-arch=compute_90) with NVRTC's own --time split (front end, NVVM
// optimizer: its wall ms), NVRTC to cubin (-arch=sm_90), nvJitLink assembling
// that PTX for sm_90, whether nvJitLink's cubin is NVRTC's bytes, and the
// SHA-256 of the PTX and of NVRTC's cubin.
// bench/studies/compile_phases.sh makes the configuration lines from a T1 file.
#include <nvJitLink.h>
#include <nvrtc.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tuner/base/sha256.h"

namespace {

double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

struct Output {
  bool ok = false;
  double ms = 0;
  std::string ptx, cubin, ir;
};

Output nvrtc(const std::string& source, const std::string& kernel, const std::vector<std::string>& options) {
  Output o;
  const double start = cpu_ms();
  nvrtcProgram p = nullptr;
  if (nvrtcCreateProgram(&p, source.c_str(), "kernel.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) return o;
  nvrtcAddNameExpression(p, kernel.c_str());
  std::vector<const char*> argv;
  for (const std::string& s : options) argv.push_back(s.c_str());
  o.ok = nvrtcCompileProgram(p, int(argv.size()), argv.data()) == NVRTC_SUCCESS;
  std::size_t n = 0;
  if (o.ok && nvrtcGetPTXSize(p, &n) == NVRTC_SUCCESS && n > 0) {
    o.ptx.resize(n);
    nvrtcGetPTX(p, o.ptx.data());
  }
  if (o.ok && nvrtcGetCUBINSize(p, &n) == NVRTC_SUCCESS && n > 0) {
    o.cubin.resize(n);
    nvrtcGetCUBIN(p, o.cubin.data());
  }
  if (o.ok && nvrtcGetLTOIRSize(p, &n) == NVRTC_SUCCESS && n > 0) {
    o.ir.resize(n);
    nvrtcGetLTOIR(p, o.ir.data());
  }
  nvrtcDestroyProgram(&p);
  o.ms = cpu_ms() - start;
  return o;
}

Output jit_link(const std::string& ptx) {
  Output o;
  const double start = cpu_ms();
  const char* options[] = {"-arch=sm_90"};
  nvJitLinkHandle h = nullptr;
  if (nvJitLinkCreate(&h, 1, options) != NVJITLINK_SUCCESS) return o;
  o.ok = nvJitLinkAddData(h, NVJITLINK_INPUT_PTX, ptx.data(), ptx.size(), "kernel.ptx") == NVJITLINK_SUCCESS &&
         nvJitLinkComplete(h) == NVJITLINK_SUCCESS;
  std::size_t n = 0;
  if (o.ok && nvJitLinkGetLinkedCubinSize(h, &n) == NVJITLINK_SUCCESS) {
    o.cubin.resize(n);
    nvJitLinkGetLinkedCubin(h, o.cubin.data());
  }
  nvJitLinkDestroy(&h);
  o.ms = cpu_ms() - start;
  return o;
}

std::string hash(const std::string& bytes) { return bytes.empty() ? "-" : ktune::Sha256::hex_of(bytes).substr(0, 16); }

// NVRTC's --time file: "file, phase, ms, unit" rows; the front end's and the
// optimizer's ms.
std::pair<std::string, std::string> phases(const std::string& path) {
  std::ifstream in(path);
  std::string line, front = "-", optimizer = "-";
  while (std::getline(in, line)) {
    const auto field = [&](int i) {
      std::stringstream s(line);
      std::string f;
      for (int k = 0; k <= i; ++k) std::getline(s, f, ',');
      return f.substr(f.find_first_not_of(' '));
    };
    if (line.find("Frontend") != std::string::npos) front = field(2);
    if (line.find("NVVM Optimizer") != std::string::npos) optimizer = field(2);
  }
  return {front, optimizer};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: compile_phases SOURCE KERNEL STD [--ir-only] < configurations\n");
    return 2;
  }
  std::ifstream file(argv[1]);
  if (!file) {
    std::fprintf(stderr, "compile_phases: cannot read %s\n", argv[1]);
    return 2;
  }
  std::stringstream text;
  text << file.rdbuf();
  const std::string source = text.str(), kernel = argv[2], std = argv[3];
  const bool ir_only = argc > 4 && std::string(argv[4]) == "--ir-only";
  const std::string time_file = "/tmp/compile_phases_time." + std::to_string(::getpid()) + ".csv";
  std::printf(ir_only ? "configuration\tfront_end_ms\tir\n"
                      : "configuration\tfront_end_ms\tir\tptx_ms\ttime_front_end_ms\ttime_optimizer_ms\tcubin_ms\t"
                        "ptxas_part_ms\tnvjitlink_ms\tnvjitlink_same_cubin\tptx\tcubin\n");
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    std::vector<std::string> base = {"-std=" + std, "--no-cache"};
    std::stringstream words(line);
    for (std::string w; words >> w;) base.push_back("-D" + w);
    std::vector<std::string> lto = base;
    lto.insert(lto.end(), {"-arch=sm_90", "-dlto"});
    const Output front = nvrtc(source, kernel, lto);
    std::printf("%s\t%.1f\t%s", line.c_str(), front.ms, front.ok ? hash(front.ir).c_str() : "failed");
    if (!ir_only) {
      std::vector<std::string> to_ptx = base, to_cubin = base;
      std::remove(time_file.c_str());
      to_ptx.insert(to_ptx.end(), {"-arch=compute_90", "--time=" + time_file});
      to_cubin.insert(to_cubin.end(), {"-arch=sm_90", "--ptxas-options=-v"});
      const Output ptx = nvrtc(source, kernel, to_ptx);
      const auto [t_front, t_opt] = phases(time_file);
      std::remove(time_file.c_str());
      const Output cubin = nvrtc(source, kernel, to_cubin);
      const Output linked = ptx.ok ? jit_link(ptx.ptx) : Output{};
      std::printf("\t%.1f\t%s\t%s\t%.1f\t%.1f\t%.1f\t%s\t%s\t%s", ptx.ms, t_front.c_str(), t_opt.c_str(), cubin.ms,
                  cubin.ms - ptx.ms, linked.ms, linked.ok && linked.cubin == cubin.cubin ? "yes" : "no",
                  hash(ptx.ptx).c_str(), hash(cubin.cubin).c_str());
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
