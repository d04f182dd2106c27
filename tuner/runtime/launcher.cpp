// ktune::Launcher: selection from exported or stored results, NVRTC through
// the cubin cache, and launches through the run-time-loaded driver.
#include "ktune/launcher.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "db/export/deploy.h"
#include "db/interchange/interchange.h"
#include "db/store.h"
#include "tuner/build/build.h"
#include "tuner/compile/compiler.h"
#include "tuner/gpu/driver.h"
#include "tuner/gpu/measure.h"
#include "tuner/spec/spec.h"

namespace ktune {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error::bad_input("cannot read the results file", SourceLocation{path});
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Results for one kernel name, from a database or a JSON export; nullopt when
// the source holds nothing for it.
std::optional<db::DeployKernel> load_results(const std::string& path, const std::string& kernel) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error::bad_input("results file does not exist", SourceLocation{path});
  std::vector<db::DeployKernel> kernels;
  if (db::is_sqlite_file(path)) {
    db::StoreOptions ro;
    ro.read_only = true;
    db::Store store(path, ro);
    db::Filter f;
    f.kernel = kernel;
    kernels = db::collect_deploy(store, f);
  } else {
    const std::string text = read_file(path);
    try {
      kernels = db::parse_deploy_json(text, path);
    } catch (const Error&) {
      // A Kernel Tuner cache or T4 file: imported into a scratch store, so
      // selection sees it exactly as `ktune import` would record it.
      db::ResultSet rs;
      try {
        rs = db::read_results_file(path);
      } catch (const Error&) {
        throw Error::bad_input("neither a ktune export (`ktune export --format json`), a ktune database, "
                               "nor a Kernel Tuner cache or T4 file",
                               SourceLocation{path});
      }
      std::string tmpl = (std::filesystem::temp_directory_path() / "ktune_launcher_XXXXXX").string();
      if (!mkdtemp(tmpl.data())) throw Error::failed("cannot create a scratch folder in " + tmpl);
      const std::filesystem::path scratch = tmpl;
      try {
        db::Store store((scratch / "import.db").string());
        db::import_results(store, rs, path);
        db::Filter f;
        f.kernel = kernel;
        kernels = db::collect_deploy(store, f);
      } catch (...) {
        std::filesystem::remove_all(scratch, ec);
        throw;
      }
      std::filesystem::remove_all(scratch, ec);
    }
  }
  for (db::DeployKernel& k : kernels)
    if (k.name == kernel && !k.entries.empty()) return std::move(k);
  return std::nullopt;
}

std::string size_text(const db::ProblemSize& ps) {
  std::string s;
  for (size_t i = 0; i < ps.size(); ++i) s += (i ? "x" : "") + std::to_string(ps[i]);
  return s.empty() ? "unknown" : s;
}

// One key per distinct problem, whatever order its constants were given in.
Problem sorted(Problem problem) {
  std::sort(problem.begin(), problem.end());
  return problem;
}

ConstantOverrides overrides_of(const Problem& problem) {
  ConstantOverrides o;
  for (const auto& [name, v] : problem) o.emplace_back(name, Value(int64_t(v)));
  return o;
}

struct Prepared {
  Choice choice;
  std::unique_ptr<gpu::Module> module;
  CUfunction function = nullptr;
  CUcontext context = nullptr;
};

}  // namespace

void LauncherOptions::default_report(const std::string& line) { std::fprintf(stderr, "ktune: %s\n", line.c_str()); }

std::string Choice::config_text() const {
  std::string s;
  for (const auto& [name, v] : config) s += (s.empty() ? "" : ", ") + name + "=" + v;
  return s;
}

std::string Choice::str() const {
  std::string s = device + " (sm_" + std::to_string(compute_capability) + "), problem size total " +
                  std::to_string(problem_size_total) + ": " + config_text() + " [" + match;
  if (!source.empty()) s += ": " + source;
  s += "]";
  return s;
}

struct Launcher::Impl {
  LauncherOptions options;
  std::string kernel;                         // the results' kernel name
  std::optional<db::DeployKernel> results;    // nullopt: spec defaults only
  std::unique_ptr<Compiler> compiler;         // made on first prepare
  mutable std::mutex mutex;
  // Per problem, one entry per CUDA context it was loaded in. Entries live as
  // long as the launcher, so launch() may use one after releasing the lock.
  std::map<Problem, std::vector<std::unique_ptr<Prepared>>> prepared;
  // The last problem launched, as given: repeated launches of one problem
  // skip the sort and the map (the common case in a loop).
  Problem last_problem;
  Prepared* last = nullptr;
  std::unique_ptr<gpu::PrimaryContext> own_context;  // when the caller had none current
  const gpu::CudaApi* api = nullptr;
  // Name and compute capability per device: all selection needs. (The full
  // gpu::query_device also opens NVML, which costs milliseconds of cold start.)
  struct Device {
    std::string name;
    int cc = 0;
  };
  std::map<CUdevice, Device> devices;

