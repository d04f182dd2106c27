// Buffer fills, the parts that need no GPU: the generator that the host and
// the device share (tuner/gpu/fill_element.inc) gives, through fill_host and
// store_element, exactly the bytes of the sequential fill it replaced (kept
// below as the oracle) for every element type and fill kind, on one thread
// and on several; the device fill kernel compiles with NVRTC for the
// architectures ktune tunes on; and the rules for what the device may fill.
// The kernel's bytes against fill_host's: tests/gpu/fill_device_gpu_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tests/test_util.h"
#include "tuner/gpu/fill_device.h"
#include "tuner/gpu/fill_element.h"

namespace ktune::gpu {
namespace {

constexpr ElemType kTypes[] = {ElemType::F16, ElemType::BF16, ElemType::F32, ElemType::F64,
                               ElemType::I8,  ElemType::I16,  ElemType::I32, ElemType::I64,
                               ElemType::U8,  ElemType::U16,  ElemType::U32, ElemType::U64};

// ---- The oracle: fill_host and store_element as they were written before
// the generator was shared, a sequential splitmix64 stream and all.
namespace oracle {

std::uint64_t next_random(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint64_t name_seed(const std::string& name) {
  std::uint64_t h = 0xcbf29ce484222325ull;
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

std::uint16_t float_to_half(float f) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  std::uint32_t sign = (x >> 16) & 0x8000u;
  std::uint32_t absx = x & 0x7FFFFFFFu;
  if (absx > 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7E00u);
  if (absx >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);
  if (absx < 0x38800000u) {
    float a = std::bit_cast<float>(absx);
    auto m = static_cast<std::uint32_t>(std::nearbyint(a * 16777216.0f));
    return static_cast<std::uint16_t>(sign | m);
  }
  std::uint32_t mant = absx & 0x7FFFFFu;
  std::uint32_t exp = (absx >> 23) - 112;
  std::uint32_t h = (exp << 10) | (mant >> 13);
  std::uint32_t rest = mant & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

std::uint16_t float_to_bf16(float f) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  x += 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
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

std::vector<std::uint8_t> fill_host(const ArgSpec& arg) {
  const std::size_t n = arg.count, size = elem_size(arg.type);
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

}  // namespace oracle

Fill random(std::optional<double> lo = {}, std::optional<double> hi = {}, std::optional<std::uint64_t> seed = {}) {
  Fill f;
  f.kind = FillKind::Random;
  f.lo = lo;
  f.hi = hi;
  f.seed = seed;
  return f;
}

// The first element that differs, for a readable failure.
std::string first_difference(const std::vector<std::uint8_t>& got, const std::vector<std::uint8_t>& want,
                             std::size_t size) {
  if (got.size() != want.size()) return "sizes " + std::to_string(got.size()) + " and " + std::to_string(want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) return "element " + std::to_string(i / size) + " differs";
  return "";
}

void expect_as_oracle(const ArgSpec& a, const std::string& what) {
  const std::vector<std::uint8_t> got = fill_host(a), want = oracle::fill_host(a);
  EXPECT_EQ(first_difference(got, want, elem_size(a.type)), "") << what << " " << to_string(a.type);
}

// Fills that reach every branch of the conversions: fractions, negatives,
// integer ranges past every type's ends (saturation), steps that overflow,
// half and bf16 subnormals and ties.
std::vector<std::pair<std::string, Fill>> fills() {
  return {
      {"random default", random()},
      {"random seeded", random({}, {}, 12345)},
      {"random negative", random(-5, -4, 7)},
      {"random wide", random(-1e3, 1e3, 8)},
      {"random past int64", random(-3e19, 3e19, 9)},
      {"random past uint64", random(-1.0, 4e19, 10)},
      {"random tiny", random(0, 1e-6, 11)},  // half subnormals
      {"random reversed", random(1, -1, 12)},
      {"sequence fraction", Fill::sequence(-3.25, 0.37)},
      {"sequence halves", Fill::sequence(-64.5, 0.5)},  // ties for every integer conversion
      {"sequence overflow", Fill::sequence(1e300, 1e306)},
      {"sequence tiny", Fill::sequence(0, 1.0 / (1 << 27))},  // half subnormal ties
      {"sequence ulps", Fill::sequence(1.0, 1.0 / (1 << 12))},  // bf16 and half rounding ties
      {"constant", Fill::constant(-2.7)},
      {"constant nan", Fill::constant(std::numeric_limits<double>::quiet_NaN())},
      {"constant inf", Fill::constant(-std::numeric_limits<double>::infinity())},
      {"zeros", Fill::zeros()},
  };
}

TEST(Fill, EveryKindAndTypeGivesTheSequentialFillsBytes) {
  // Counts around block and warp sizes, and odd ones.
  for (std::uint64_t count : {0ull, 1ull, 31ull, 255ull, 257ull, 4099ull})
    for (ElemType t : kTypes)
      for (const auto& [what, fill] : fills())
        expect_as_oracle(ArgSpec::buffer("arg", t, count, fill), what + " n=" + std::to_string(count));
}

TEST(Fill, LargeBuffersSplitOverThreadsGiveTheSameBytes) {
  // 8 MiB and a ragged tail: filled on more than one thread where the host has two cores.
  for (ElemType t : {ElemType::U8, ElemType::F16, ElemType::I32, ElemType::F64}) {
    const std::uint64_t count = (std::uint64_t{8} << 20) / elem_size(t) + 5;
    expect_as_oracle(ArgSpec::buffer("big", t, count, random(-300, 300)), "random large");
    expect_as_oracle(ArgSpec::buffer("big", t, count, Fill::sequence(-1e5, 0.01)), "sequence large");
  }
}

TEST(Fill, TheStreamIsSplitmix64) {
  // splitmix64 from state 0, as published with the algorithm.
  EXPECT_EQ(fill::kt_splitmix(0, 0), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(fill::kt_splitmix(0, 1), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(fill::kt_splitmix(0, 2), 0x06C45D188009454Full);
  // Element i of a double fill in [0, 1) is the output's top 53 bits over 2^53.
  const ArgSpec a = ArgSpec::buffer("x", ElemType::F64, 3, random(0, 1, 0));
  const std::vector<std::uint8_t> bytes = fill_host(a);
  EXPECT_EQ(element_value(ElemType::F64, bytes.data(), 0), std::ldexp(double(0xE220A8397B1DCDAFull >> 11), -53));
  EXPECT_EQ(element_value(ElemType::F64, bytes.data(), 2), std::ldexp(double(0x06C45D188009454Full >> 11), -53));
  // The seed defaults to the name's FNV-1a hash.
  EXPECT_EQ(random_seed(ArgSpec::buffer("a", ElemType::F32, 1)), oracle::name_seed("a"));
  EXPECT_EQ(random_seed(ArgSpec::buffer("a", ElemType::F32, 1, random({}, {}, 3))), 3u);
  EXPECT_EQ(random_range(ArgSpec::buffer("a", ElemType::F32, 1)), std::make_pair(0.0, 1.0));
  EXPECT_EQ(random_range(ArgSpec::buffer("a", ElemType::I8, 1)), std::make_pair(0.0, 100.0));
}

TEST(Fill, StoreElementConvertsEdgeValuesAsBefore) {
  const double inf = std::numeric_limits<double>::infinity();
  const double values[] = {0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.7, 126.5, 127.0, 127.5, 128.0, -128.0, -128.5,
                           -129.0, 255.0, 255.5, 256.0, 32767.5, -32768.5, 65504.0, 65519.99, 65520.0,
                           2147483647.5, -2147483648.5, 4294967295.5, 4294967296.0, 9007199254740993.0,
                           9223372036854775807.0, -9223372036854775808.0, 18446744073709551615.0, 3e19,
                           1e-8, std::ldexp(1.0, -24), std::ldexp(1.0, -25), std::ldexp(3.0, -26),
                           std::ldexp(5.0, -26), 6.1e-5, 1e-40, 1e-46, 1.0 + std::ldexp(1.0, -8),
                           1.0 + std::ldexp(3.0, -8), 1.0 + std::ldexp(1.0, -11), 1.0 + std::ldexp(3.0, -11),
                           3.4028235e38, 3.5e38, 1e300, -1e300, inf, -inf,
                           std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::signaling_NaN(), std::numeric_limits<double>::denorm_min()};
  for (ElemType t : kTypes) {
    for (double v : values) {
      std::uint8_t got[8] = {}, want[8] = {};
      store_element(t, v, got);
      oracle::store_element(t, v, want);
      EXPECT_EQ(std::memcmp(got, want, 8), 0) << to_string(t) << " " << v;
    }
  }
  // Floats across the whole range of bits, NaNs, subnormals and infinities included.
  for (std::uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += 997) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    ASSERT_EQ(float_to_half(f), oracle::float_to_half(f)) << bits;
    ASSERT_EQ(float_to_bf16(f), oracle::float_to_bf16(f)) << bits;
  }
}

TEST(Fill, WhatTheDeviceMayFill) {
  auto buffer = [](Fill f, ElemType t = ElemType::F32, std::uint64_t n = 1) { return ArgSpec::buffer("b", t, n, f); };
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(device_fillable(buffer(random())));
  EXPECT_TRUE(device_fillable(buffer(random(-1e300, 1e300))));
  EXPECT_FALSE(device_fillable(buffer(random(-1.7e308, 1.7e308))));  // hi - lo overflows: NaN at u = 0
  EXPECT_FALSE(device_fillable(buffer(random(0, inf))));
  EXPECT_FALSE(device_fillable(buffer(random(nan, 1))));
  EXPECT_TRUE(device_fillable(buffer(Fill::sequence(1, 2))));
  EXPECT_FALSE(device_fillable(buffer(Fill::sequence(inf, 2))));
  EXPECT_FALSE(device_fillable(buffer(Fill::sequence(0, nan))));
  EXPECT_TRUE(device_fillable(buffer(Fill::constant(nan))));  // its bits are made on the host
  EXPECT_TRUE(device_fillable(buffer(Fill::zeros())));
  EXPECT_FALSE(device_fillable(buffer(Fill::file("x.bin"))));
  EXPECT_FALSE(device_fillable(ArgSpec::constant("c", ElemType::F32, 1 << 24, random())));  // __constant__ data
  EXPECT_FALSE(device_fillable(ArgSpec::scalar("s", ElemType::F32, 1)));
  // Large enough to be worth the kernel: 16 MiB.
  EXPECT_FALSE(fills_on_device(buffer(random(), ElemType::F32, (kDeviceFillMinBytes / 4) - 1)));
  EXPECT_TRUE(fills_on_device(buffer(random(), ElemType::F32, kDeviceFillMinBytes / 4)));
  EXPECT_TRUE(fills_on_device(buffer(random(), ElemType::U8, kDeviceFillMinBytes)));
  EXPECT_FALSE(fills_on_device(buffer(Fill::file("x.bin"), ElemType::U8, kDeviceFillMinBytes)));
}

TEST(Fill, BlocksAreOneWaveAtMost) {
  EXPECT_EQ(fill_blocks(0, 100), 1u);
  EXPECT_EQ(fill_blocks(1, 100), 1u);
  EXPECT_EQ(fill_blocks(kFillThreads * 3 + 1, 100), 4u);
  EXPECT_EQ(fill_blocks(std::uint64_t{1} << 31, 264), 264u);
  EXPECT_EQ(fill_blocks(std::uint64_t{1} << 31, 0), 1024u);
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(Fill, FillKernelCompilesForAmpereAndHopper) {
  testing::TempDir cache;
  CompilerOptions options;
  options.cache_dir = cache.path();
  Compiler compiler(options);
  for (int sm : {80, 90}) {
    const CompileRequest request = fill_kernel_request(Arch(sm));
    // No FMA: the host's two roundings, not one.
    EXPECT_NE(std::find(request.options.begin(), request.options.end(), "-fmad=false"), request.options.end());
    // The generator's element type codes are ElemType's own values, every one of them.
    const char* names[] = {"KT_F16", "KT_BF16", "KT_F32", "KT_F64", "KT_I8",  "KT_I16",
                           "KT_I32", "KT_I64",  "KT_U8",  "KT_U16", "KT_U32", "KT_U64"};
    ASSERT_GE(request.defines.size(), 12u);
    for (std::size_t t = 0; t < 12; ++t) {
      EXPECT_EQ(request.defines[t].first, names[t]);
      EXPECT_EQ(request.defines[t].second, std::to_string(static_cast<int>(kTypes[t])));
    }
    // The generator's text is the host's own (fill_element.inc, embedded whole).
    EXPECT_NE(request.source.find("KT_FN kt_u64 kt_splitmix(kt_u64 seed, kt_u64 i)"), std::string::npos);
    EXPECT_NE(request.source.find("KT_FN kt_u64 kt_encode(int type, double v)"), std::string::npos);
    const CompileResult c = compiler.compile(request);
    ASSERT_TRUE(c.ok) << "sm_" << sm << ":\n" << c.log;
    EXPECT_EQ(c.lowered_name, kFillKernel);
    EXPECT_TRUE(has(cubin_kernel_names(c.cubin), kFillKernel)) << "sm_" << sm;
    for (const auto& [name, usage] : parse_ptxas_log(c.log))
      EXPECT_EQ(usage.spill_stores, 0) << name << " on sm_" << sm << ":\n" << c.log;
    const CompileResult again = compiler.compile(request);  // the next worker: a cache hit
    ASSERT_TRUE(again.ok);
    EXPECT_TRUE(again.cache_hit);
  }
}

}  // namespace
}  // namespace ktune::gpu
