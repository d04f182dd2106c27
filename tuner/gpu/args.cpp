#include "tuner/gpu/args.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <thread>
#include <utility>

#include "tuner/gpu/fill_device.h"
#include "tuner/gpu/fill_element.h"

namespace ktune::gpu {
namespace {

// Threads of one host fill, at most.
constexpr std::size_t kMaxFillThreads = 16;

std::uint64_t name_seed(const std::string& name) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

template <class T>
double load(const std::uint8_t* p) {
  T t;
  std::memcpy(&t, p, sizeof t);
  return static_cast<double>(t);
}

std::vector<std::uint8_t> read_file(const ArgSpec& arg, std::size_t bytes) {
  std::ifstream in(arg.fill.path, std::ios::binary | std::ios::ate);
  if (!in) throw Error::bad_input("argument '" + arg.name + "': cannot read " + arg.fill.path);
  auto size = static_cast<std::size_t>(in.tellg());
  if (size != bytes)
    throw Error::bad_input("argument '" + arg.name + "': " + arg.fill.path + " has " +
                           std::to_string(size) + " bytes, expected " + std::to_string(bytes));
  std::vector<std::uint8_t> data(bytes);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(bytes));
  return data;
}

// Elements [begin, end) from encode(i), each stored as T (its type's width).
template <class T, class Encode>
void encode_range(std::size_t begin, std::size_t end, std::uint8_t* out, const Encode& encode) {
  for (std::size_t i = begin; i < end; ++i) {
    const T bits = static_cast<T>(encode(i));
    std::memcpy(out + i * sizeof(T), &bits, sizeof(T));
  }
}

// n elements from encode(i) (bits in the low bytes): every element depends on
// its index alone, so large buffers are split over threads by index ranges.
template <class Encode>
void encode_in_ranges(ElemType type, std::size_t n, std::uint8_t* out, const Encode& encode) {
  const std::size_t size = elem_size(type);
  auto range = [&](std::size_t begin, std::size_t end) {
    switch (size) {
      case 1: return encode_range<std::uint8_t>(begin, end, out, encode);
      case 2: return encode_range<std::uint16_t>(begin, end, out, encode);
      case 4: return encode_range<std::uint32_t>(begin, end, out, encode);
      default: return encode_range<std::uint64_t>(begin, end, out, encode);
    }
  };
  // Below a few MiB a thread costs more than it saves.
  constexpr std::size_t kBytesPerThread = std::size_t{4} << 20;
  const std::size_t wanted = std::min<std::size_t>(n * size / kBytesPerThread, kMaxFillThreads);
  const std::size_t threads = std::max<std::size_t>(1, std::min<std::size_t>(wanted, std::thread::hardware_concurrency()));
  const std::size_t chunk = (n + threads - 1) / threads;
  {
    std::vector<std::jthread> helpers;  // joined when the block ends, exceptions included
    for (std::size_t t = 1; t < threads; ++t)
      helpers.emplace_back(range, std::min(n, t * chunk), std::min(n, (t + 1) * chunk));
    range(0, std::min(n, chunk));
  }
}

}  // namespace

std::uint16_t float_to_half(float f) { return static_cast<std::uint16_t>(fill::kt_half_bits(f)); }

