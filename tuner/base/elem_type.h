// The element types of kernel arguments and buffers: one definition for the
// spec (what a YAML or T1 file names) and the GPU engine (what it allocates,
// fills and compares).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ktune {

enum class ElemType : std::uint8_t { F16, BF16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64 };

// Every ElemType by the macro name the device kernels of tuner/gpu (fill,
// compare) know it as: they are compiled with -DKT_F16=0 ... -DKT_U64=11.
struct ElemTypeMacro {
  const char* name;
  ElemType type;
};
inline constexpr ElemTypeMacro kElemTypeMacros[] = {
    {"KT_F16", ElemType::F16}, {"KT_BF16", ElemType::BF16}, {"KT_F32", ElemType::F32},
    {"KT_F64", ElemType::F64}, {"KT_I8", ElemType::I8},     {"KT_I16", ElemType::I16},
    {"KT_I32", ElemType::I32}, {"KT_I64", ElemType::I64},   {"KT_U8", ElemType::U8},
    {"KT_U16", ElemType::U16}, {"KT_U32", ElemType::U32},   {"KT_U64", ElemType::U64},
};

std::size_t elem_size(ElemType type);
bool is_float(ElemType type);
const char* to_string(ElemType type);  // "float", "half", "bf16", "int32", ...
// Accepts C/CUDA spellings too: float32, double, __half, __nv_bfloat16, int,
// unsigned, int32_t, size_t, ... (no trailing '*'; pointers are the caller's).
std::optional<ElemType> parse_elem_type(std::string_view name);

}  // namespace ktune
