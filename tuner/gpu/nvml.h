// NVML, loaded at run time: read-only GPU sensors for measurement records.
//
// Reads the SM and memory clocks, temperature, power draw and the reasons the
// clocks are held down (power cap, thermal slowdown, ...) so that a timing can
// be flagged as taken on a throttled GPU. ktune never changes clocks, power
// limits or any other setting. Without libnvidia-ml.so.1 every read returns an
// invalid Sensors value; that is a normal state, not an error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ktune::gpu {

struct Sensors {
  bool valid = false;          // false: NVML absent or the device not found
  unsigned sm_clock_mhz = 0;
  unsigned mem_clock_mhz = 0;
  unsigned temperature_c = 0;
  unsigned power_mw = 0;
  std::uint64_t reasons = 0;   // nvmlClocksEventReasons bit mask

  // Power cap, thermal or hardware slowdown: the clocks are below what the
  // workload would get on a cool, unconstrained GPU.
  bool throttled() const;
  // "sw_power_cap,hw_thermal" or "" when none of the throttling bits is set.
  std::string throttle_text() const;
};

// Bits of nvmlClocksEventReasons that mean the timing is not representative.
std::uint64_t throttle_mask();

// One GPU as NVML sees it, found by the CUDA UUID ("GPU-xxxxxxxx-...").
class NvmlDevice {
 public:
  // An invalid handle when NVML is missing or knows no such UUID.
  static NvmlDevice open(const std::string& uuid);

  bool valid() const { return handle_ != nullptr; }
  Sensors read() const;
  // Only the clock-event reasons: cheap enough to check after every sample.
  std::uint64_t reasons() const;
  // The board's energy counter, mJ since the driver loaded (Volta and later);
  // nullopt where the board has none. It advances in steps (tens of ms apart),
  // so short intervals need the stepping that Measurer's energy window uses.
  std::optional<std::uint64_t> energy_mj() const;
  unsigned max_sm_clock_mhz() const;
  unsigned max_mem_clock_mhz() const;

 private:
  void* handle_ = nullptr;
};

// Whether NVML loaded, and if not why (for `ktune devices` and logs).
bool nvml_available(std::string* why = nullptr);
// The kernel driver's release ("580.65.06"), "" without NVML.
std::string nvml_driver_version();

}  // namespace ktune::gpu
