#include "tuner/gpu/verify_device.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "tuner/base/elem_type.h"

namespace ktune::gpu {
namespace {

// The device twin of verify.cpp's scoring. Every step is the host's own: the
// same half/bf16 decoding, conversions to double that round to nearest, and
// double arithmetic with no FMA contraction (the request passes -fmad=false),
// so scores agree to the bit and the "worst" element is the same one. The
// element type codes (KT_F16, ...) come from ElemType as -D defines.
constexpr const char* kSource = R"(
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

#define KT_INF __longlong_as_double(0x7ff0000000000000LL)
#define KT_DBL_MAX __longlong_as_double(0x7fefffffffffffffLL)
#define KT_NONE 0xffffffffffffffffULL
// Loads in flight per thread before any is scored: hides memory latency.
#define KT_BATCH 4

// half_to_float in args.cpp, step for step.
__device__ __forceinline__ float kt_half(u32 h) {
  u32 sign = (h & 0x8000u) << 16;
  u32 exp = (h >> 10) & 0x1Fu;
  u32 mant = h & 0x3FFu;
  if (exp == 0) {
    float v = (float)mant * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return __uint_as_float(sign | 0x7F800000u | (mant << 13));
  return __uint_as_float(sign | ((exp + 112) << 23) | (mant << 13));
}

// Per element type: its bits, whether it is an integer, NaN on the bits
// (nan_bits in verify.cpp), and its value as a double (element_value).
template <int T> struct Elem;
template <> struct Elem<KT_F16> {
  typedef u16 Bits;
  static const bool integer = false;
  __device__ static bool nan(Bits b) { return (b & 0x7fffu) > 0x7c00u; }
  __device__ static double value(Bits b) { return (double)kt_half(b); }
};
template <> struct Elem<KT_BF16> {
  typedef u16 Bits;
  static const bool integer = false;
  __device__ static bool nan(Bits b) { return (b & 0x7fffu) > 0x7f80u; }
  __device__ static double value(Bits b) { return (double)__uint_as_float((u32)b << 16); }
};
template <> struct Elem<KT_F32> {
  typedef u32 Bits;
  static const bool integer = false;
  __device__ static bool nan(Bits b) { return (b & 0x7fffffffu) > 0x7f800000u; }
  __device__ static double value(Bits b) { return (double)__uint_as_float(b); }
};
template <> struct Elem<KT_F64> {
  typedef u64 Bits;
  static const bool integer = false;
  __device__ static bool nan(Bits b) { return (b & 0x7fffffffffffffffULL) > 0x7ff0000000000000ULL; }
  __device__ static double value(Bits b) { return __longlong_as_double((long long)b); }
};
#define KT_INTEGER(T, BITS, VALUE)                                  \
  template <> struct Elem<T> {                                      \
    typedef BITS Bits;                                              \
    static const bool integer = true;                               \
    __device__ static bool nan(Bits) { return false; }              \
    __device__ static double value(Bits b) { return (double)(VALUE)b; } \
  };
KT_INTEGER(KT_I8, u8, signed char)
KT_INTEGER(KT_I16, u16, short)
KT_INTEGER(KT_I32, u32, int)
KT_INTEGER(KT_I64, u64, long long)
KT_INTEGER(KT_U8, u8, u8)
KT_INTEGER(KT_U16, u16, u16)
KT_INTEGER(KT_U32, u32, u32)
KT_INTEGER(KT_U64, u64, u64)

// excess() in verify.cpp.
__device__ __forceinline__ double kt_excess(double got, double want, double atol, double rtol) {
  if (got != got || want != want) return KT_INF;
  if (fabs(got) == KT_INF || fabs(want) == KT_INF) return got == want ? 0.0 : KT_INF;
  double err = fabs(got - want);
  double allowed = atol + rtol * fabs(want);
  if (err <= allowed) return 0.0;
  return allowed > 0 ? err / allowed : KT_DBL_MAX;
}

// compare_range's score: bit-identical elements pass unless NaN; integers that
// differ but are equal as doubles (past 2^53) fail outright.
template <int T>
__device__ __forceinline__ double kt_score(typename Elem<T>::Bits got, typename Elem<T>::Bits want,
                                           double atol, double rtol) {
  typedef Elem<T> E;
  if (got == want && (E::integer || !E::nan(want))) return 0.0;
  double g = E::value(got), e = E::value(want);
  if (E::integer && g == e) return KT_DBL_MAX;
  return kt_excess(g, e, atol, rtol);
}

// Pass 1: failed elements and the highest score. A score over 1 fails and so
// does a NaN score, which (as on the host) never becomes the worst.
template <int T>
__device__ void kt_count(const void* got_p, const void* want_p, u64 n, double atol, double rtol,
                         u64* failed_out, u64* worst_out) {
  typedef typename Elem<T>::Bits Bits;
  const Bits* __restrict__ got = (const Bits*)got_p;
  const Bits* __restrict__ want = (const Bits*)want_p;
  const u64 stride = (u64)gridDim.x * blockDim.x;
  u64 failed = 0;
  double worst = 0;
  for (u64 base = (u64)blockIdx.x * blockDim.x + threadIdx.x; base < n; base += KT_BATCH * stride) {
    Bits a[KT_BATCH], b[KT_BATCH];
#pragma unroll
    for (int k = 0; k < KT_BATCH; ++k) {
      u64 i = base + k * stride;
      a[k] = i < n ? got[i] : (Bits)0;  // equal zeros past the end: they pass
      b[k] = i < n ? want[i] : (Bits)0;
    }
#pragma unroll
    for (int k = 0; k < KT_BATCH; ++k) {
      double s = kt_score<T>(a[k], b[k], atol, rtol);
      if (!(s <= 1.0)) {
        ++failed;
        if (s > worst) worst = s;
      }
    }
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    failed += __shfl_xor_sync(0xffffffffu, failed, offset);
    double other = __shfl_xor_sync(0xffffffffu, worst, offset);
    if (other > worst) worst = other;
  }
  if ((threadIdx.x & 31) == 0 && failed > 0) {
    atomicAdd(failed_out, failed);
    // Non-negative doubles order like their bit patterns.
    if (worst > 0) atomicMax(worst_out, (u64)__double_as_longlong(worst));
  }
}

// Pass 2: the lowest index whose score is the worst one. Does nothing when
// pass 1 found no failure (the usual case), so it is launched unconditionally
// and the host waits once.
template <int T>
__device__ void kt_locate(const void* got_p, const void* want_p, u64 n, double atol, double rtol,
                          const u64* failed_in, const u64* worst_in, u64* index_out) {
  typedef typename Elem<T>::Bits Bits;
  const u64 target = *worst_in;
  if (*failed_in == 0 || target == 0) return;
  const Bits* __restrict__ got = (const Bits*)got_p;
  const Bits* __restrict__ want = (const Bits*)want_p;
  const u64 stride = (u64)gridDim.x * blockDim.x;
  u64 found = KT_NONE;  // a thread's indices rise, so its first hit is its lowest
  for (u64 base = (u64)blockIdx.x * blockDim.x + threadIdx.x; base < n && found == KT_NONE;
       base += KT_BATCH * stride) {
    Bits a[KT_BATCH], b[KT_BATCH];
#pragma unroll
    for (int k = 0; k < KT_BATCH; ++k) {
      u64 i = base + k * stride;
      a[k] = i < n ? got[i] : (Bits)0;
      b[k] = i < n ? want[i] : (Bits)0;
    }
#pragma unroll
    for (int k = 0; k < KT_BATCH; ++k) {
      if (found != KT_NONE) continue;
      double s = kt_score<T>(a[k], b[k], atol, rtol);
      if ((u64)__double_as_longlong(s) == target) found = base + k * stride;
    }
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    u64 other = __shfl_xor_sync(0xffffffffu, found, offset);
    if (other < found) found = other;
  }
  if ((threadIdx.x & 31) == 0 && found != KT_NONE) atomicMin(index_out, found);
}

#define KT_DISPATCH(FN, ...)                         \
  switch (type) {                                    \
    case KT_F16: FN<KT_F16>(__VA_ARGS__); break;     \
    case KT_BF16: FN<KT_BF16>(__VA_ARGS__); break;   \
    case KT_F32: FN<KT_F32>(__VA_ARGS__); break;     \
    case KT_F64: FN<KT_F64>(__VA_ARGS__); break;     \
    case KT_I8: FN<KT_I8>(__VA_ARGS__); break;       \
    case KT_I16: FN<KT_I16>(__VA_ARGS__); break;     \
    case KT_I32: FN<KT_I32>(__VA_ARGS__); break;     \
    case KT_I64: FN<KT_I64>(__VA_ARGS__); break;     \
    case KT_U8: FN<KT_U8>(__VA_ARGS__); break;       \
    case KT_U16: FN<KT_U16>(__VA_ARGS__); break;     \
    case KT_U32: FN<KT_U32>(__VA_ARGS__); break;     \
    case KT_U64: FN<KT_U64>(__VA_ARGS__); break;     \
  }

extern "C" __global__ void ktune_verify_count(int type, const void* got, const void* want, u64 n,
                                              double atol, double rtol, u64* failed, u64* worst) {
  KT_DISPATCH(kt_count, got, want, n, atol, rtol, failed, worst)
}

extern "C" __global__ void ktune_verify_locate(int type, const void* got, const void* want, u64 n,
                                               double atol, double rtol, const u64* failed,
                                               const u64* worst, u64* index) {
  KT_DISPATCH(kt_locate, got, want, n, atol, rtol, failed, worst, index)
}
)";

}  // namespace

CompileRequest compare_kernel_request(const Arch& arch) {
  CompileRequest r;
  r.source = kSource;
  r.kernel_name = kCountKernel;
  r.arch = arch;
  // Every ElemType, each with a case in the kernels' KT_DISPATCH (a type
  // without one would compare nothing and pass).
  for (const ElemTypeMacro& m : kElemTypeMacros)
    r.defines.emplace_back(m.name, std::to_string(static_cast<int>(m.type)));
  // Without it the compiler fuses atol + rtol * |want| into an FMA, whose
  // single rounding differs from the host's at the edge of the tolerance.
  r.options = {"-fmad=false"};
  return r;
}

std::optional<std::size_t> worst_buffer(const std::vector<BufferTally>& tallies) {
  std::optional<std::size_t> best;
  double best_score = 0;
  for (std::size_t i = 0; i < tallies.size(); ++i) {
    if (tallies[i].failed == 0) continue;
    const double score = std::bit_cast<double>(tallies[i].worst_bits);
    if (score > best_score) {  // strictly: the first buffer keeps a tie
      best_score = score;
      best = i;
    }
  }
  return best;
}

std::string match_outputs(const std::vector<DeviceBufferView>& got,
                          const std::vector<DeviceBufferView>& expected,
                          std::vector<std::size_t>* match) {
  match->assign(expected.size(), 0);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const DeviceBufferView& want = expected[i];
    const DeviceBufferView* have = nullptr;
    for (std::size_t j = 0; j < got.size(); ++j) {
      if (got[j].name != want.name) continue;
      have = &got[j];
      (*match)[i] = j;
    }
    if (!have) return "no output buffer '" + want.name + "' to compare";
    if (have->type != want.type ||
        have->count * elem_size(have->type) != want.count * elem_size(want.type))
      return "output '" + want.name + "' is " + std::to_string(have->count) + " " +
             to_string(have->type) + ", expected " + std::to_string(want.count) + " " +
             to_string(want.type);
  }
  return "";
}

