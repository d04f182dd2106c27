#include "tuner/gpu/fill_device.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tuner/base/elem_type.h"
#include "tuner/gpu/fill_element.h"
#include "tuner/gpu/fill_element_text.h"

namespace ktune::gpu {
namespace {

// What fill_element.inc asks of its includer, on the device. kt_rint is
// rintf (to nearest even, as the host's nearbyint); float subnormals are
// kept (NVRTC's default -ftz=false).
constexpr const char* kPrelude = R"(
typedef unsigned char kt_u8;
typedef unsigned short kt_u16;
typedef unsigned int kt_u32;
typedef unsigned long long kt_u64;
typedef long long kt_i64;
#define KT_FN __device__ __forceinline__
KT_FN kt_u32 kt_float_bits(float f) { return __float_as_uint(f); }
KT_FN float kt_bits_float(kt_u32 b) { return __uint_as_float(b); }
KT_FN kt_u64 kt_double_bits(double d) { return (kt_u64)__double_as_longlong(d); }
KT_FN double kt_floor(double d) { return floor(d); }
KT_FN float kt_rint(float f) { return rintf(f); }
KT_FN double kt_sqrt(double d) { return __dsqrt_rn(d); }
)";

// The kernel: a grid-stride pass writing each element as its type's own
// width. The type is a template argument, so kt_encode's switch folds away.
constexpr const char* kKernel = R"(
template <int T> struct KtBits;
#define KT_BITS(T, B) template <> struct KtBits<T> { typedef B type; };
KT_BITS(KT_F16, kt_u16) KT_BITS(KT_BF16, kt_u16) KT_BITS(KT_F32, kt_u32) KT_BITS(KT_F64, kt_u64)
KT_BITS(KT_I8, kt_u8) KT_BITS(KT_I16, kt_u16) KT_BITS(KT_I32, kt_u32) KT_BITS(KT_I64, kt_u64)
KT_BITS(KT_U8, kt_u8) KT_BITS(KT_U16, kt_u16) KT_BITS(KT_U32, kt_u32) KT_BITS(KT_U64, kt_u64)

template <int T>
__device__ void kt_fill(int kind, void* out_p, kt_u64 n, kt_u64 seed, double a, double b, bool integer,
                        kt_u64 pattern) {
  typedef typename KtBits<T>::type Bits;
  Bits* __restrict__ out = (Bits*)out_p;
  const kt_u64 stride = (kt_u64)gridDim.x * blockDim.x;
  const kt_u64 first = (kt_u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (kind == KT_FILL_RANDOM) {
    for (kt_u64 i = first; i < n; i += stride) out[i] = (Bits)kt_encode(T, kt_random_value(seed, i, a, b, integer));
  } else if (kind == KT_FILL_NORMAL) {
    for (kt_u64 i = first; i < n; i += stride) out[i] = (Bits)kt_encode(T, kt_normal_value(seed, i, a, b));
  } else if (kind == KT_FILL_SEQUENCE) {
    for (kt_u64 i = first; i < n; i += stride) out[i] = (Bits)kt_encode(T, kt_sequence_value(a, b, i));
  } else {
    for (kt_u64 i = first; i < n; i += stride) out[i] = (Bits)pattern;
  }
}

extern "C" __global__ void ktune_fill(int type, int kind, void* out, kt_u64 n, kt_u64 seed, double a, double b,
                                      int integer, kt_u64 pattern) {
  switch (type) {
    case KT_F16: kt_fill<KT_F16>(kind, out, n, seed, a, b, integer != 0, pattern); break;
    case KT_BF16: kt_fill<KT_BF16>(kind, out, n, seed, a, b, integer != 0, pattern); break;
    case KT_F32: kt_fill<KT_F32>(kind, out, n, seed, a, b, integer != 0, pattern); break;
    case KT_F64: kt_fill<KT_F64>(kind, out, n, seed, a, b, integer != 0, pattern); break;
    case KT_I8: kt_fill<KT_I8>(kind, out, n, seed, a, b, integer != 0, pattern); break;
    case KT_I16: kt_fill<KT_I16>(kind, out, n, seed, a, b, integer != 0, pattern); break;
    case KT_I32: kt_fill<KT_I32>(kind, out, n, seed, a, b, integer != 0, pattern); break;
    case KT_I64: kt_fill<KT_I64>(kind, out, n, seed, a, b, integer != 0, pattern); break;
    case KT_U8: kt_fill<KT_U8>(kind, out, n, seed, a, b, integer != 0, pattern); break;
    case KT_U16: kt_fill<KT_U16>(kind, out, n, seed, a, b, integer != 0, pattern); break;
    case KT_U32: kt_fill<KT_U32>(kind, out, n, seed, a, b, integer != 0, pattern); break;
    case KT_U64: kt_fill<KT_U64>(kind, out, n, seed, a, b, integer != 0, pattern); break;
  }
}
)";

// The kernel's `kind`: which generator writes the elements.
enum KernelKind : int { kRandom = 0, kSequence = 1, kPattern = 2, kNormal = 3 };

}  // namespace

