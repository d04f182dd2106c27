// `ktune run SPEC --config k=v,...`: one configuration, compiled and run once
// on a GPU, as Kernel Tuner's run_kernel does. The arguments are filled as
// tuning fills them (the GPU worker's verified run, GpuEvaluator::run_once),
// the outputs are checked where the spec verifies against a reference or a
// file, then printed (first elements, min, max, mean) and written as raw
// little-endian files, the format `fill: file` reads.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>

#include "ktune/error.h"
#include "tuner/build/config_text.h"
#include "tuner/cli/cli.h"
#include "tuner/cli/print/json.h"
#include "tuner/cli/print/table.h"
#include "tuner/cli/run.h"
#include "tuner/spec/spec.h"
#include "tuner/tune/gpu_evaluator.h"

namespace ktune::cli {
namespace {

struct RunOptions {
  std::string spec;
  std::vector<std::string> sets;  // --set NAME=VALUE: spec constants overridden
  std::string config;
  int gpu = 0;
  std::string out_dir;  // "": nothing written
  size_t print = 8;
  bool all_arguments = false;
  bool json = false;
};

// What a buffer holds, for the summary: its first elements, and min, max and
// mean over the elements that are numbers (NaN: an element an output's
// poisoning left, which the kernel never wrote).
struct BufferSummary {
  std::vector<double> first;
  double min = std::numeric_limits<double>::quiet_NaN();
  double max = std::numeric_limits<double>::quiet_NaN();
  double mean = std::numeric_limits<double>::quiet_NaN();
  uint64_t nan_count = 0;
};

BufferSummary summarise(const gpu::HostBuffer& b, size_t first) {
  BufferSummary s;
  const size_t n = b.count();
  long double sum = 0;
  uint64_t numbers = 0;
  for (size_t i = 0; i < n; ++i) {
    const double v = gpu::element_value(b.type, b.bytes.data(), i);
    if (i < first) s.first.push_back(v);
    if (std::isnan(v)) {
      ++s.nan_count;
      continue;
    }
    if (numbers == 0 || v < s.min) s.min = v;
    if (numbers == 0 || v > s.max) s.max = v;
    sum += v;
    ++numbers;
  }
  if (numbers) s.mean = static_cast<double>(sum / numbers);
  return s;
}

// An element as text: integers exactly, floats to 7 significant digits.
std::string element_text(ElemType type, double v) {
  char buf[64];
  if (!is_float(type) && std::isfinite(v))
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.7g", v);
  return buf;
}

const char* verify_mode_name(Verify::Mode m) {
  switch (m) {
    case Verify::Mode::None: return "none";
    case Verify::Mode::Reference: return "reference";
    case Verify::Mode::FirstValid: return "first_valid";
    case Verify::Mode::File: return "file";
  }
  return "?";
}

// The verification line of the text output (without "verify: ").
std::string verify_text(const Spec& spec, const GpuEvaluator::Ran& ran) {
  const Verify& v = spec.verify;
  const std::string against = v.mode == Verify::Mode::Reference ? "the reference kernel " + v.kernel : v.path;
  switch (v.mode) {
    case Verify::Mode::None: return "none (the spec has no verify)";
    case Verify::Mode::FirstValid:
      return "not checked: first_valid compares each configuration with the first one that runs, and a single "
             "run has nothing to compare with";
    case Verify::Mode::Reference:
    case Verify::Mode::File:
      if (!ran.verified) return "not reached (against " + against + ")";
      if (ran.eval.status == db::Status::Ok) return "ok against " + against;
      if (ran.eval.status == db::Status::WrongResult)
        return "FAILED (wrong_result) against " + against + ": " + ran.eval.reason;
      return "not reached (against " + against + ")";
  }
  return "";
}

std::string config_text(const Spec& spec, const std::vector<Value>& values) {
  std::string out;
  const auto& params = spec.space().parameters();
  for (size_t i = 0; i < params.size(); ++i) out.append(i ? "," : "").append(params[i].name + "=" + values[i].str());
  return out;
}

void write_buffer(const std::filesystem::path& path, const gpu::HostBuffer& b) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (f) f.write(reinterpret_cast<const char*>(b.bytes.data()), static_cast<std::streamsize>(b.bytes.size()));
  if (!f) throw Error::failed("cannot write " + path.string());
}

// Where a buffer is written under `dir`, or "" where nothing is written.
std::string buffer_file(const std::filesystem::path& dir, const gpu::HostBuffer& b) {
  return dir.empty() ? std::string() : (dir / (b.name + ".bin")).string();
}

// report_run's --json form: the device, the configuration, what the compile,
// the run and the verification said, and each buffer's summary.
Json run_json(const Spec& spec, const gpu::DeviceProperties& d, const std::vector<Value>& values,
              const GpuEvaluator::Ran& ran, const RunReportOptions& o, const std::filesystem::path& dir) {
  const SearchSpace& space = spec.space();
  const db::Evaluation& e = ran.eval;
  const bool ran_kernel = e.status == db::Status::Ok || e.status == db::Status::WrongResult;
  Json out = {{"spec", spec.path}, {"kernel", spec.kernel.name},
              {"device", {{"index", o.gpu}, {"name", d.name}, {"arch", d.arch()}}}};
  if (const std::optional<Config> c = space.config_of(values)) out["config"] = config_json(space, *c);
  out["status"] = db::to_string(e.status);
  if (!e.reason.empty()) out["reason"] = e.reason;
  if (e.status == db::Status::CompileError) out["log"] = e.log;
  if (e.compile_ms) out["compile_ms"] = *e.compile_ms;
  out["cache_hit"] = ran.cache_hit;
  if (e.registers) out["registers"] = *e.registers;
  Json verify = {{"mode", verify_mode_name(spec.verify.mode)}, {"checked", ran.verified && ran_kernel}};
  if (ran.verified && ran_kernel) verify["ok"] = e.status == db::Status::Ok;
  if (ran.mismatch)
    verify["mismatch"] = {{"buffer", ran.mismatch->buffer}, {"index", ran.mismatch->index},
                          {"got", ran.mismatch->got}, {"expected", ran.mismatch->expected},
                          {"failed_elements", ran.mismatch->failed_elements}};
  out["verify"] = verify;
  out["buffers"] = Json::array();
  for (const gpu::HostBuffer& b : ran.buffers) {
    const BufferSummary s = summarise(b, o.print);
    Json j = {{"name", b.name}, {"type", to_string(b.type)}, {"count", b.count()}};
    if (!dir.empty()) j["file"] = buffer_file(dir, b);
    j["first"] = s.first;
    j["min"] = s.min;
    j["max"] = s.max;
    j["mean"] = s.mean;
    j["nan_count"] = s.nan_count;
    out["buffers"].push_back(j);
  }
  return out;
}

// The buffers a run brought back: each one's type and count, its first
// elements, range and mean.
void print_buffers(std::ostream& os, const GpuEvaluator::Ran& ran, const RunReportOptions& o,
                   const std::filesystem::path& dir) {
  os << (o.all_buffers ? "buffers" : "outputs") << (dir.empty() ? "" : " (written to " + dir.string() + ")") << ":\n";
  for (const gpu::HostBuffer& b : ran.buffers) {
    const BufferSummary s = summarise(b, o.print);
    os << "  " << b.name << ": " << to_string(b.type) << " x " << b.count();
    if (!dir.empty()) os << " -> " << buffer_file(dir, b);
    os << '\n';
    if (!s.first.empty()) {
      os << "    first " << s.first.size() << ":";
      for (double v : s.first) os << ' ' << element_text(b.type, v);
      os << '\n';
    }
    os << "    min " << element_text(b.type, s.min) << "  max " << element_text(b.type, s.max) << "  mean "
       << element_text(ElemType::F64, s.mean);
    if (s.nan_count) os << "  NaN " << s.nan_count;
    os << '\n';
  }
}

int run_run(const RunOptions& o) {
  const Spec spec = load_spec(o.spec, set_option(o.sets));
  spec.require_runnable();
  if (o.gpu < 0) throw Error::bad_input("--gpu: a GPU index, at least 0, not " + std::to_string(o.gpu));
  // The configuration as `compile --config` checks it, before any GPU is opened.
  const SearchSpace& space = spec.space();
  const std::vector<Value> values = config_option(spec, o.config);
  const std::optional<Config> config = space.config_of(values);
  if (!config || !space.is_valid(*config))
    throw Error::bad_input("--config " + o.config + " breaks the spec's restrictions");

  GpuEvaluatorOptions go;
  go.gpu = o.gpu;
  go.compile_threads = 2;  // one configuration, beside the worker's own fill and compare kernels
  go.cancel = ctrl_c().token();
  const CatchInterrupt catching;
  GpuEvaluator evaluator(spec, go);
  GpuEvaluator::Ran ran = evaluator.run_once(values, o.all_arguments);
  if (ctrl_c().requested()) {
    std::cerr << "ktune: interrupted\n";
    return interrupted_status();
  }
  RunReportOptions report;
  report.gpu = o.gpu;
  report.out_dir = o.out_dir;
  report.print = o.print;
  report.all_buffers = o.all_arguments;
  report.json = o.json;
  return report_run(spec, evaluator.gpu_device(), values, ran, report, std::cout);
}

}  // namespace

