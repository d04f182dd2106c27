#include "tuner/build/build.h"

namespace ktune {

namespace {

CompileRequest make_compile_request(const Spec& spec, const std::vector<Value>& config, const Launch& launch,
                                    const Arch& arch) {
  CompileRequest r;
  r.source = spec.kernel.source;
  r.source_path = spec.kernel.source_path;
  r.kernel_name = spec.kernel.name;
  r.template_args = spec.template_arguments(config);
  r.defines = spec.defines(config, launch);
  for (const std::string& opt : spec.kernel.compiler_options) {
    // The language standard has its own field so the default is not passed twice.
    if (opt.rfind("-std=", 0) == 0 || opt.rfind("--std=", 0) == 0) {
      r.std = opt.substr(opt.find('=') + 1);
    } else {
      r.options.push_back(opt);
    }
  }
  r.arch = arch;
  r.compiler = spec.kernel.compiler;
  r.block_threads = static_cast<int>(launch.block[0] * launch.block[1] * launch.block[2]);
  r.dynamic_smem = static_cast<std::size_t>(launch.shared_memory);
  return r;
}

}  // namespace

BuildPlan plan_build(const Spec& spec, const std::vector<Value>& config, const Arch& arch) {
  BuildPlan b{spec.geometry(config), std::nullopt};
  if (b.launch.ok()) b.request = make_compile_request(spec, config, *b.launch.launch, arch);
  return b;
}

Build finish_build(const LaunchResult& launch, CompileResult result) {
  Build b;
  if (!launch.ok()) {
    b.reason = launch.error;
    return b;
  }
  b.launch = launch.launch;
  b.compile = std::move(result);
  if (!b.compile.ok) {
    b.status = db::Status::CompileError;
    b.reason = b.compile.error_line();
    if (b.reason.empty()) b.reason = "compilation failed";
  } else if (b.compile.occupancy && !b.compile.occupancy->error.empty()) {
    b.reason = b.compile.occupancy->error;  // the architecture cannot take this launch
  } else {
    b.status = db::Status::Ok;
  }
  return b;
}

std::vector<Build> build_all(const Spec& spec, std::span<const std::vector<Value>> configs, const Arch& arch,
                             CompilePool& pool) {
  std::vector<LaunchResult> launches;
  std::vector<CompileRequest> requests;
  for (const std::vector<Value>& c : configs) {
    BuildPlan p = plan_build(spec, c, arch);
    launches.push_back(std::move(p.launch));
    if (p.request) requests.push_back(std::move(*p.request));
  }
  std::vector<CompileResult> results = pool.compile(requests);
  std::vector<Build> out;
  size_t next = 0;
  for (const LaunchResult& l : launches)
    out.push_back(l.ok() ? finish_build(l, std::move(results[next++])) : finish_build(l));
  return out;
}

Build build_one(const Spec& spec, const std::vector<Value>& config, const Arch& arch, const Compiler& compiler) {
  BuildPlan p = plan_build(spec, config, arch);
  if (!p.request) return finish_build(p.launch);
  return finish_build(p.launch, compiler.compile(*p.request));
}

void record_build(const Build& build, db::Evaluation& e) {
  e.status = build.status;
  e.reason = build.reason;
  if (!build.compiled()) return;
  const CompileResult& c = build.compile;
  e.compile_ms = c.cache_hit ? 0.0 : c.compile_ms;
  if (!c.ok) {
    e.log = c.log;
    return;
  }
  e.registers = c.resources.registers;
  e.shared_bytes = static_cast<int64_t>(c.resources.static_smem);
  e.local_bytes = static_cast<int64_t>(c.resources.local_bytes);
  if (c.occupancy && c.occupancy->error.empty()) e.occupancy = c.occupancy->fraction;
}

CompileRequest make_reference_request(const Spec& spec, const std::vector<Value>& config, const Launch& launch,
                                      const Arch& arch) {
  CompileRequest r = make_compile_request(spec, config, launch, arch);
  r.kernel_name = spec.verify.kernel;
  r.template_args.clear();
  r.block_threads = static_cast<int>(spec.verify.block[0] * spec.verify.block[1] * spec.verify.block[2]);
  r.dynamic_smem = 0;
  return r;
}

}  // namespace ktune