std::uint32_t compare_blocks(std::uint64_t n, std::uint64_t resident) {
  const std::uint64_t needed = std::max<std::uint64_t>(1, (n + kCompareThreads - 1) / kCompareThreads);
  // A wave more would leave most of the device idle while its tail runs.
  return static_cast<std::uint32_t>(std::min(needed, resident > 0 ? resident : 1024));
}

DeviceVerifier::DeviceVerifier(const CudaApi& api, const DeviceProperties& device) : api_(api) {
  const Arch arch(10 * device.cc_major + device.cc_minor);
  const CompileResult c = Compiler().compile(compare_kernel_request(arch));
  if (!c.ok)
    throw Error::failed("the verification kernels do not compile for " + arch.name() + ": " +
                        c.error_line());
  module_.emplace(api_, std::vector<std::uint8_t>(c.cubin.begin(), c.cubin.end()));
  count_ = kernel(kCountKernel, device.sm_count);
  locate_ = kernel(kLocateKernel, device.sm_count);
}

DeviceVerifier::Kernel DeviceVerifier::kernel(const char* name, int sm_count) const {
  Kernel k;
  k.fn = module_->function(name);
  int per_sm = 0;
  check(api_, api_.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k.fn, kCompareThreads, 0),
        std::string("cuOccupancyMaxActiveBlocksPerMultiprocessor(") + name + ")");
  k.resident = static_cast<std::uint64_t>(std::max(per_sm, 1)) *
               static_cast<std::uint64_t>(std::max(sm_count, 1));
  return k;
}

