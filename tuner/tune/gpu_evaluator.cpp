#include "tuner/tune/gpu_evaluator.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <span>
#include <unordered_map>

#include "db/interchange/interchange.h"
#include "ktune/error.h"
#include "tuner/gpu/fill_device.h"
#include "tuner/gpu/verify_device.h"
#include "tuner/tune/engine_arguments.h"
#include "tuner/tune/static_features.h"

namespace ktune {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// Whatever a batch leaves in the compile pool when it ends early (Ctrl-C, a
// broken engine) is dropped, not compiled for nobody. Only this batch's
// tickets: the pool may be shared with other GPUs' evaluators.
struct CancelOnExit {
  CompilePool& pool;
  const std::vector<CompilePool::Ticket>& tickets;
  ~CancelOnExit() { pool.cancel(tickets); }
};

}  // namespace

bool ranks_by_energy(const Spec& spec) {
  if (spec.objective == "energy") return true;
  for (const Metric& m : spec.metrics)
    if (m.name == spec.objective)
      for (const std::string& n : m.expr.expression.names())
        if (n == "energy_j") return true;
  return false;
}

GpuEvaluator::GpuEvaluator(const Spec& spec, GpuEvaluatorOptions options) : spec_(&spec), options_(options) {
  spec.require_runnable();  // before the GPU is started and anything is measured
  // Racing stops by time, which says nothing of energy.
  if (ranks_by_energy(spec)) options_.racing = false;
  if (options_.energy_ms <= 0 && spec.needs_energy()) options_.energy_ms = GpuEvaluatorOptions::kNeededEnergyMs;
  args_ = engine_arguments(spec);
  gpu::EngineOptions eo;
  eo.cancel = options.cancel;
  auto started = gpu::Engine::start(options.gpu, eo);
  if (!started.engine) throw Error::failed("cannot open GPU " + std::to_string(options.gpu) + ": " + started.message);
  engine_ = std::move(started.engine);
  const Arch device_arch(engine_->device().cc_major * 10 + engine_->device().cc_minor);
  const std::optional<Arch> target = spec.kernel.target_arch(device_arch);
  if (!target)
    throw Error::failed(spec.kernel.not_written_for(device_arch) + " (" + engine_->device().name + ")");
  arch_ = *target;
  pool_ = options.compile_pool;
  if (!pool_) {
    CompilePoolOptions po;
    po.workers = options.compile_threads;
    po.time_limit_s = options.compile_timeout_s;
    po.cancel = options.cancel;
    pool_ = std::make_shared<CompilePool>(po);
  }
  plan_ = std::make_unique<CompilePlan>(*pool_);
  // The worker's own kernels (the device fill; the device compare where
  // outputs are verified) compile in the pool beside the reference kernel,
  // so the worker finds them in the cubin cache instead of compiling them
  // while the GPU waits.
  std::vector<CompilePool::Ticket> own;
  const CancelOnExit cancel_on_exit{*pool_, own};
  own.push_back(pool_->submit(gpu::fill_kernel_request(device_arch)));
  if (spec.verify.mode != Verify::Mode::None) own.push_back(pool_->submit(gpu::compare_kernel_request(device_arch)));
  if (spec.verify.mode == Verify::Mode::Reference || spec.verify.mode == Verify::Mode::File) prepare_reference(own);
  for (const CompilePool::Ticket& t : own) pool_->take(t);
  own.clear();
}

GpuEvaluator::~GpuEvaluator() = default;

std::string GpuEvaluator::source() const {
  return "GPU " + std::to_string(options_.gpu) + ": " + engine_->device().name;
}

