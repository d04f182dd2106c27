// Kernel arguments: how each is described, filled, and held on the GPU.
//
// ArgSpec is the engine's own plain description of one kernel parameter (the
// spec layer translates its YAML into these). Host data is produced
// deterministically: the same ArgSpec gives the same bytes on every machine,
// so reference outputs and stored results can be compared across runs. Random
// fills default to a seed derived from the argument's name, so two inputs never
// silently hold the same data, and never to zeros.
//
// ArgumentSet (worker side) fills the buffers once per argument list (on the
// device where a DeviceFiller can, fill_device.h; else on the host, then
// uploaded) and, before each verified run, poisons the outputs (0xFF bytes:
// NaN for every float type) so an element the kernel never wrote is caught,
// and restores read-write buffers to their initial contents. Both happen on
// the device (memset, device-to-device copy from a pristine copy), queued
// without a host wait: a verified run costs no host traffic and no allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tuner/base/elem_type.h"
#include "tuner/gpu/driver.h"

namespace ktune::gpu {

enum class FillKind : std::uint8_t { Random, Constant, Sequence, Zeros, File, Normal };

struct Fill {
  FillKind kind = FillKind::Random;
  // Random: uniform in [lo, hi); unset bounds mean [0, 1) for floats and
  // [0, 100) for integers. seed unset: derived from the argument name.
  // Normal: normally distributed (fill_element.inc's kt_normal_value), the
  // seed likewise.
  std::optional<std::uint64_t> seed;
  std::optional<double> lo, hi;
  double value = 0;              // Constant
  double start = 0, step = 1;    // Sequence: start + i * step
  double mean = 0, stddev = 1;   // Normal
  std::string path;              // File: raw little-endian elements, exactly count of them

  static Fill zeros() { return with(FillKind::Zeros); }
  static Fill constant(double v) { Fill f = with(FillKind::Constant); f.value = v; return f; }
  static Fill sequence(double start, double step) {
    Fill f = with(FillKind::Sequence);
    f.start = start;
    f.step = step;
    return f;
  }
  static Fill file(std::string path) { Fill f = with(FillKind::File); f.path = std::move(path); return f; }
  static Fill normal(std::optional<std::uint64_t> seed, double mean, double stddev) {
    Fill f = with(FillKind::Normal);
    f.seed = seed;
    f.mean = mean;
    f.stddev = stddev;
    return f;
  }

 private:
  static Fill with(FillKind kind) { Fill f; f.kind = kind; return f; }
};

// Constant: data for a __constant__ array of the module named like the
// argument, copied there after each module load; not a kernel parameter.
// TensorMap: a CUtensorMap over a buffer of the same list (TMA), encoded once
// the buffer is allocated and passed by value.
enum class ArgKind : std::uint8_t { Scalar, Buffer, Constant, TensorMap };

// What a TensorMap argument describes: a box-tiled view of buffer `of`
// (cuTensorMapEncodeTiled's arguments; dimensions innermost first).
struct MapLayout {
  std::uint32_t of = 0;                     // index of the buffer in the argument list
  std::vector<std::uint64_t> dims;          // elements
  std::vector<std::uint64_t> stride_bytes;  // of dimensions 1..
  std::vector<std::uint32_t> box;           // elements
  std::uint32_t swizzle = 0;                // bytes: 0, 32, 64 or 128
};

struct ArgSpec {
  std::string name;
  ArgKind kind = ArgKind::Buffer;
  ElemType type = ElemType::F32;
  std::uint64_t count = 0;       // buffer elements
  Fill fill;                     // buffer contents before the kernel runs
  bool output = false;           // verified, poisoned before each verified run
  bool read_write = false;       // output the kernel also reads: restored, not poisoned
  double value = 0;              // scalar of a float type
  std::int64_t int_value = 0;    // scalar of an integer type (exact)
  MapLayout map;                 // TensorMap (type: its buffer's element type)

  static ArgSpec buffer(std::string name, ElemType type, std::uint64_t count, Fill fill = {},
                        bool output = false);
  static ArgSpec scalar(std::string name, ElemType type, double value);
  static ArgSpec scalar_int(std::string name, ElemType type, std::int64_t value);
  static ArgSpec constant(std::string name, ElemType type, std::uint64_t count, Fill fill = {});
  static ArgSpec tensor_map(std::string name, ElemType type, MapLayout map);
};

// A buffer's contents on the host, tagged with what it is.
struct HostBuffer {
  std::string name;
  ElemType type = ElemType::F32;
  std::vector<std::uint8_t> bytes;