void DeviceVerifier::clear() {
  expected_.clear();
  memory_.clear();
  words_ = DeviceMemory();
}

void DeviceVerifier::set_expected(const std::vector<HostBuffer>& expected) {
  clear();
  try {
    for (const HostBuffer& b : expected) {
      DeviceMemory m(api_, b.bytes.size());
      if (!b.bytes.empty())
        check(api_, api_.cuMemcpyHtoD(m.ptr(), b.bytes.data(), b.bytes.size()),
              "cuMemcpyHtoD(expected '" + b.name + "')");
      expected_.push_back({b.name, b.type, b.count(), m.ptr()});
      memory_.push_back(std::move(m));
    }
    const std::size_t n = expected.size();
    words_ = DeviceMemory(api_, 3 * n * sizeof(std::uint64_t));
    host_words_.assign(3 * n, 0);
    tallies_.assign(n, {});
  } catch (...) {
    clear();
    throw;
  }
}

void DeviceVerifier::adopt(const std::vector<DeviceBufferView>& outputs) {
  clear();
  try {
    for (const DeviceBufferView& b : outputs) {
      const std::size_t bytes = b.count * elem_size(b.type);
      DeviceMemory m(api_, bytes);
      if (bytes > 0)
        check(api_, api_.cuMemcpyDtoDAsync(m.ptr(), b.ptr, bytes, nullptr),
              "cuMemcpyDtoDAsync(expected '" + b.name + "')");
      expected_.push_back({b.name, b.type, b.count, m.ptr()});
      memory_.push_back(std::move(m));
    }
    const std::size_t n = outputs.size();
    words_ = DeviceMemory(api_, 3 * n * sizeof(std::uint64_t));
    host_words_.assign(3 * n, 0);
    tallies_.assign(n, {});
    check(api_, api_.cuCtxSynchronize(), "copying the expected outputs");
  } catch (...) {
    clear();
    throw;
  }
}