float half_to_float(std::uint16_t h) {
  std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1Fu;
  std::uint32_t mant = h & 0x3FFu;
  if (exp == 0) {
    float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7F800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

std::uint16_t float_to_bf16(float f) { return static_cast<std::uint16_t>(fill::kt_bf16_bits(f)); }

float bf16_to_float(std::uint16_t h) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
}

double element_value(ElemType t, const std::uint8_t* data, std::size_t i) {
  const std::uint8_t* p = data + i * elem_size(t);
  switch (t) {
    case ElemType::F16: { std::uint16_t h; std::memcpy(&h, p, 2); return half_to_float(h); }
    case ElemType::BF16: { std::uint16_t h; std::memcpy(&h, p, 2); return bf16_to_float(h); }
    case ElemType::F32: return load<float>(p);
    case ElemType::F64: return load<double>(p);
    case ElemType::I8: return load<std::int8_t>(p);
    case ElemType::I16: return load<std::int16_t>(p);
    case ElemType::I32: return load<std::int32_t>(p);
    case ElemType::I64: return load<std::int64_t>(p);
    case ElemType::U8: return load<std::uint8_t>(p);
    case ElemType::U16: return load<std::uint16_t>(p);
    case ElemType::U32: return load<std::uint32_t>(p);
    case ElemType::U64: return load<std::uint64_t>(p);
  }
  return 0;
}

void store_element(ElemType t, double v, std::uint8_t* out) {
  const std::uint64_t bits = fill::kt_encode(static_cast<int>(t), v);
  switch (elem_size(t)) {  // stored at the element's own width, as a value of its type
    case 1: { auto b = static_cast<std::uint8_t>(bits); std::memcpy(out, &b, 1); return; }
    case 2: { auto b = static_cast<std::uint16_t>(bits); std::memcpy(out, &b, 2); return; }
    case 4: { auto b = static_cast<std::uint32_t>(bits); std::memcpy(out, &b, 4); return; }
    default: std::memcpy(out, &bits, 8); return;
  }
}

ArgSpec ArgSpec::buffer(std::string name, ElemType type, std::uint64_t count, Fill fill,
                        bool output) {
  ArgSpec a;
  a.name = std::move(name);
  a.kind = ArgKind::Buffer;
  a.type = type;
  a.count = count;
  a.fill = std::move(fill);
  a.output = output;
  return a;
}

ArgSpec ArgSpec::constant(std::string name, ElemType type, std::uint64_t count, Fill fill) {
  ArgSpec a = buffer(std::move(name), type, count, std::move(fill), false);
  a.kind = ArgKind::Constant;
  return a;
}

ArgSpec ArgSpec::tensor_map(std::string name, ElemType type, MapLayout map) {
  ArgSpec a;
  a.name = std::move(name);
  a.kind = ArgKind::TensorMap;
  a.type = type;
  a.map = std::move(map);
  return a;
}

ArgSpec ArgSpec::scalar(std::string name, ElemType type, double value) {
  ArgSpec a;
  a.name = std::move(name);
  a.kind = ArgKind::Scalar;
  a.type = type;
  a.value = value;
  a.int_value = static_cast<std::int64_t>(value);
  return a;
}

ArgSpec ArgSpec::scalar_int(std::string name, ElemType type, std::int64_t value) {
  ArgSpec a = scalar(std::move(name), type, static_cast<double>(value));
  a.int_value = value;
  return a;
}

std::uint64_t random_seed(const ArgSpec& arg) { return arg.fill.seed ? *arg.fill.seed : name_seed(arg.name); }

std::pair<double, double> random_range(const ArgSpec& arg) {
  return {arg.fill.lo.value_or(0.0), arg.fill.hi.value_or(is_float(arg.type) ? 1.0 : 100.0)};
}

std::vector<std::uint8_t> fill_host(const ArgSpec& arg) {
  const std::size_t n = arg.count, size = elem_size(arg.type);
  if (arg.fill.kind == FillKind::File) return read_file(arg, n * size);
  std::vector<std::uint8_t> data(n * size, 0);
  const Fill& f = arg.fill;
  std::uint8_t* out = data.data();
  const int type = static_cast<int>(arg.type);
  switch (f.kind) {
    case FillKind::Zeros:
    case FillKind::File:
      break;
    case FillKind::Constant: {
      std::uint8_t one[8];
      store_element(arg.type, f.value, one);
      for (std::size_t i = 0; i < n; ++i) std::memcpy(out + i * size, one, size);
      break;
    }
    case FillKind::Sequence:
      encode_in_ranges(arg.type, n, out, [&f, type](std::size_t i) {
        return fill::kt_encode(type, fill::kt_sequence_value(f.start, f.step, i));
      });
      break;
    case FillKind::Normal: {
      const std::uint64_t seed = random_seed(arg);
      encode_in_ranges(arg.type, n, out, [&f, seed, type](std::size_t i) {
        return fill::kt_encode(type, fill::kt_normal_value(seed, i, f.mean, f.stddev));
      });
      break;
    }
    case FillKind::Random: {
      const std::uint64_t seed = random_seed(arg);
      const auto [lo, hi] = random_range(arg);
      const bool integer = !is_float(arg.type);
      encode_in_ranges(arg.type, n, out, [=](std::size_t i) {
        return fill::kt_encode(type, fill::kt_random_value(seed, i, lo, hi, integer));
      });
      break;
    }
  }
  return data;
}

std::vector<std::uint8_t> scalar_bytes(const ArgSpec& arg) {
  std::vector<std::uint8_t> out(elem_size(arg.type));
  if (is_float(arg.type)) {
    store_element(arg.type, arg.value, out.data());
  } else {
    // Copy the low bytes of the exact integer (two's complement, little-endian),
    // so 64-bit values past 2^53 stay exact.
    std::uint64_t bits = static_cast<std::uint64_t>(arg.int_value);
    std::memcpy(out.data(), &bits, out.size());
  }
  return out;
}

ArgumentSet::ArgumentSet(const CudaApi& api, std::vector<ArgSpec> specs, DeviceFiller* filler)
    : api_(api), specs_(std::move(specs)) {
  const std::size_t n = specs_.size();
  memory_.resize(n);
  pristine_.resize(n);
  initial_.resize(n);
  storage_.assign(n, 0);
  maps_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const ArgSpec& a = specs_[i];
    if (a.kind == ArgKind::Constant) {
      constants_.emplace_back(a.name, fill_host(a));
      continue;
    }
    if (a.kind == ArgKind::TensorMap) {  // encoded below, once its buffer is allocated
      maps_.emplace_back();
      params_.push_back(&maps_.back());
      continue;
    }
    params_.push_back(&storage_[i]);
    if (a.kind == ArgKind::Scalar) {
      auto bytes = scalar_bytes(a);
      std::memcpy(&storage_[i], bytes.data(), bytes.size());
      continue;
    }
    const std::size_t bytes = a.count * elem_size(a.type);
    memory_[i] = DeviceMemory(api_, bytes);
    const CUdeviceptr p = memory_[i].ptr();
    // On the device, queued; else made here and uploaded (kept for a restore below).
    std::vector<std::uint8_t> data;
    if (filler && fills_on_device(a)) {
      filler->fill(a, p);
    } else {
      data = fill_host(a);
      if (!data.empty())
        check(api_, api_.cuMemcpyHtoD(p, data.data(), data.size()), "cuMemcpyHtoD(argument '" + a.name + "')");
    }
    std::memcpy(&storage_[i], &p, sizeof p);
    if (!a.output) continue;
    outputs_.push_back({a.name, a.type, a.count, p});
    // Pure outputs are poisoned before use: their initial data is not needed.
    if (!a.read_write || bytes == 0) continue;
    try {
      pristine_[i] = DeviceMemory(api_, bytes);
      check(api_, api_.cuMemcpyDtoDAsync(pristine_[i].ptr(), p, bytes, nullptr),
            "cuMemcpyDtoDAsync(keeping '" + a.name + "')");
    } catch (const CudaError& e) {
      // No room for a second device copy: restore from the host (a slower upload per run).
      if (e.code() != CUDA_ERROR_OUT_OF_MEMORY) throw;
      pristine_[i] = DeviceMemory();
      if (data.empty()) {  // filled on the device: read back once (waits for the fill)
        data.resize(bytes);
        check(api_, api_.cuMemcpyDtoH(data.data(), p, bytes), "cuMemcpyDtoH(keeping '" + a.name + "')");
      }
      initial_[i] = std::move(data);
    }
  }
  std::size_t m = 0;
  for (const ArgSpec& a : specs_)
    if (a.kind == ArgKind::TensorMap) encode_map(a, maps_[m++]);
  // Pageable uploads and device fills may still be in flight here.
  check(api_, api_.cuCtxSynchronize(), "filling arguments");
}

