// The host's copy of the element generator that fills buffers
// (fill_element.inc): fill_host and store_element compute with it, and the
// device fill kernel (fill_device.h) is compiled from the same text, so a
// buffer filled on either side holds the same bytes.
//
// The functions keep the generator's names (kt_splitmix, kt_random_value,
// kt_sequence_value, kt_encode, ...), in namespace ktune::gpu::fill.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "tuner/base/elem_type.h"

namespace ktune::gpu::fill {

using kt_u32 = std::uint32_t;
using kt_u64 = std::uint64_t;
using kt_i64 = std::int64_t;

// The generator's element type codes are ElemType's values (the device
// kernel gets the same numbers as -D defines).
inline constexpr int KT_F16 = static_cast<int>(ElemType::F16);
inline constexpr int KT_BF16 = static_cast<int>(ElemType::BF16);
inline constexpr int KT_F32 = static_cast<int>(ElemType::F32);
inline constexpr int KT_F64 = static_cast<int>(ElemType::F64);
inline constexpr int KT_I8 = static_cast<int>(ElemType::I8);
inline constexpr int KT_I16 = static_cast<int>(ElemType::I16);
inline constexpr int KT_I32 = static_cast<int>(ElemType::I32);
inline constexpr int KT_I64 = static_cast<int>(ElemType::I64);
inline constexpr int KT_U8 = static_cast<int>(ElemType::U8);
inline constexpr int KT_U16 = static_cast<int>(ElemType::U16);
inline constexpr int KT_U32 = static_cast<int>(ElemType::U32);
inline constexpr int KT_U64 = static_cast<int>(ElemType::U64);

inline kt_u32 kt_float_bits(float f) { return std::bit_cast<kt_u32>(f); }
inline float kt_bits_float(kt_u32 b) { return std::bit_cast<float>(b); }
inline kt_u64 kt_double_bits(double d) { return std::bit_cast<kt_u64>(d); }
inline double kt_floor(double d) { return std::floor(d); }
inline float kt_rint(float f) { return std::nearbyint(f); }  // the default rounding: to nearest even
inline double kt_sqrt(double d) { return std::sqrt(d); }

#define KT_FN inline
#include "tuner/gpu/fill_element.inc"
#undef KT_FN

}  // namespace ktune::gpu::fill
