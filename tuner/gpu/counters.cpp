#include "tuner/gpu/counters.h"

#include <dlfcn.h>

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <algorithm>
#include <map>

#include "ktune/error.h"

namespace ktune::gpu {

#define KTUNE_CUPTI_FUNCTIONS(X)                                                                         \
  X(cuptiGetResultString) X(cuptiProfilerInitialize) X(cuptiDeviceGetChipName)                            \
  X(cuptiProfilerGetCounterAvailability) X(cuptiProfilerHostInitialize) X(cuptiProfilerHostDeinitialize) \
  X(cuptiProfilerHostConfigAddMetrics) X(cuptiProfilerHostGetConfigImageSize)                            \
  X(cuptiProfilerHostGetConfigImage) X(cuptiProfilerHostGetNumOfPasses) X(cuptiRangeProfilerEnable)      \
  X(cuptiRangeProfilerDisable) X(cuptiRangeProfilerGetCounterDataSize)                                   \
  X(cuptiRangeProfilerCounterDataImageInitialize) X(cuptiRangeProfilerSetConfig)                         \
  X(cuptiRangeProfilerStart) X(cuptiRangeProfilerStop) X(cuptiRangeProfilerDecodeData)                   \
  X(cuptiRangeProfilerGetCounterDataInfo) X(cuptiProfilerHostEvaluateToGpuValues)

struct CounterProfiler::Cupti {
#define KTUNE_CUPTI_MEMBER(name) decltype(&::name) name = nullptr;
  KTUNE_CUPTI_FUNCTIONS(KTUNE_CUPTI_MEMBER)
#undef KTUNE_CUPTI_MEMBER
  std::string why;  // empty: loaded and initialised
};

namespace {

using Cupti = CounterProfiler::Cupti;

// CUPTI's parameter structs: zeroed, with their size set.
template <class P>
P params(size_t struct_size) {
  P p{};
  p.structSize = struct_size;
  return p;
}


Cupti load_cupti() {
  Cupti c;
  void* lib = nullptr;
  std::string tried;
  for (const char* name : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"}) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib) break;
    const char* e = dlerror();
    tried = e ? e : name;
  }
  if (!lib) {
    c.why = "hardware counters need CUPTI (libcupti.so from the CUDA toolkit), which did not load: " + tried;
    return c;
  }
  bool all = true;
#define KTUNE_CUPTI_BIND(name)                                         \
  c.name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name)); \
  all = all && c.name;
  KTUNE_CUPTI_FUNCTIONS(KTUNE_CUPTI_BIND)
#undef KTUNE_CUPTI_BIND
  if (!all) {
    c.why = "this CUPTI lacks the range profiler (CUDA 12.6 or later is needed for hardware counters)";
    return c;
  }
  auto init = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  if (CUptiResult r = c.cuptiProfilerInitialize(&init); r != CUPTI_SUCCESS) {
    const char* s = "?";
    c.cuptiGetResultString(r, &s);
    c.why = std::string("CUPTI's profiler did not initialise: ") + s;
  }
  return c;
}

const Cupti& cupti() {
  static const Cupti c = load_cupti();
  return c;
}

[[noreturn]] void fail(const Cupti& c, CUptiResult r, const char* call) {
  if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    throw Error::failed(
        "the driver lets only administrators read GPU performance counters (NVreg_RestrictProfilingToAdminUsers=1): "
        "run ktune as root, or allow all users (https://developer.nvidia.com/ERR_NVGPUCTRPERM)");
  const char* s = "?";
  c.cuptiGetResultString(r, &s);
  throw Error::failed(std::string("CUPTI ") + call + ": " + s);
}