db::DeviceInfo GpuEvaluator::device() const {
  const gpu::DeviceProperties& d = engine_->device();
  db::DeviceInfo out;
  out.name = d.name;
  out.cc_major = d.cc_major;
  out.cc_minor = d.cc_minor;
  out.sm_count = d.sm_count;
  out.memory_bytes = static_cast<int64_t>(d.total_memory);
  out.sm_clock_mhz = d.max_sm_clock_mhz;
  out.memory_clock_mhz = d.max_mem_clock_mhz;
  out.driver_version = d.driver_version;
  out.cuda_version = std::to_string(d.cuda_version / 1000) + "." + std::to_string(d.cuda_version % 1000 / 10);
  out.nvrtc_version = Compiler::nvrtc_version();
  out.uuid = d.uuid;
  return out;
}

void GpuEvaluator::prepare_reference(std::vector<CompilePool::Ticket>& own) {
  if (spec_->verify.mode == Verify::Mode::File) {
    const std::string bytes = db::read_text_file(spec_->verify.path);
    std::vector<gpu::HostBuffer> expected;
    size_t at = 0;
    for (const gpu::ArgSpec& a : args_) {
      if (!a.output) continue;
      const size_t n = a.count * elem_size(a.type);
      if (at + n > bytes.size())
        throw Error::bad_input(spec_->verify.path + ": too short for the outputs (" + std::to_string(bytes.size()) +
                               " bytes)", spec_->verify.where);
      expected.push_back({a.name, a.type, std::vector<uint8_t>(bytes.begin() + at, bytes.begin() + at + n)});
      at += n;
    }
    engine_->set_expected(std::move(expected));
    have_expected_ = true;
    return;
  }
  const SearchSpace& space = spec_->space();
  if (space.count_valid() == 0) return;
  const auto values = space.values(space.at(0));
  const LaunchResult geo = spec_->geometry(values);
  if (!geo.ok()) throw Error::failed("cannot build the reference kernel: " + geo.error);
  const CompileResult ref = pool_->take(pool_->submit(make_reference_request(*spec_, values, *geo.launch, arch_)));
  if (!ref.ok) throw Error::failed("reference kernel '" + spec_->verify.kernel + "' does not compile:\n" + ref.log,
                                   spec_->verify.where);
  for (const CompilePool::Ticket& t : own) pool_->take(t);
  own.clear();
  gpu::Job job;
  job.label = "reference " + spec_->verify.kernel;
  job.cubin.assign(ref.cubin.begin(), ref.cubin.end());
  job.kernel_name = ref.lowered_name;
  for (int i = 0; i < 3; ++i) {
    job.geometry.grid[i] = static_cast<uint32_t>(spec_->verify.grid[i]);
    job.geometry.block[i] = static_cast<uint32_t>(spec_->verify.block[i]);
  }
  job.args = args_;
  // Its outputs stay in the GPU worker as the expected outputs: nothing of
  // them crosses the host (a fresh worker runs the reference again).
  const gpu::Result r = engine_->set_reference(std::move(job));
  if (r.status != gpu::Status::Ok)
    throw Error::failed("reference kernel '" + spec_->verify.kernel + "' failed: " + r.reason, spec_->verify.where);
  have_expected_ = true;
}

std::vector<StaticFeatures> GpuEvaluator::features(std::span<const Config> configs) {
  return compile_features(
      *spec_, arch_, *pool_, configs,
      [&](size_t i, const StaticFeatures& f) {
        if (!f.compiled || f.spill_bytes != 0) return;
        std::lock_guard lock(compiled_mutex_);
        if (collect_) compiled_clean_.push_back(configs[i]);
      },
      [this] { return abandon_.load(); });
}