namespace {

CUtensorMapDataType map_type(ElemType t) {
  switch (t) {
    case ElemType::F16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case ElemType::BF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case ElemType::F32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case ElemType::F64: return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
    case ElemType::I8:
    case ElemType::U8: return CU_TENSOR_MAP_DATA_TYPE_UINT8;  // copied as bits
    case ElemType::I16:
    case ElemType::U16: return CU_TENSOR_MAP_DATA_TYPE_UINT16;
    case ElemType::I32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case ElemType::U32: return CU_TENSOR_MAP_DATA_TYPE_UINT32;
    case ElemType::I64: return CU_TENSOR_MAP_DATA_TYPE_INT64;
    case ElemType::U64: return CU_TENSOR_MAP_DATA_TYPE_UINT64;
  }
  return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

CUtensorMapSwizzle map_swizzle(std::uint32_t bytes) {
  switch (bytes) {
    case 32: return CU_TENSOR_MAP_SWIZZLE_32B;
    case 64: return CU_TENSOR_MAP_SWIZZLE_64B;
    case 128: return CU_TENSOR_MAP_SWIZZLE_128B;
    default: return CU_TENSOR_MAP_SWIZZLE_NONE;
  }
}

}  // namespace

void ArgumentSet::encode_map(const ArgSpec& a, CUtensorMap& out) const {
  const MapLayout& m = a.map;
  const std::size_t rank = m.dims.size();
  if (m.of >= specs_.size() || specs_[m.of].kind != ArgKind::Buffer || rank == 0 || rank > 5 ||
      m.box.size() != rank || m.stride_bytes.size() + 1 != rank)
    throw Error::bad_input("tensor map '" + a.name + "': no buffer or an inconsistent layout");
  const std::vector<cuuint32_t> element_strides(rank, 1);
  check(api_,
        api_.cuTensorMapEncodeTiled(&out, map_type(a.type), cuuint32_t(rank), reinterpret_cast<void*>(memory_[m.of].ptr()),
                                    m.dims.data(), m.stride_bytes.data(), m.box.data(), element_strides.data(),
                                    CU_TENSOR_MAP_INTERLEAVE_NONE, map_swizzle(m.swizzle),
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        "cuTensorMapEncodeTiled('" + a.name + "' of '" + specs_[m.of].name + "')");
}

std::string ArgumentSet::upload_constants(const Module& module) const {
  std::vector<Module::Global> targets;
  for (const auto& [name, bytes] : constants_) {
    const std::optional<Module::Global> g = module.global(name);
    if (!g) return "constant memory: the kernel's module has no __constant__ array '" + name + "'";
    if (g->bytes < bytes.size())
      return "constant memory: '" + name + "' holds " + std::to_string(g->bytes) + " bytes, the argument " +
             std::to_string(bytes.size());
    targets.push_back(*g);
  }
  for (std::size_t i = 0; i < constants_.size(); ++i)
    check(api_, api_.cuMemcpyHtoD(targets[i].ptr, constants_[i].second.data(), constants_[i].second.size()),
          "cuMemcpyHtoD(__constant__ '" + constants_[i].first + "')");
  return "";
}

void ArgumentSet::prepare_verified_run() {
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const ArgSpec& a = specs_[i];
    if (a.kind != ArgKind::Buffer || !a.output) continue;
    const DeviceMemory& m = memory_[i];
    if (!a.read_write) {
      // 0xFF bytes: whole words first (the fast memset), then a ragged tail.
      const std::size_t words = m.size() / 4, tail = m.size() % 4;
      if (words > 0)
        check(api_, api_.cuMemsetD32Async(m.ptr(), 0xFFFFFFFFu, words, nullptr),
              "cuMemsetD32Async(poisoning '" + a.name + "')");
      if (tail > 0)
        check(api_, api_.cuMemsetD8Async(m.ptr() + words * 4, 0xFF, tail, nullptr),
              "cuMemsetD8Async(poisoning '" + a.name + "')");
    } else if (pristine_[i].ptr() != 0) {
      check(api_, api_.cuMemcpyDtoDAsync(m.ptr(), pristine_[i].ptr(), m.size(), nullptr),
            "cuMemcpyDtoDAsync(restoring '" + a.name + "')");
    } else if (!initial_[i].empty()) {
      check(api_, api_.cuMemcpyHtoD(m.ptr(), initial_[i].data(), initial_[i].size()),
            "cuMemcpyHtoD(restoring '" + a.name + "')");
    }
  }
}

std::vector<HostBuffer> ArgumentSet::read_outputs() const {
  std::vector<HostBuffer> out;
  for (const DeviceBufferView& v : outputs_) {
    HostBuffer b{v.name, v.type, std::vector<std::uint8_t>(v.count * elem_size(v.type))};
    if (!b.bytes.empty())
      check(api_, api_.cuMemcpyDtoH(b.bytes.data(), v.ptr, b.bytes.size()),
            "cuMemcpyDtoH(output '" + v.name + "')");
    out.push_back(std::move(b));
  }
  return out;
}

std::vector<HostBuffer> ArgumentSet::read_buffers() const {
  std::vector<HostBuffer> out;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const ArgSpec& a = specs_[i];
    if (a.kind != ArgKind::Buffer) continue;
    HostBuffer b{a.name, a.type, std::vector<std::uint8_t>(a.count * elem_size(a.type))};
    if (!b.bytes.empty())
      check(api_, api_.cuMemcpyDtoH(b.bytes.data(), memory_[i].ptr(), b.bytes.size()),
            "cuMemcpyDtoH(argument '" + a.name + "')");
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace ktune::gpu
