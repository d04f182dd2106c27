#include "tuner/compile/std_headers.h"

namespace ktune {

namespace {

// The C names of <stdint.h> in the global namespace, over libcu++'s.
constexpr std::string_view kStdint = R"(#pragma once
#include <cuda/std/cstdint>
using cuda::std::int8_t; using cuda::std::int16_t; using cuda::std::int32_t; using cuda::std::int64_t;
using cuda::std::uint8_t; using cuda::std::uint16_t; using cuda::std::uint32_t; using cuda::std::uint64_t;
using cuda::std::intptr_t; using cuda::std::uintptr_t; using cuda::std::intmax_t; using cuda::std::uintmax_t;
using cuda::std::int_least8_t; using cuda::std::int_least16_t; using cuda::std::int_least32_t;
using cuda::std::int_least64_t; using cuda::std::uint_least8_t; using cuda::std::uint_least16_t;
using cuda::std::uint_least32_t; using cuda::std::uint_least64_t; using cuda::std::int_fast8_t;
using cuda::std::int_fast16_t; using cuda::std::int_fast32_t; using cuda::std::int_fast64_t;
using cuda::std::uint_fast8_t; using cuda::std::uint_fast16_t; using cuda::std::uint_fast32_t;
using cuda::std::uint_fast64_t;
)";

// NVRTC declares the device math functions (sinf, sqrt, fma, ...) itself;
// <math.h> adds the POSIX constants kernels use.
constexpr std::string_view kMath = R"(#pragma once
#ifndef M_PI
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#endif
)";

// The C++ forms also answer std::name, through libcu++'s cuda::std.
constexpr std::string_view kCmath = R"(#pragma once
#include <math.h>
#include <cuda/std/cmath>
namespace std { using namespace ::cuda::std; }
)";
constexpr std::string_view kCstdint = R"(#pragma once
#include <stdint.h>
namespace std { using namespace ::cuda::std; }
)";
// Macros only (INT_MAX, FLT_EPSILON, ...): nothing to name in std.
constexpr std::string_view kLimits = "#pragma once\n#include <cuda/std/climits>\n";
// libcu++'s <cuda/std/cfloat> itself includes <float.h> under NVRTC, so the
// IEEE 754 binary32/binary64 limits are spelt out here.
constexpr std::string_view kFloat = R"(#pragma once
#define FLT_RADIX 2
#define FLT_MANT_DIG 24
#define DBL_MANT_DIG 53
#define FLT_DIG 6
#define DBL_DIG 15
#define FLT_EPSILON 1.19209290e-07F
#define DBL_EPSILON 2.2204460492503131e-16
#define FLT_MIN 1.17549435e-38F
#define DBL_MIN 2.2250738585072014e-308
#define FLT_MAX 3.40282347e+38F
#define DBL_MAX 1.7976931348623157e+308
#define FLT_TRUE_MIN 1.40129846e-45F
#define DBL_TRUE_MIN 4.9406564584124654e-324
#define FLT_MIN_EXP (-125)
#define DBL_MIN_EXP (-1021)
#define FLT_MAX_EXP 128
#define DBL_MAX_EXP 1024
#define FLT_MIN_10_EXP (-37)
#define DBL_MIN_10_EXP (-307)
#define FLT_MAX_10_EXP 38
#define DBL_MAX_10_EXP 308
#define FLT_EVAL_METHOD 0
#define DECIMAL_DIG 17
)";
constexpr std::string_view kStddef = R"(#pragma once
#include <cuda/std/cstddef>
using cuda::std::ptrdiff_t;
)";
constexpr std::string_view kCstddef = R"(#pragma once
#include <stddef.h>
namespace std { using namespace ::cuda::std; }
)";
constexpr std::string_view kAssert = "#pragma once\n#include <cuda/std/cassert>\n";
// printf, malloc and free are declared by NVRTC for device code.
constexpr std::string_view kNothingMore = "#pragma once\n";

}  // namespace

const std::vector<std::pair<std::string_view, std::string_view>>& nvrtc_std_headers() {
  static const std::vector<std::pair<std::string_view, std::string_view>> headers = {
      {"stdint.h", kStdint}, {"cstdint", kCstdint}, {"math.h", kMath},       {"cmath", kCmath},
      {"limits.h", kLimits}, {"climits", kLimits},  {"float.h", kFloat},     {"cfloat", kFloat},
      {"stddef.h", kStddef}, {"cstddef", kCstddef}, {"assert.h", kAssert},   {"cassert", kAssert},
      {"stdio.h", kNothingMore}, {"cstdio", kNothingMore}, {"stdlib.h", kNothingMore}, {"cstdlib", kNothingMore}};
  return headers;
}

}  // namespace ktune
