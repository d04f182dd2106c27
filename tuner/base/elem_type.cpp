#include "tuner/base/elem_type.h"

namespace ktune {
namespace {

struct TypeName {
  std::string_view name;
  ElemType type;
};
constexpr TypeName kTypeNames[] = {
    {"half", ElemType::F16},      {"float16", ElemType::F16},    {"__half", ElemType::F16},
    {"bf16", ElemType::BF16},     {"bfloat16", ElemType::BF16},  {"__nv_bfloat16", ElemType::BF16},
    {"float", ElemType::F32},     {"float32", ElemType::F32},    {"double", ElemType::F64},
    {"float64", ElemType::F64},   {"int8", ElemType::I8},        {"int8_t", ElemType::I8},
    {"char", ElemType::I8},       {"signed char", ElemType::I8}, {"int16", ElemType::I16},
    {"int16_t", ElemType::I16},   {"short", ElemType::I16},      {"int32", ElemType::I32},
    {"int32_t", ElemType::I32},   {"int", ElemType::I32},        {"int64", ElemType::I64},
    {"int64_t", ElemType::I64},   {"long long", ElemType::I64},  {"long", ElemType::I64},
    {"uint8", ElemType::U8},      {"uint8_t", ElemType::U8},     {"unsigned char", ElemType::U8},
    {"uint16", ElemType::U16},    {"uint16_t", ElemType::U16},   {"unsigned short", ElemType::U16},
    {"uint32", ElemType::U32},    {"uint32_t", ElemType::U32},   {"unsigned", ElemType::U32},
    {"unsigned int", ElemType::U32}, {"uint64", ElemType::U64},  {"uint64_t", ElemType::U64},
    {"size_t", ElemType::U64},    {"unsigned long long", ElemType::U64},
};

}  // namespace

std::size_t elem_size(ElemType t) {
  switch (t) {
    case ElemType::I8: case ElemType::U8: return 1;
    case ElemType::F16: case ElemType::BF16: case ElemType::I16: case ElemType::U16: return 2;
    case ElemType::F32: case ElemType::I32: case ElemType::U32: return 4;
    case ElemType::F64: case ElemType::I64: case ElemType::U64: return 8;
  }
  return 1;
}

bool is_float(ElemType t) {
  return t == ElemType::F16 || t == ElemType::BF16 || t == ElemType::F32 || t == ElemType::F64;
}

const char* to_string(ElemType t) {
  switch (t) {
    case ElemType::F16: return "half";
    case ElemType::BF16: return "bf16";
    case ElemType::F32: return "float";
    case ElemType::F64: return "double";
    case ElemType::I8: return "int8";
    case ElemType::I16: return "int16";
    case ElemType::I32: return "int32";
    case ElemType::I64: return "int64";
    case ElemType::U8: return "uint8";
    case ElemType::U16: return "uint16";
    case ElemType::U32: return "uint32";
    case ElemType::U64: return "uint64";
  }
  return "?";
}

std::optional<ElemType> parse_elem_type(std::string_view name) {
  if (name.starts_with("const ")) name.remove_prefix(6);
  for (const auto& t : kTypeNames)
    if (t.name == name) return t.type;
  return std::nullopt;
}

}  // namespace ktune