  void report(const std::string& line) const {
    if (options.report) options.report(line);
  }

  // The spec loaded for one problem.
  Spec spec_for(const Problem& problem) const { return load_spec(options.spec, overrides_of(problem)); }

  // The chosen configuration (in the spec's parameter order), described in c
  // with its launch geometry.
  struct Decision {
    std::vector<Value> config;
  };
  Decision decide(const Spec& spec, const std::string& device, int cc, Choice& c) const;
  Prepared& prepare_locked(const Problem& problem);
  const Device& current_device(CUcontext& context);
};

Launcher::Impl::Decision Launcher::Impl::decide(const Spec& spec, const std::string& device, int cc,
                                                Choice& c) const {
  const SearchSpace& space = spec.space();
  Config first(space.parameters().size(), 0);
  const std::vector<Value> defaults = space.values(space.is_valid(first) ? first : space.at(0));
  // The problem size does not depend on the configuration; any valid one tells it.
  const LaunchResult probe = spec.geometry(defaults);
  c.device = device;
  c.compute_capability = cc;
  c.problem_size_total = probe.ok() ? db::problem_size_total(std::vector<int64_t>(
                                          probe.launch->problem_size.begin(),
                                          probe.launch->problem_size.begin() + spec.problem_size.size()))
                                    : 0;
  std::vector<Value> config = defaults;
  c.match = "spec defaults";
  c.source.clear();
  if (results) {
    const db::DeploySelection sel = db::select_deploy(*results, device, cc, c.problem_size_total);
    std::vector<Value> chosen;
    std::string missing;
    for (const Parameter& p : space.parameters()) {
      size_t i = 0;
      while (i < results->param_names.size() && results->param_names[i] != p.name) ++i;
      if (i == results->param_names.size()) {
        missing += (missing.empty() ? "" : ", ") + p.name;
        continue;
      }
      chosen.push_back(sel.entry.config.at(i));
    }
    if (missing.empty()) {
      config = std::move(chosen);
      c.match = db::to_string(sel.match);
      if (sel.portable)  // no device: measured on every device, worst ratio to their optima
        c.source = "problem size " + size_text(sel.portable->problem_size) + ", worst " +
                   std::to_string(sel.portable->worst) + " x the optimum of " +
                   std::to_string(sel.portable->devices.size()) + " device(s), PP " + std::to_string(sel.portable->pp);
      else
        c.source = sel.entry.device + ", problem size " + size_text(sel.entry.problem_size) + ", " +
                   std::to_string(sel.entry.time_ms) + " ms, " + sel.entry.timestamp +
                   (sel.entry.run_id ? ", run " + std::to_string(*sel.entry.run_id) : std::string());
    } else {
      report("warning: the results for '" + kernel + "' lack parameter(s) " + missing +
             " of the spec; using the spec defaults");
    }
  }
  c.config.clear();
  for (size_t i = 0; i < config.size(); ++i) c.config.emplace_back(space.parameters()[i].name, config[i].str());
  const LaunchResult g = spec.geometry(config);
  if (!g.ok()) throw Error::failed("launch geometry of " + c.config_text() + ": " + g.error);
  for (int i = 0; i < 3; ++i) {
    c.grid[i] = static_cast<unsigned>(g.launch->grid[i]);
    c.block[i] = static_cast<unsigned>(g.launch->block[i]);
  }
  c.shared_memory = static_cast<unsigned>(g.launch->shared_memory);
  return {std::move(config)};
}