int report_run(const Spec& spec, const gpu::DeviceProperties& d, const std::vector<Value>& values,
               const GpuEvaluator::Ran& ran, const RunReportOptions& o, std::ostream& os) {
  const db::Evaluation& e = ran.eval;
  const bool ran_kernel = e.status == db::Status::Ok || e.status == db::Status::WrongResult;

  std::filesystem::path dir;
  if (!o.out_dir.empty() && !ran.buffers.empty()) {
    dir = o.out_dir;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw Error::failed("cannot make " + dir.string() + ": " + ec.message());
    for (const gpu::HostBuffer& b : ran.buffers) write_buffer(buffer_file(dir, b), b);
  }
  if (o.json) {
    os << run_json(spec, d, values, ran, o, dir).dump(2) << '\n';
    return e.status == db::Status::Ok ? 0 : 1;
  }

  os << spec.kernel.name << " on GPU " << o.gpu << ": " << d.name << " (" << d.arch() << ")\n";
  os << "configuration: " << config_text(spec, values) << '\n';
  if (e.status == db::Status::Invalid && !e.compile_ms) {  // its launch could not be computed: nothing compiled
    os << "run: invalid: " << e.reason << '\n';
    return 1;
  }
  std::string compile = ran.cache_hit ? "from the cubin cache" : "NVRTC " + fixed(e.compile_ms.value_or(0), 1) + " ms";
  if (e.status == db::Status::CompileError) {
    os << "compile: FAILED (" << compile << "): " << e.reason << '\n';
    if (!e.log.empty()) std::cerr << e.log << (e.log.back() == '\n' ? "" : "\n");
    return 1;
  }
  if (e.registers)
    compile += ", " + std::to_string(*e.registers) + " registers, " + std::to_string(e.shared_bytes.value_or(0)) +
               " B static shared, " + std::to_string(e.local_bytes.value_or(0)) + " B local";
  os << "compile: " << compile << '\n';
  // A wrong result ran: its status is said on the verify line.
  if (ran_kernel) os << "run: once, not timed\n";
  else os << "run: " << db::to_string(e.status) << ": " << e.reason << '\n';
  if (ran_kernel) os << "verify: " << verify_text(spec, ran) << '\n';
  if (ran.buffers.empty()) return e.status == db::Status::Ok ? 0 : 1;
  print_buffers(os, ran, o, dir);
  return e.status == db::Status::Ok ? 0 : 1;
}


void add_run_command(CLI::App& app, CommandResult& result) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand(
      "run", "Run one configuration once on a GPU: verify it, print and save its outputs (Kernel Tuner's run_kernel)");
  sub->add_option("spec", o->spec, "tuning spec (YAML or T1 JSON)")->required();
  sub->add_option("--config", o->config, "the configuration: name=value,... (every parameter)")->required();
  sub->add_option("--set", o->sets, "override a constant of the spec: NAME=VALUE (repeatable)");
  sub->add_option("--gpu", o->gpu, "GPU index")->capture_default_str();
  sub->add_option("-o,--output-dir", o->out_dir, "write each output as DIR/NAME.bin (raw little-endian elements)");
  sub->add_option("--print", o->print, "elements printed per output")->capture_default_str();
  sub->add_flag("--all-arguments", o->all_arguments,
                "every buffer argument, inputs too (as the run left them), not only the outputs");
  sub->add_flag("--json", o->json, "machine-readable output");
  sub->callback([o, &result] { result.exit_status = run_run(*o); });
}

}  // namespace ktune::cli