gpu::Job GpuEvaluator::make_job(const std::vector<Value>& config, const Build& build) const {
  gpu::Job job;
  job.label = config_key(config);
  job.cubin.assign(build.compile.cubin.begin(), build.compile.cubin.end());
  job.kernel_name = build.compile.lowered_name;
  for (int i = 0; i < 3; ++i) {
    job.geometry.grid[i] = static_cast<uint32_t>(build.launch->grid[i]);
    job.geometry.block[i] = static_cast<uint32_t>(build.launch->block[i]);
  }
  job.geometry.dynamic_smem = static_cast<uint32_t>(build.launch->shared_memory);
  job.args = args_;
  job.verify = have_expected_;
  job.tolerance = gpu::Tolerance(spec_->verify.atol, spec_->verify.rtol);
  for (const Argument& a : spec_->arguments)
    if (a.output && (a.atol || a.rtol))
      job.tolerance.outputs.push_back({a.name, a.atol.value_or(spec_->verify.atol), a.rtol.value_or(spec_->verify.rtol)});
  job.capture_outputs = spec_->verify.mode == Verify::Mode::FirstValid && !have_expected_;
  job.measure_options.cold = options_.cold;
  job.measure_options.energy_ms = options_.energy_ms;
  job.timeout_s = options_.timeout_s;
  return job;
}

// NVML's view of the device while the job ran; with an energy window its
// average power replaces the one reading taken after the samples.
void GpuEvaluator::take_device_state(const gpu::Result& r, db::Evaluation& e) {
  if (!r.sensors.valid) return;
  e.sm_clock_mhz = r.sensors.sm_clock_mhz;
  e.temperature_c = r.sensors.temperature_c;
  e.power_w = r.sensors.power_mw / 1000.0;
  if (r.status == db::Status::Ok && !r.timing.samples_ms.empty()) e.throttled_samples = r.timing.throttled_samples;
  if (r.timing.energy_j > 0) {
    e.energy_j = r.timing.energy_j;
    e.power_w = r.timing.power_w;
  }
}

gpu::Result GpuEvaluator::run_job(gpu::Job job, bool race) {
  if (race && options_.racing && job.measure && best_median_ms_ > 0) {
    job.measure_options.race_above_ms = best_median_ms_ * (1 + options_.race_margin);
    job.measure_options.race_samples = options_.race_samples;
    job.measure_options.race_first_above_ms = best_median_ms_ * (1 + options_.race_first_margin);
  }
  const bool idle = !gpu_idle_since_ || ms_since(*gpu_idle_since_) > options_.idle_gap_ms;
  job.measure_options.warmup_ms = idle ? options_.idle_warmup_ms : options_.warm_warmup_ms;
  gpu::Result r = engine_->run(job);
  gpu_idle_since_ = Clock::now();
  if (race && r.status == db::Status::Ok && job.measure && !r.timing.stopped_early && r.timing.median_ms > 0)
    best_median_ms_ = best_median_ms_ > 0 ? std::min(best_median_ms_, r.timing.median_ms) : r.timing.median_ms;
  return r;
}

Measured GpuEvaluator::run_one(const std::vector<Value>& config, const Build& build) {
  Measured m;
  db::Evaluation& e = m.eval;
  e.config = config;
  e.timestamp = db::now_iso8601();
  record_build(build, e);
  if (!build.ok()) return m;
  const gpu::Result r = run_job(make_job(config, build));
  if (r.interrupted) throw Cancelled{};
  e.status = r.status;
  e.reason = r.reason;
  // The worker's own phase times; the rest of the job's wall (messages, job
  // set-up) is framework time, computed per turn in evaluate().
  e.load_ms = r.load_ms;
  if (r.verify_ms > 0) e.verify_ms = r.verify_ms;
  if (r.benchmark_ms > 0) e.benchmark_ms = r.benchmark_ms;
  if (r.resources.registers) {
    e.registers = r.resources.registers;
    e.occupancy = r.resources.occupancy;
  }
  take_device_state(r, e);
  if (e.status == db::Status::Ok && !r.outputs.empty() && !have_expected_) {
    engine_->set_expected(r.outputs);  // first_valid: this configuration is the reference from now on
    have_expected_ = true;
  }
  if (e.status == db::Status::Ok) {
    e.time_ms = r.timing.median_ms;
    e.min_ms = r.timing.min_ms;
    e.mean_ms = r.timing.mean_ms;
    e.stddev_ms = r.timing.stddev_ms;
    e.samples = r.timing.samples_ms;
    e.sample_count = static_cast<int64_t>(e.samples.size());
    const auto metrics = spec_->evaluate_metrics(config, r.timing.median_ms, e.energy_j);
    for (size_t i = 0; i < metrics.size(); ++i)
      if (metrics[i]) e.metrics[spec_->metrics[i].name] = *metrics[i];
    if (r.timing.throttled_samples) e.reason = std::to_string(r.timing.throttled_samples) + " throttled samples";
    if (r.timing.stopped_early) {
      e.stopped_early = 1;
      if (!e.reason.empty()) e.reason.append("; ");
      e.reason.append("stopped early: ").append(std::to_string(e.samples.size())).append(" samples above the racing bound");
    }
  }
  return m;
}