#define KTUNE_CUPTI_CHECK(c, call, params) \
  do {                                     \
    CUptiResult r_ = (c).call(&(params));  \
    if (r_ != CUPTI_SUCCESS) fail((c), r_, #call); \
  } while (0)

// One stored counter: the metric and its scale (Nsight Compute's percentages
// become fractions).
struct Standard {
  const char* metric;
  std::optional<double> db::Evaluation::*field;
  double scale;
};
constexpr Standard kStandard[] = {
    {"gpu__time_duration.sum", &db::Evaluation::profiled_ms, 1e-6},  // ns
    {"dram__bytes_read.sum", &db::Evaluation::dram_read_bytes, 1},
    {"dram__bytes_write.sum", &db::Evaluation::dram_write_bytes, 1},
    {"dram__throughput.avg.pct_of_peak_sustained_elapsed", &db::Evaluation::dram_util, 0.01},
    {"lts__t_sector_hit_rate.pct", &db::Evaluation::l2_hit_rate, 0.01},
    {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", &db::Evaluation::load_requests, 1},
    {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", &db::Evaluation::load_sectors, 1},
    {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", &db::Evaluation::store_requests, 1},
    {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", &db::Evaluation::store_sectors, 1},
    {"sm__warps_active.avg.pct_of_peak_sustained_active", &db::Evaluation::achieved_occupancy, 0.01},
    {"sm__throughput.avg.pct_of_peak_sustained_elapsed", &db::Evaluation::sm_util, 0.01},
    {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", &db::Evaluation::bank_conflicts, 1},
};
// Tensor pipes: the mma pipe and the tensor pipe as a whole (which Hopper's
// warpgroup MMAs use); the busier one counts.
constexpr const char* kTensor[] = {
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
};
// Floating-point operations on the CUDA cores, as Nsight Compute's roofline
// counts them (its smsp__ forms): a fused multiply-add is two. Each count is
// profiled in a session of its own (metric_sets).
struct Flop {
  const char* metric;
  double weight;
};
constexpr Flop kFlop[] = {
    {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 2}, {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 1},
    {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 1}, {"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", 2},
    {"smsp__sass_thread_inst_executed_op_dadd_pred_on.sum", 1}, {"smsp__sass_thread_inst_executed_op_dmul_pred_on.sum", 1},
    {"smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", 2}, {"smsp__sass_thread_inst_executed_op_hadd_pred_on.sum", 1},
    {"smsp__sass_thread_inst_executed_op_hmul_pred_on.sum", 1},
};
// Tensor-core operations by path (mma.sync's hmma, Hopper's warpgroup hgmma);
// a chip without one of them drops it.
constexpr Flop kTensorFlop[] = {
    {"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum", 1}, {"sm__ops_path_tensor_op_hgmma_src_fp16.sum", 1},
    {"sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum", 1}, {"sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum", 1},
    {"sm__ops_path_tensor_op_hmma_src_fp16.sum", 1},           {"sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32.sum", 1},
};

}  // namespace

const std::vector<std::string>& standard_metrics() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Standard& s : kStandard) v.emplace_back(s.metric);
    for (const char* t : kTensor) v.emplace_back(t);
    for (const Flop& f : kFlop) v.emplace_back(f.metric);
    for (const Flop& f : kTensorFlop) v.emplace_back(f.metric);
    return v;
  }();
  return names;
}

std::vector<std::vector<std::string>> metric_sets(const std::vector<std::string>& metrics) {
  std::vector<std::string> hardware, sass;
  for (const std::string& m : metrics) (m.find("sass_") != std::string::npos ? sass : hardware).push_back(m);
  std::vector<std::vector<std::string>> sets;
  if (!hardware.empty()) sets.push_back(std::move(hardware));
  for (std::string& m : sass) sets.push_back({std::move(m)});
  return sets;
}

CounterProfiler::CounterProfiler(CUcontext context, int device_ordinal, std::vector<std::string> metrics)
    : context_(context) {
  const Cupti& c = cupti();
  if (!c.why.empty()) throw Error::failed(c.why);
  cupti_ = &c;
  auto chip = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = static_cast<size_t>(device_ordinal);
  KTUNE_CUPTI_CHECK(c, cuptiDeviceGetChipName, chip);
  auto avail = params<CUpti_Profiler_GetCounterAvailability_Params>(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  avail.ctx = context_;
  KTUNE_CUPTI_CHECK(c, cuptiProfilerGetCounterAvailability, avail);
  std::vector<std::uint8_t> availability(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  KTUNE_CUPTI_CHECK(c, cuptiProfilerGetCounterAvailability, avail);

  auto host = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host.pChipName = chip.pChipName;
  host.pCounterAvailabilityImage = availability.data();
  auto add = [&](std::vector<const char*> names) {
    auto p = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    p.pHostObject = static_cast<CUpti_Profiler_Host_Object*>(host_object_);
    p.ppMetricNames = names.data();
    p.numMetrics = names.size();
    return c.cuptiProfilerHostConfigAddMetrics(&p) == CUPTI_SUCCESS;
  };
  KTUNE_CUPTI_CHECK(c, cuptiProfilerHostInitialize, host);
  host_object_ = host.pHostObject;
  // One at a time, so that a metric this chip lacks drops out alone. A
  // refused one leaves the host object refusing every later metric, so it is
  // made afresh with the metrics accepted so far.
  for (std::string& m : metrics) {
    if (add({m.c_str()})) {
      metrics_.push_back(std::move(m));
      continue;
    }
    refused_.push_back(std::move(m));
    auto done = params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    done.pHostObject = static_cast<CUpti_Profiler_Host_Object*>(host_object_);
    c.cuptiProfilerHostDeinitialize(&done);
    host_object_ = nullptr;
    KTUNE_CUPTI_CHECK(c, cuptiProfilerHostInitialize, host);
    host_object_ = host.pHostObject;
    std::vector<const char*> accepted;
    for (const std::string& a : metrics_) accepted.push_back(a.c_str());
    if (!accepted.empty() && !add(accepted)) throw Error::failed("CUPTI refused metrics it had accepted");
  }
  if (metrics_.empty()) throw Error::failed("CUPTI knows none of the metrics asked for on this GPU");
  for (const std::string& m : metrics_) names_.push_back(m.c_str());
  auto size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = static_cast<CUpti_Profiler_Host_Object*>(host_object_);
  KTUNE_CUPTI_CHECK(c, cuptiProfilerHostGetConfigImageSize, size);
  config_image_.resize(size.configImageSize);
  auto image = params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  image.pHostObject = static_cast<CUpti_Profiler_Host_Object*>(host_object_);
  image.configImageSize = config_image_.size();
  image.pConfigImage = config_image_.data();
  KTUNE_CUPTI_CHECK(c, cuptiProfilerHostGetConfigImage, image);
  auto passes = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  passes.configImageSize = config_image_.size();
  passes.pConfigImage = config_image_.data();
  KTUNE_CUPTI_CHECK(c, cuptiProfilerHostGetNumOfPasses, passes);
  passes_ = passes.numOfPasses;
}

CounterProfiler::~CounterProfiler() {
  if (!cupti_ || !host_object_) return;
  auto p = params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  p.pHostObject = static_cast<CUpti_Profiler_Host_Object*>(host_object_);
  cupti_->cuptiProfilerHostDeinitialize(&p);
}

std::vector<double> CounterProfiler::profile(const std::function<void()>& launch) {
  const Cupti& c = *cupti_;
  // Enabled for this launch only, so that the tuner's timed launches never
  // run with the profiler attached to the context.
  auto enable = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = context_;
  KTUNE_CUPTI_CHECK(c, cuptiRangeProfilerEnable, enable);
  CUpti_RangeProfiler_Object* profiler = enable.pRangeProfilerObject;
  struct Disable {
    const Cupti& c;
    CUpti_RangeProfiler_Object* p;
    ~Disable() {
      auto d = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
      d.pRangeProfilerObject = p;
      c.cuptiRangeProfilerDisable(&d);
    }
  } disable{c, profiler};

  auto size = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = profiler;
  size.pMetricNames = names_.data();
  size.numMetrics = names_.size();
  size.maxNumOfRanges = 1;
  size.maxNumRangeTreeNodes = 1;
  KTUNE_CUPTI_CHECK(c, cuptiRangeProfilerGetCounterDataSize, size);
  std::vector<std::uint8_t> data(size.counterDataSize);
  auto init = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = profiler;
  init.counterDataSize = data.size();
  init.pCounterData = data.data();
  KTUNE_CUPTI_CHECK(c, cuptiRangeProfilerCounterDataImageInitialize, init);

  auto config = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  config.pRangeProfilerObject = profiler;
  config.configSize = config_image_.size();
  config.pConfig = config_image_.data();
  config.counterDataImageSize = data.size();
  config.pCounterDataImage = data.data();
  config.range = CUPTI_AutoRange;        // one range per kernel launch
  config.replayMode = CUPTI_KernelReplay;  // CUPTI replays the launch for every pass
  config.maxRangesPerPass = 1;
  config.numNestingLevels = 1;
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  KTUNE_CUPTI_CHECK(c, cuptiRangeProfilerSetConfig, config);
  auto start = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  start.pRangeProfilerObject = profiler;
  KTUNE_CUPTI_CHECK(c, cuptiRangeProfilerStart, start);
  launch();
  auto stop = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  stop.pRangeProfilerObject = profiler;
  KTUNE_CUPTI_CHECK(c, cuptiRangeProfilerStop, stop);
  if (!stop.isAllPassSubmitted) throw Error::failed("CUPTI did not replay every pass of the launch");
  auto decode = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = profiler;
  KTUNE_CUPTI_CHECK(c, cuptiRangeProfilerDecodeData, decode);
  auto info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = data.data();
  info.counterDataImageSize = data.size();
  KTUNE_CUPTI_CHECK(c, cuptiRangeProfilerGetCounterDataInfo, info);
  if (info.numTotalRanges < 1) throw Error::failed("CUPTI recorded no kernel launch to count");

  std::vector<double> values(names_.size());
  auto eval = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  eval.pHostObject = static_cast<CUpti_Profiler_Host_Object*>(host_object_);
  eval.pCounterDataImage = data.data();
  eval.counterDataImageSize = data.size();
  eval.rangeIndex = 0;
  eval.ppMetricNames = names_.data();
  eval.numMetrics = names_.size();
  eval.pMetricValues = values.data();
  KTUNE_CUPTI_CHECK(c, cuptiProfilerHostEvaluateToGpuValues, eval);
  return values;
}

void counters_to_evaluation(const std::vector<std::string>& metrics, const std::vector<double>& values,
                            db::Evaluation& e) {
  std::map<std::string, double> by_name;
  for (size_t i = 0; i < metrics.size() && i < values.size(); ++i) by_name[metrics[i]] = values[i];
  auto take = [&](const char* metric) -> std::optional<double> {
    auto it = by_name.find(metric);
    if (it == by_name.end()) return std::nullopt;
    double v = it->second;
    by_name.erase(it);
    return v;
  };
  for (const Standard& s : kStandard)
    if (std::optional<double> v = take(s.metric)) e.*s.field = *v * s.scale;
  for (const char* t : kTensor)
    if (std::optional<double> v = take(t)) e.tensor_util = std::max(e.tensor_util.value_or(0), *v * 0.01);
  std::optional<double> flop;
  for (const Flop& f : kFlop)
    if (std::optional<double> v = take(f.metric)) flop = flop.value_or(0) + f.weight * *v;
  if (flop) e.flop = flop;
  std::optional<double> tensor;
  for (const Flop& f : kTensorFlop)
    if (std::optional<double> v = take(f.metric)) tensor = tensor.value_or(0) + f.weight * *v;
  if (tensor) e.tensor_flop = tensor;
  for (const auto& [name, value] : by_name) e.metrics[name] = value;
}

}  // namespace ktune::gpu
