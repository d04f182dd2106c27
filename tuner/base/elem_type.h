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

std::size_t elem_size(ElemType type);
bool is_float(ElemType type);
const char* to_string(ElemType type);  // "float", "half", "bf16", "int32", ...
// Accepts C/CUDA spellings too: float32, double, __half, __nv_bfloat16, int,
// unsigned, int32_t, size_t, ... (no trailing '*'; pointers are the caller's).
std::optional<ElemType> parse_elem_type(std::string_view name);

}  // namespace ktune
