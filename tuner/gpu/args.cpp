#include "tuner/gpu/args.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <utility>

namespace ktune::gpu {
namespace {


// splitmix64: tiny, fast and identical everywhere (std distributions are not).
std::uint64_t next_random(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint64_t name_seed(const std::string& name) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

template <class T>
void store_int(double v, std::uint8_t* out) {
  double lo = static_cast<double>(std::numeric_limits<T>::min());
  double hi = static_cast<double>(std::numeric_limits<T>::max());
  T t = std::isnan(v) ? T(0) : v <= lo ? std::numeric_limits<T>::min()
                              : v >= hi ? std::numeric_limits<T>::max() : static_cast<T>(v);
  std::memcpy(out, &t, sizeof t);
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

}  // namespace

std::uint16_t float_to_half(float f) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  std::uint32_t sign = (x >> 16) & 0x8000u;
  std::uint32_t absx = x & 0x7FFFFFFFu;
  if (absx > 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7E00u);  // NaN
  if (absx >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // overflow -> inf
  if (absx < 0x38800000u) {  // subnormal half (or zero): scale into 2^-24 units
    float a = std::bit_cast<float>(absx);
    auto m = static_cast<std::uint32_t>(std::nearbyint(a * 16777216.0f));
    return static_cast<std::uint16_t>(sign | m);
  }
  std::uint32_t mant = absx & 0x7FFFFFu;
  std::uint32_t exp = (absx >> 23) - 112;
  std::uint32_t h = (exp << 10) | (mant >> 13);
  std::uint32_t rest = mant & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // nearest even; carries into exp
  return static_cast<std::uint16_t>(sign | h);
}

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

std::uint16_t float_to_bf16(float f) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  x += 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

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
  switch (t) {
    case ElemType::F16: { auto h = float_to_half(static_cast<float>(v)); std::memcpy(out, &h, 2); return; }
    case ElemType::BF16: { auto h = float_to_bf16(static_cast<float>(v)); std::memcpy(out, &h, 2); return; }
    case ElemType::F32: { auto f = static_cast<float>(v); std::memcpy(out, &f, 4); return; }
    case ElemType::F64: std::memcpy(out, &v, 8); return;
    case ElemType::I8: return store_int<std::int8_t>(v, out);
    case ElemType::I16: return store_int<std::int16_t>(v, out);
    case ElemType::I32: return store_int<std::int32_t>(v, out);
    case ElemType::I64: return store_int<std::int64_t>(v, out);
    case ElemType::U8: return store_int<std::uint8_t>(v, out);
    case ElemType::U16: return store_int<std::uint16_t>(v, out);
    case ElemType::U32: return store_int<std::uint32_t>(v, out);
    case ElemType::U64: return store_int<std::uint64_t>(v, out);
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

std::vector<std::uint8_t> fill_host(const ArgSpec& arg) {
  const std::size_t n = arg.count, size = elem_size(arg.type);
  if (arg.fill.kind == FillKind::File) return read_file(arg, n * size);
  std::vector<std::uint8_t> data(n * size, 0);
  const Fill& f = arg.fill;
  if (f.kind == FillKind::Zeros) return data;
  std::uint8_t* out = data.data();
  if (f.kind == FillKind::Constant) {
    for (std::size_t i = 0; i < n; ++i) store_element(arg.type, f.value, out + i * size);
  } else if (f.kind == FillKind::Sequence) {
    for (std::size_t i = 0; i < n; ++i)
      store_element(arg.type, f.start + static_cast<double>(i) * f.step, out + i * size);
  } else {
    std::uint64_t state = f.seed ? *f.seed : name_seed(arg.name);
    const bool fl = is_float(arg.type);
    const double lo = f.lo.value_or(0.0), hi = f.hi.value_or(fl ? 1.0 : 100.0);
    for (std::size_t i = 0; i < n; ++i) {
      double u = static_cast<double>(next_random(state) >> 11) * 0x1.0p-53;
      double v = lo + u * (hi - lo);
      store_element(arg.type, fl ? v : std::floor(v), out + i * size);
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

ArgumentSet::ArgumentSet(const CudaApi& api, std::vector<ArgSpec> specs)
    : api_(api), specs_(std::move(specs)) {
  const std::size_t n = specs_.size();
  memory_.resize(n);
  pristine_.resize(n);
  initial_.resize(n);
  storage_.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const ArgSpec& a = specs_[i];
    if (a.kind == ArgKind::Constant) {
      constants_.emplace_back(a.name, fill_host(a));
      continue;
    }
    params_.push_back(&storage_[i]);
    if (a.kind == ArgKind::Scalar) {
      auto bytes = scalar_bytes(a);
      std::memcpy(&storage_[i], bytes.data(), bytes.size());
      continue;
    }
    std::vector<std::uint8_t> data = fill_host(a);
    memory_[i] = DeviceMemory(api_, data.size());
    if (!data.empty())
      check(api_, api_.cuMemcpyHtoD(memory_[i].ptr(), data.data(), data.size()),
            "cuMemcpyHtoD(argument '" + a.name + "')");
    CUdeviceptr p = memory_[i].ptr();
    std::memcpy(&storage_[i], &p, sizeof p);
    if (!a.output) continue;
    outputs_.push_back({a.name, a.type, a.count, p});
    // Pure outputs are poisoned before use: their initial data is not needed.
    if (!a.read_write || data.empty()) continue;
    try {
      pristine_[i] = DeviceMemory(api_, data.size());
      check(api_, api_.cuMemcpyDtoDAsync(pristine_[i].ptr(), p, data.size(), nullptr),
            "cuMemcpyDtoDAsync(keeping '" + a.name + "')");
    } catch (const CudaError& e) {
      // No room for a second device copy: restore from the host (a slower upload per run).
      if (e.code() != CUDA_ERROR_OUT_OF_MEMORY) throw;
      pristine_[i] = DeviceMemory();
      initial_[i] = std::move(data);
    }
  }
  // Pageable uploads may still be in flight when cuMemcpyHtoD returns.
  check(api_, api_.cuCtxSynchronize(), "uploading arguments");
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

}  // namespace ktune::gpu
