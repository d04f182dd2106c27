#include "tuner/gpu/nvml.h"

#include <dlfcn.h>

namespace ktune::gpu {
namespace {

// nvml.h is not part of the toolkit here, so the few types used are declared
// with their documented, stable ABI values.
using NvmlReturn = int;
using NvmlHandle = void*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kClockSm = 1;
constexpr int kClockMem = 2;
constexpr int kTemperatureGpu = 0;

struct ReasonBit {
  std::uint64_t bit;
  const char* name;
};
constexpr ReasonBit kThrottleBits[] = {
    {0x4, "sw_power_cap"},          {0x8, "hw_slowdown"},
    {0x20, "sw_thermal_slowdown"}, {0x40, "hw_thermal_slowdown"},
    {0x80, "hw_power_brake"},
};

struct NvmlApi {
  bool ok = false;
  std::string why;
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*by_uuid)(const char*, NvmlHandle*) = nullptr;
  NvmlReturn (*clock)(NvmlHandle, int, unsigned*) = nullptr;
  NvmlReturn (*max_clock)(NvmlHandle, int, unsigned*) = nullptr;
  NvmlReturn (*temperature)(NvmlHandle, int, unsigned*) = nullptr;
  NvmlReturn (*power)(NvmlHandle, unsigned*) = nullptr;
  NvmlReturn (*energy)(NvmlHandle, unsigned long long*) = nullptr;
  NvmlReturn (*reasons)(NvmlHandle, unsigned long long*) = nullptr;
  NvmlReturn (*driver_version)(char*, unsigned) = nullptr;
};

template <class F>
void bind(void* lib, const char* name, F& slot) {
  slot = reinterpret_cast<F>(dlsym(lib, name));
}

NvmlApi load() {
  NvmlApi api;
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    api.why = std::string("no NVML: ") + (e ? e : "libnvidia-ml.so.1 not found");
    return api;
  }
  bind(lib, "nvmlInit_v2", api.init);
  bind(lib, "nvmlDeviceGetHandleByUUID", api.by_uuid);
  bind(lib, "nvmlDeviceGetClockInfo", api.clock);
  bind(lib, "nvmlDeviceGetMaxClockInfo", api.max_clock);
  bind(lib, "nvmlDeviceGetTemperature", api.temperature);
  bind(lib, "nvmlDeviceGetPowerUsage", api.power);
  bind(lib, "nvmlDeviceGetTotalEnergyConsumption", api.energy);
  bind(lib, "nvmlSystemGetDriverVersion", api.driver_version);
  // The "event reasons" name replaced "throttle reasons" in driver 535; same ABI.
  bind(lib, "nvmlDeviceGetCurrentClocksEventReasons", api.reasons);
  if (!api.reasons) bind(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", api.reasons);
  if (!api.init || !api.by_uuid || !api.clock || !api.temperature || !api.power) {
    api.why = "NVML lacks a needed entry point";
    return api;
  }
  NvmlReturn rc = api.init();
  if (rc != kNvmlSuccess) {
    api.why = "nvmlInit_v2 failed with code " + std::to_string(rc);
    return api;
  }
  api.ok = true;
  return api;
}

const NvmlApi& nvml() {
  static const NvmlApi api = load();
  return api;
}

}  // namespace

std::uint64_t throttle_mask() {
  std::uint64_t mask = 0;
  for (const auto& r : kThrottleBits) mask |= r.bit;
  return mask;
}

bool Sensors::throttled() const { return valid && (reasons & throttle_mask()) != 0; }

std::string Sensors::throttle_text() const {
  std::string out;
  for (const auto& r : kThrottleBits) {
    if (!(reasons & r.bit)) continue;
    if (!out.empty()) out += ',';
    out += r.name;
  }
  return out;
}

NvmlDevice NvmlDevice::open(const std::string& uuid) {
  NvmlDevice dev;
  const NvmlApi& api = nvml();
  if (!api.ok) return dev;
  NvmlHandle h = nullptr;
  if (api.by_uuid(uuid.c_str(), &h) == kNvmlSuccess) dev.handle_ = h;
  return dev;
}

Sensors NvmlDevice::read() const {
  Sensors s;
  const NvmlApi& api = nvml();
  if (!handle_ || !api.ok) return s;
  // Each reading is best effort: a sensor a board lacks stays 0.
  api.clock(handle_, kClockSm, &s.sm_clock_mhz);
  api.clock(handle_, kClockMem, &s.mem_clock_mhz);
  api.temperature(handle_, kTemperatureGpu, &s.temperature_c);
  api.power(handle_, &s.power_mw);
  unsigned long long reasons = 0;
  if (api.reasons && api.reasons(handle_, &reasons) == kNvmlSuccess) s.reasons = reasons;
  s.valid = true;
  return s;
}

std::uint64_t NvmlDevice::reasons() const {
  unsigned long long r = 0;
  if (handle_ && nvml().ok && nvml().reasons) nvml().reasons(handle_, &r);
  return r;
}

std::optional<std::uint64_t> NvmlDevice::energy_mj() const {
  unsigned long long mj = 0;
  if (!handle_ || !nvml().ok || !nvml().energy || nvml().energy(handle_, &mj) != kNvmlSuccess) return std::nullopt;
  return mj;
}

unsigned NvmlDevice::max_sm_clock_mhz() const {
  unsigned mhz = 0;
  if (handle_ && nvml().max_clock) nvml().max_clock(handle_, kClockSm, &mhz);
  return mhz;
}

unsigned NvmlDevice::max_mem_clock_mhz() const {
  unsigned mhz = 0;
  if (handle_ && nvml().max_clock) nvml().max_clock(handle_, kClockMem, &mhz);
  return mhz;
}

bool nvml_available(std::string* why) {
  if (why) *why = nvml().why;
  return nvml().ok;
}

std::string nvml_driver_version() {
  const NvmlApi& api = nvml();
  char buf[96] = {};
  if (!api.ok || !api.driver_version || api.driver_version(buf, sizeof buf) != kNvmlSuccess)
    return "";
  return buf;
}

}  // namespace ktune::gpu