CompileRequest fill_kernel_request(const Arch& arch) {
  CompileRequest r;
  r.source = kPrelude;
  r.source.append(kFillElementText).append(kKernel);
  r.kernel_name = kFillKernel;
  r.arch = arch;
  for (const ElemTypeMacro& m : kElemTypeMacros)
    r.defines.emplace_back(m.name, std::to_string(static_cast<int>(m.type)));
  r.defines.emplace_back("KT_FILL_RANDOM", std::to_string(kRandom));
  r.defines.emplace_back("KT_FILL_SEQUENCE", std::to_string(kSequence));
  r.defines.emplace_back("KT_FILL_NORMAL", std::to_string(kNormal));
  // lo + u * (hi - lo) and start + i * step round twice on the host; an FMA
  // would round once and change the last bit.
  r.options = {"-fmad=false"};
  return r;
}

bool device_fillable(const ArgSpec& arg) {
  if (arg.kind != ArgKind::Buffer) return false;
  const Fill& f = arg.fill;
  switch (f.kind) {
    case FillKind::Zeros:
    case FillKind::Constant:
      return true;
    case FillKind::Sequence:
      return std::isfinite(f.start) && std::isfinite(f.step);
    case FillKind::Random: {
      const auto [lo, hi] = random_range(arg);
      return std::isfinite(lo) && std::isfinite(hi) && std::isfinite(hi - lo);
    }
    case FillKind::Normal:
      return std::isfinite(f.mean) && std::isfinite(f.stddev);
    case FillKind::File:
      return false;
  }
  return false;
}

bool fills_on_device(const ArgSpec& arg) {
  return device_fillable(arg) && arg.count * elem_size(arg.type) >= kDeviceFillMinBytes;
}

std::uint32_t fill_blocks(std::uint64_t n, std::uint64_t resident) {
  const std::uint64_t needed = std::max<std::uint64_t>(1, (n + kFillThreads - 1) / kFillThreads);
  return static_cast<std::uint32_t>(std::min(needed, resident > 0 ? resident : 1024));
}

DeviceFiller::DeviceFiller(const CudaApi& api, const DeviceProperties& device) : api_(api) {
  const Arch arch(10 * device.cc_major + device.cc_minor);
  const CompileResult c = Compiler().compile(fill_kernel_request(arch));
  if (!c.ok) throw Error::failed("the fill kernel does not compile for " + arch.name() + ": " + c.error_line());
  module_.emplace(api_, std::vector<std::uint8_t>(c.cubin.begin(), c.cubin.end()));
  fn_ = module_->function(kFillKernel);
  int per_sm = 0;
  check(api_, api_.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn_, kFillThreads, 0),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor(ktune_fill)");
  resident_ = static_cast<std::uint64_t>(std::max(per_sm, 1)) * static_cast<std::uint64_t>(std::max(device.sm_count, 1));
}

void DeviceFiller::fill(const ArgSpec& arg, CUdeviceptr ptr) const {
  if (!device_fillable(arg))
    throw Error::failed("argument '" + arg.name + "': its fill cannot be made on the device");
  std::uint64_t n = arg.count;
  if (n == 0) return;
  const Fill& f = arg.fill;
  if (f.kind == FillKind::Zeros) {
    check(api_, api_.cuMemsetD8Async(ptr, 0, n * elem_size(arg.type), nullptr),
          "cuMemsetD8Async(filling '" + arg.name + "')");
    return;
  }
  int type = static_cast<int>(arg.type);
  int kind = kPattern;
  int integer = is_float(arg.type) ? 0 : 1;
  std::uint64_t seed = 0, pattern = 0;
  double a = 0, b = 0;
  if (f.kind == FillKind::Constant) {
    pattern = fill::kt_encode(type, f.value);  // store_element's bits: NaN payloads included
  } else if (f.kind == FillKind::Sequence) {
    kind = kSequence;
    a = f.start;
    b = f.step;
  } else if (f.kind == FillKind::Normal) {
    kind = kNormal;
    seed = random_seed(arg);
    a = f.mean;
    b = f.stddev;
  } else {
    kind = kRandom;
    seed = random_seed(arg);
    std::tie(a, b) = random_range(arg);
  }
  void* params[] = {&type, &kind, &ptr, &n, &seed, &a, &b, &integer, &pattern};
  check(api_,
        api_.cuLaunchKernel(fn_, fill_blocks(n, resident_), 1, 1, kFillThreads, 1, 1, 0, nullptr, params, nullptr),
        "cuLaunchKernel(filling '" + arg.name + "')");
}

}  // namespace ktune::gpu
