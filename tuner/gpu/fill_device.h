// Buffers filled on the GPU with the bytes fill_host gives them.
//
// Filling 2 GiB of random inputs on the host and uploading them took seconds
// before the first launch; a kernel writes them in milliseconds. The fill
// kernel is compiled from the generator that fill_host runs
// (fill_element.inc, the same text), with FMA contraction off, so each
// element is the same IEEE computation on both sides: splitmix64's output
// number i, scaled to [lo, hi) in double precision, floored for integers,
// converted to the element type with fill_host's rounding and saturation.
//
// What the device fills: Zeros (a memset), Constant (the element's bytes,
// made by store_element on the host, repeated), and Random and Sequence
// fills whose parameters are finite (an infinite or NaN operand makes a NaN
// whose bits differ between CPUs and GPUs). File fills, and the rest, stay on
// the host.
#pragma once

#include <cstdint>
#include <optional>

#include "tuner/compile/compiler.h"
#include "tuner/gpu/args.h"
#include "tuner/gpu/devices.h"
#include "tuner/gpu/driver.h"

namespace ktune::gpu {

// The fill kernel for one architecture: what the worker compiles, so the CPU
// tests compile exactly that. One extern "C" kernel, kFillKernel.
CompileRequest fill_kernel_request(const Arch& arch);
inline constexpr const char* kFillKernel = "ktune_fill";

// Whether the device fill gives this argument fill_host's bytes (above).
bool device_fillable(const ArgSpec& arg);
// Buffers smaller than this are filled on the host: the upload is short, and
// a small argument list never waits for the fill kernel's first compile.
inline constexpr std::uint64_t kDeviceFillMinBytes = std::uint64_t{1} << 24;  // 16 MiB
// device_fillable, and large enough to be worth it.
bool fills_on_device(const ArgSpec& arg);

// Blocks of kFillThreads for a grid-stride pass over n elements: one wave of
// the blocks the device holds at once (resident; 0: unknown), never more
// than the elements need.
inline constexpr unsigned kFillThreads = 256;
std::uint32_t fill_blocks(std::uint64_t n, std::uint64_t resident);

// Worker side: the fill kernel, loaded. Fills are queued on the legacy
// default stream, so whatever is queued after them (uploads, copies,
// launches on a blocking stream) sees the data.
// Throws Error when the kernel does not compile, CudaError for the driver.
class DeviceFiller {
 public:
  // Compiles the kernel for the device (a cubin cache hit after the first time).
  DeviceFiller(const CudaApi& api, const DeviceProperties& device);

  // Writes fill_host(arg)'s bytes to ptr, asynchronously.
  // REQUIRES: device_fillable(arg); ptr holds arg.count elements of arg.type.
  void fill(const ArgSpec& arg, CUdeviceptr ptr) const;

 private:
  const CudaApi& api_;
  std::optional<Module> module_;
  CUfunction fn_ = nullptr;
  std::uint64_t resident_ = 0;  // blocks the whole device holds at once
};

}  // namespace ktune::gpu