const Launcher::Impl::Device& Launcher::Impl::current_device(CUcontext& context) {
  if (!api) {
    const gpu::DriverLoad& driver = gpu::cuda_driver();
    if (!driver.ready()) throw Error::failed("no CUDA driver: " + driver.message);
    api = driver.api;
  }
  gpu::check(*api, api->cuCtxGetCurrent(&context), "cuCtxGetCurrent");
  if (!context) {
    // The primary context of device 0: the one the CUDA runtime would use.
    own_context = std::make_unique<gpu::PrimaryContext>(*api, 0);
    gpu::check(*api, api->cuCtxGetCurrent(&context), "cuCtxGetCurrent");
  }
  CUdevice dev = 0;
  gpu::check(*api, api->cuCtxGetDevice(&dev), "cuCtxGetDevice");
  auto it = devices.find(dev);
  if (it == devices.end()) {
    char name[256] = {};
    int major = 0, minor = 0;
    gpu::check(*api, api->cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName");
    gpu::check(*api, api->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
               "cuDeviceGetAttribute");
    gpu::check(*api, api->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
               "cuDeviceGetAttribute");
    it = devices.emplace(dev, Device{name, major * 10 + minor}).first;
  }
  return it->second;
}

Prepared& Launcher::Impl::prepare_locked(const Problem& problem) {
  CUcontext context = nullptr;
  if (api && api->cuCtxGetCurrent(&context) != CUDA_SUCCESS) context = nullptr;
  // A module belongs to the context it was loaded in; a thread with no
  // current context gets the one the module was loaded in.
  auto usable = [&](Prepared& p) {
    if (!context) gpu::check(*api, api->cuCtxSetCurrent(p.context), "cuCtxSetCurrent");
    return !context || context == p.context;
  };
  if (last && last_problem == problem && usable(*last)) return *last;
  const Problem key = sorted(problem);
  std::vector<std::unique_ptr<Prepared>>& loaded = prepared[key];
  for (auto& p : loaded)
    if (usable(*p)) {
      last_problem = problem;
      last = p.get();
      return *last;
    }
  const auto t0 = std::chrono::steady_clock::now();
  const Device& device = current_device(context);
  const Spec spec = spec_for(key);
  auto p = std::make_unique<Prepared>();
  const Decision d = decide(spec, device.name, device.cc, p->choice);
  if (!compiler) {
    CompilerOptions co;
    co.cache_dir = options.cache_dir;
    compiler = std::make_unique<Compiler>(co);
  }
  const Arch device_arch(device.cc);
  const std::optional<Arch> target = spec.kernel.target_arch(device_arch);
  if (!target) throw Error::failed(spec.kernel.not_written_for(device_arch) + " (" + device.name + ")");
  const Build b = build_one(spec, d.config, *target, *compiler);
  if (b.status == db::Status::CompileError)
    throw Error::failed("kernel '" + spec.kernel.name + "' with " + p->choice.config_text() +
                        " does not compile for " + target->name() + ": " + b.reason);
  if (!b.ok())
    throw Error::failed("kernel '" + spec.kernel.name + "' with " + p->choice.config_text() +
                        " cannot be launched on " + target->name() + ": " + b.reason);
  const CompileResult& r = b.compile;
  p->module = std::make_unique<gpu::Module>(*api, std::vector<std::uint8_t>(r.cubin.begin(), r.cubin.end()));
  p->function = p->module->function(r.lowered_name);
  gpu::LaunchGeometry geometry;
  geometry.dynamic_smem = p->choice.shared_memory;
  gpu::prepare_function(*api, p->function, geometry, gpu::query_resources(*api, p->function));
  p->context = context;
  p->choice.cache_hit = r.cache_hit;
  p->choice.compile_ms = ms_since(t0);
  std::string what;
  for (const auto& [name, v] : problem) what += (what.empty() ? "" : ", ") + name + "=" + std::to_string(v);
  report(spec.kernel.name + (what.empty() ? "" : " (" + what + ")") + " on " + p->choice.str() + "; ready in " +
         std::to_string(p->choice.compile_ms) + " ms (" + (r.cache_hit ? "cubin cache hit" : "compiled") + ")");
  last_problem = problem;
  last = p.get();
  loaded.push_back(std::move(p));
  return *last;
}

Launcher::Launcher(LauncherOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  const Spec spec = load_spec(impl_->options.spec);  // bad specs fail here, not at the first launch
  spec.require_runnable();
  impl_->kernel = impl_->options.kernel.empty() ? spec.kernel.name : impl_->options.kernel;
  if (!impl_->options.results.empty()) {
    impl_->results = load_results(impl_->options.results, impl_->kernel);
    if (!impl_->results)
      impl_->report("warning: " + impl_->options.results + " holds no results for kernel '" + impl_->kernel +
                    "'; using the spec defaults");
  } else {
    impl_->report("warning: no results given for kernel '" + impl_->kernel + "'; using the spec defaults");
  }
}

Launcher::~Launcher() = default;

Choice Launcher::choose(const Problem& problem, const std::string& device_name, int compute_capability) const {
  Choice c;
  impl_->decide(impl_->spec_for(problem), device_name, compute_capability, c);
  return c;
}

const Choice& Launcher::prepare(const Problem& problem) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->prepare_locked(problem).choice;
}

void Launcher::launch(const Problem& problem, CUstream_st* stream, void** args) {
  Prepared* p;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    p = &impl_->prepare_locked(problem);
  }
  const Choice& c = p->choice;
  gpu::check(*impl_->api,
             impl_->api->cuLaunchKernel(p->function, c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1],
                                        c.block[2], c.shared_memory, stream, args, nullptr),
             "cuLaunchKernel");
}

}  // namespace ktune