// Pipelined: the whole batch goes to the compile pool first; the GPU then
// takes the configurations in the order their compiles finish (results go back
// in the batch's order), so it waits only while nothing compiled is left, not
// for the slowest compile of the batch. With verify: first_valid the reference
// is thus the first configuration to compile and run ok, not the first listed.
//
// Times per configuration. Compiles overlap other configurations' GPU work,
// so a configuration's cost is its turn on the GPU thread, not its compile
// wall plus its GPU wall (that would count overlapped time twice):
//  * compile_ms: the compiler's own time (0 for a cache hit). It
//    overlaps other configurations' GPU work, so it is not a share of the wall.
//  * cost_s: the configuration's turn on this (the GPU) thread: from the end
//    of the previous turn (for the first, from the start of evaluate(), the
//    batch's submission included) to the end of its measurement. Turns tile
//    the batch's wall time, so summed cost_s is the time the run spent.
//  * load_ms, verify_ms, benchmark_ms: the worker's phases (module load;
//    poison, checked run and compare; warm-up and samples).
//  * framework_ms: the turn's wall time accounted for by none of those phases
//    nor by waiting for the configuration's own compile (at most compile_ms of
//    the wait): queueing behind other compiles, process round trips, cache
//    lookups, job set-up, the database commit of the previous turn.
void GpuEvaluator::evaluate(std::span<const std::vector<Value>> configs, const OnMeasured& on_measured) {
  auto turn_start = Clock::now();
  std::vector<LaunchResult> launches(configs.size());
  std::vector<CompilePool::Ticket> waiting;
  std::unordered_map<CompilePool::Ticket, size_t> index_of;
  const CancelOnExit cancel_on_exit{*pool_, waiting};
  // The batch in the strategy's order (its position is its priority), and
  // what the strategy expects next behind it.
  std::vector<CompilePlan::Keyed> batch;
  std::vector<size_t> batch_index;
  for (size_t i = 0; i < configs.size(); ++i) {
    BuildPlan p = plan_build(*spec_, configs[i], arch_);
    launches[i] = std::move(p.launch);
    if (!p.request) continue;
    batch.push_back({config_key(configs[i]), std::move(*p.request)});
    batch_index.push_back(i);
  }
  std::vector<CompilePlan::Keyed> next = keyed_requests(next_);
  held_ = std::move(next_);
  next_.clear();
  waiting = plan_->submit(std::move(batch), std::move(next));
  for (size_t j = 0; j < waiting.size(); ++j) index_of[waiting[j]] = batch_index[j];

  // Returns whether the caller lets the batch go on.
  auto finish_turn = [&](size_t i, Measured m, double compile_wait_ms) {
    const auto now = Clock::now();
    const double turn_ms = std::chrono::duration<double, std::milli>(now - turn_start).count();
    turn_start = now;
    const double compile_part = std::min(compile_wait_ms, m.eval.compile_ms.value_or(0));
    const double phases =
        m.eval.load_ms.value_or(0) + m.eval.verify_ms.value_or(0) + m.eval.benchmark_ms.value_or(0);
    m.eval.framework_ms = std::max(0.0, turn_ms - phases - compile_part);
    m.cost_s = turn_ms / 1000.0;
    // Stored now; the time that takes is the next turn's framework time.
    return on_measured(i, m);
  };
  // Configurations whose geometry failed have nothing to compile: first.
  // Once on_measured says stop, the compiles still running are cancelled.
  for (size_t i = 0; i < configs.size(); ++i)
    if (!launches[i].ok() && !finish_turn(i, run_one(configs[i], finish_build(launches[i])), 0)) return;
  while (!waiting.empty()) {
    const auto t0 = Clock::now();
    auto [ticket, result] = pool_->take_any(waiting);
    const double wait_ms = ms_since(t0);
    const size_t i = index_of.at(ticket);
    if (!finish_turn(i, run_one(configs[i], finish_build(launches[i], std::move(result))), wait_ms)) return;
  }
}