void DeviceVerifier::launch(const Kernel& k, std::uint64_t elements, void** params) {
  check(api_,
        api_.cuLaunchKernel(k.fn, compare_blocks(elements, k.resident), 1, 1, kCompareThreads, 1, 1,
                            0, nullptr, params, nullptr),
        "cuLaunchKernel(verification)");
}

double DeviceVerifier::element(const DeviceBufferView& buffer, std::uint64_t index) const {
  const std::size_t size = elem_size(buffer.type);
  std::uint8_t bytes[8] = {};
  check(api_, api_.cuMemcpyDtoH(bytes, buffer.ptr + index * size, size),
        "cuMemcpyDtoH('" + buffer.name + "[" + std::to_string(index) + "]')");
  return element_value(buffer.type, bytes, 0);
}

VerifyOutcome DeviceVerifier::compare(const std::vector<DeviceBufferView>& got, const Tolerance& tol) {
  VerifyOutcome out;
  out.reason = match_outputs(got, expected_, &match_);
  if (!out.reason.empty()) {
    out.ok = false;
    return out;
  }
  const std::size_t n = expected_.size();
  if (n == 0) return out;
  const CUdeviceptr failed = words_.ptr(), worst = failed + 8 * n, index = failed + 16 * n;
  check(api_, api_.cuMemsetD8Async(failed, 0, 16 * n, nullptr), "cuMemsetD8Async(verification)");
  check(api_, api_.cuMemsetD8Async(index, 0xFF, 8 * n, nullptr), "cuMemsetD8Async(verification)");
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const DeviceBufferView& want = expected_[i];
    auto [atol, rtol] = tol.of(want.name);
    total += want.count;
    if (want.count == 0) continue;
    int type = static_cast<int>(want.type);
    CUdeviceptr g = got[match_[i]].ptr, e = want.ptr;
    CUdeviceptr f = failed + 8 * i, w = worst + 8 * i, x = index + 8 * i;
    std::uint64_t count = want.count;
    void* count_params[] = {&type, &g, &e, &count, &atol, &rtol, &f, &w};
    launch(count_, count, count_params);
    void* locate_params[] = {&type, &g, &e, &count, &atol, &rtol, &f, &w, &x};
    launch(locate_, count, locate_params);
  }
  // Synchronous on the legacy stream: waits for the kernels above.
  check(api_, api_.cuMemcpyDtoH(host_words_.data(), failed, host_words_.size() * sizeof(std::uint64_t)),
        "cuMemcpyDtoH(verification)");
  Mismatch m;
  for (std::size_t i = 0; i < n; ++i) {
    tallies_[i] = {host_words_[i], host_words_[n + i], host_words_[2 * n + i]};
    m.failed_elements += tallies_[i].failed;
  }
  if (m.failed_elements == 0) return out;
  // As compare_outputs: a failure whose score never beat 0 (a NaN score) is
  // counted but names no element.
  if (std::optional<std::size_t> b = worst_buffer(tallies_)) {
    m.buffer = expected_[*b].name;
    m.index = tallies_[*b].index;
    // Pass 2 re-scores what pass 1 scored; only a broken kernel misses.
    if (m.index >= expected_[*b].count)
      throw Error::failed("verification on the GPU lost the worst element of '" + m.buffer + "'");
    m.got = element(got[match_[*b]], m.index);
    m.expected = element(expected_[*b], m.index);
  }
  out.ok = false;
  out.worst = m;
  out.reason = "wrong result: " + m.str(total);
  return out;
}

}  // namespace ktune::gpu