  std::size_t count() const { return bytes.size() / elem_size(type); }
};

// The initial contents of a buffer argument. Throws ktune::Error (bad input)
// for a File fill that cannot be read or has the wrong size. Every element
// depends on its index alone (fill_element.inc), so large buffers are filled
// on several threads, and the device fill (fill_device.h) gives the same bytes.
std::vector<std::uint8_t> fill_host(const ArgSpec& arg);
// A Random fill's seed (its own, else derived from the argument's name) and
// its range [lo, hi) (its own bounds, else the defaults of Fill).
std::uint64_t random_seed(const ArgSpec& arg);
std::pair<double, double> random_range(const ArgSpec& arg);

// The scalar's bytes as the kernel receives them (elem_size(type) bytes).
std::vector<std::uint8_t> scalar_bytes(const ArgSpec& arg);

// Element i of raw data as a double (half and bf16 decoded exactly).
double element_value(ElemType type, const std::uint8_t* data, std::size_t i);
// Encodes v as one element (round to nearest even for half/bf16, saturating ints).
void store_element(ElemType type, double v, std::uint8_t* out);

std::uint16_t float_to_half(float f);
float half_to_float(std::uint16_t h);
std::uint16_t float_to_bf16(float f);
float bf16_to_float(std::uint16_t h);

// A buffer in device memory, tagged with what it is; does not own the memory.
struct DeviceBufferView {
  std::string name;
  ElemType type = ElemType::F32;
  std::uint64_t count = 0;  // elements
  CUdeviceptr ptr = 0;
};

// The device side of an argument list: buffers, their initial data, and the
// kernel parameter array. Lives in the worker; one per distinct argument list.
class DeviceFiller;

class ArgumentSet {
 public:
  // filler: fills on the device the buffers fills_on_device() accepts
  // (fill_device.h); null, or for the others, fill_host and an upload.
  ArgumentSet(const CudaApi& api, std::vector<ArgSpec> specs, DeviceFiller* filler = nullptr);

  // Poison outputs, restore read-write buffers: the state a verified run needs.
  // Queued on the legacy default stream, which every launch on a blocking
  // stream (the Measurer's) waits for; failures may surface at that launch.
  void prepare_verified_run();
  // cuLaunchKernel's kernelParams (Constant arguments are not among them);
  // valid while this object lives.
  void** kernel_params() { return params_.data(); }
  // Copies each Constant argument into the module's __constant__ array of its
  // name. "" when done; else why this module cannot take them (no such
  // symbol, or a symbol smaller than the data), and nothing is copied.
  std::string upload_constants(const Module& module) const;
  // The current contents of every output buffer, in argument order.
  std::vector<HostBuffer> read_outputs() const;
  // The current contents of every buffer argument (outputs or not), in argument order.
  std::vector<HostBuffer> read_buffers() const;
  // Every output buffer on the device, in argument order; valid while this lives.
  const std::vector<DeviceBufferView>& device_outputs() const { return outputs_; }
  const std::vector<ArgSpec>& specs() const { return specs_; }

 private:
  // The TensorMap argument `a`'s value, over its buffer's device memory.
  void encode_map(const ArgSpec& a, CUtensorMap& out) const;

  const CudaApi& api_;
  std::vector<ArgSpec> specs_;
  std::vector<DeviceMemory> memory_;
  // Read-write outputs' initial contents: on the device (pristine_), or on the
  // host (initial_) where the device had no room for a second copy.
  std::vector<DeviceMemory> pristine_;
  std::vector<std::vector<std::uint8_t>> initial_;
  std::vector<DeviceBufferView> outputs_;
  std::vector<std::uint64_t> storage_;  // 8-byte slots: device pointers and scalar bytes
  std::vector<CUtensorMap> maps_;       // TensorMap arguments' values (reserved: stable addresses)
  std::vector<void*> params_;
  std::vector<std::pair<std::string, std::vector<std::uint8_t>>> constants_;  // name, bytes
};

}  // namespace ktune::gpu