void GpuEvaluator::compile_ahead(std::span<const std::vector<Value>> next) {
  next_.assign(next.begin(), next.end());
  if (next_.empty()) {
    plan_->drop();
    return;
  }
  // Queued now, not only with the next batch: a batch measured beside the
  // proposal may leave nothing to evaluate(), and the spares must compile
  // all the same. The next evaluate() puts its batch ahead of them.
  plan_->submit({}, keyed_requests(next_));
  held_ = next_;
}

std::vector<CompilePlan::Keyed> GpuEvaluator::keyed_requests(std::span<const std::vector<Value>> configs) const {
  std::vector<CompilePlan::Keyed> out;
  for (const std::vector<Value>& c : configs) {
    BuildPlan p = plan_build(*spec_, c, arch_);
    if (p.request) out.push_back({config_key(c), std::move(*p.request)});
  }
  return out;
}

std::vector<Config> GpuEvaluator::beside(const Beside& b) {
  {
    std::lock_guard lock(compiled_mutex_);
    collect_ = true;
    compiled_clean_.clear();
  }
  struct StopCollecting {
    GpuEvaluator* e;
    ~StopCollecting() {
      std::lock_guard lock(e->compiled_mutex_);
      e->collect_ = false;
      e->compiled_clean_.clear();
    }
  } stop_collecting{this};
  abandon_ = false;
  std::atomic<bool> proposing{true};
  // The future's destructor waits for the proposal's thread, whatever
  // happens here, before the strategy it works on can go.
  std::future<std::vector<Config>> proposal = std::async(std::launch::async, [&] {
    struct Done {
      std::atomic<bool>& flag;
      ~Done() { flag = false; }
    } done{proposing};
    return b.propose();
  });
  std::vector<bool> taken(b.spare.size(), false);
  std::vector<std::string> keys;
  for (const std::vector<Value>& c : b.spare) keys.push_back(config_key(c));
  bool go = true;
  while (go && proposing) {
    std::optional<std::vector<Value>> next;
    {
      std::lock_guard lock(compiled_mutex_);
      while (!next && !compiled_clean_.empty()) {
        std::vector<Value> c = spec_->space().values(compiled_clean_.front());
        compiled_clean_.pop_front();
        if (b.wanted(c)) next = std::move(c);
      }
    }
    for (size_t i = 0; i < b.spare.size() && !next; ++i)
      if (!taken[i] && plan_->ready(keys[i])) {
        taken[i] = true;
        if (b.wanted(b.spare[i])) next = b.spare[i];
      }
    if (!next) {
      if (b.time_left && b.time_left() <= 0) abandon_ = true;
      proposal.wait_for(std::chrono::milliseconds(5));
      continue;
    }
    // Measured alone; what else was queued ahead stays queued.
    const std::string key = config_key(*next);
    next_.clear();
    for (const std::vector<Value>& c : held_)
      if (config_key(c) != key) next_.push_back(c);
    evaluate(std::span<const std::vector<Value>>(&*next, 1), [&](size_t, const Measured& m) {
      go = b.on_measured(m);
      return go;
    });
  }
  // The run is stopping (its time is up): the proposal need not wait.
  if (!go) abandon_ = true;
  std::vector<Config> out = proposal.get();
  abandon_ = false;
  return out;
}

}  // namespace ktune
