// The spec's arguments against the kernel's parameters, as Kernel Tuner
// checks them before it compiles: a mismatch found here costs no GPU time and
// is reported once, not as a failure of every configuration.
#include "tuner/spec/kernel_signature.h"
#include "tuner/spec/build.h"

namespace ktune::spec_detail {

namespace {

// The C spellings a buffer of this element type is declared with.
bool same_element(const Argument& a, const std::string& c_type) {
  static const std::pair<ElemType, std::vector<std::string_view>> names[] = {
      {ElemType::I8, {"char", "signed char", "int8_t"}},
      {ElemType::U8, {"unsigned char", "uint8_t", "bool", "uchar"}},
      {ElemType::I16, {"short", "int16_t"}},
      {ElemType::U16, {"unsigned short", "uint16_t", "ushort"}},
      {ElemType::I32, {"int", "int32_t", "signed"}},
      {ElemType::U32, {"unsigned", "unsigned int", "uint32_t", "uint"}},
      {ElemType::I64, {"long", "long long", "int64_t", "longlong"}},
      {ElemType::U64, {"unsigned long", "unsigned long long", "uint64_t", "size_t"}},
      {ElemType::F16, {"half", "__half"}},
      {ElemType::BF16, {"__nv_bfloat16", "nv_bfloat16"}},
      {ElemType::F32, {"float"}},
      {ElemType::F64, {"double"}}};
  std::string want = c_type;
  if (a.components > 1) {  // float2 <-> float with 2 lanes; half2 is __half2
    if (want.size() < 2 || want.back() != char('0' + a.components)) return false;
    want.pop_back();
    if (want.rfind("__", 0) == 0) want.erase(0, 2);
  }
  for (const auto& [t, spellings] : names)
    if (t == a.type)
      for (std::string_view s : spellings)
        if (s == want) return true;
  return false;
}

std::string argument_text(const Argument& a) {
  if (a.tensor_map) return a.name + " (tensor_map of " + a.tensor_map->of + ", line " + std::to_string(a.where.line) + ")";
  std::string t = to_string(a.type);
  if (a.components > 1) t += std::to_string(a.components);
  return a.name + " (" + t + (a.pointer ? "*" : "") + ", line " + std::to_string(a.where.line) + ")";
}

std::string listing(const std::vector<KernelParam>& params, const std::vector<const Argument*>& args) {
  std::string s = "; the kernel's parameters:";
  for (const KernelParam& p : params) s.append(" [").append(p.text).append("]");
  if (params.empty()) s += " none";
  s += "; the spec's arguments:";
  for (const Argument* a : args) s.append(" ").append(argument_text(*a));
  if (args.empty()) s += " none";
  return s;
}

// No path: the entry is not a missing file (kernel_source_missing() reads paths).
void not_runnable(Draft& d, const SourceLocation& where, const std::string& why) {
  d.spec.notes.push_back(where.str() + ": " + why);
  d.spec.not_runnable.push_back({"arguments", "", where, why});
}

// One kernel's parameters against the arguments passed to it.
void check_one(Draft& d, const std::string& kernel, const std::vector<KernelParam>& params) {
  // A __constant__ symbol is not a parameter; Kernel Tuner's T1 reader passes
  // it as one too (its convolution kernel takes the filter both ways), so
  // either count is the kernel's.
  std::vector<const Argument*> args, all;
  for (const Argument& a : d.spec.arguments) {
    all.push_back(&a);
    if (!a.constant_memory) args.push_back(&a);
  }
  if (params.size() != args.size() && params.size() == all.size() && all.size() > args.size()) {
    args = all;
    for (Argument& a : d.spec.arguments) a.passed_too = a.constant_memory;
  }
  const SourceLocation& where = args.empty() ? d.spec.kernel.where : args.front()->where;
  if (params.size() != args.size()) {
    not_runnable(d, where, "kernel '" + kernel + "' takes " + std::to_string(params.size()) + " parameter(s), the spec passes " +
                               std::to_string(args.size()) + listing(params, args));
    return;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const KernelParam& p = params[i];
    const Argument& a = *args[i];
    const std::string at = "argument " + std::to_string(i + 1) + " of kernel '" + kernel + "', " + argument_text(a);
    if (p.pointer != a.pointer) {
      not_runnable(d, a.where, at + ", is " + (a.pointer ? "a buffer" : a.tensor_map ? "a tensor map" : "a scalar") +
                                   " but the parameter [" + p.text +
                                   "] is " + (p.pointer ? "a pointer" : "passed by value"));
      return;
    }
    if (a.tensor_map) {
      if (!p.width) continue;
      not_runnable(d, a.where, at + ", is a tensor map (128 bytes by value) but the parameter [" + p.text +
                                   "] takes a " + std::to_string(p.width) + "-byte scalar");
      return;
    }
    if (!p.pointer && p.width && size_t(p.width) != elem_size(a.type)) {
      not_runnable(d, a.where, at + ", is " + std::to_string(elem_size(a.type)) + " bytes but the parameter [" +
                                   p.text + "] takes " + std::to_string(p.width));
      return;
    }
    // Kernel Tuner passes raw buffers; a differing element type may be meant.
    // Only a type the reader knows: a typedef (bf16) or a template parameter may be anything.
    if (p.pointer && p.known_type && !same_element(a, p.type))
      d.spec.notes.push_back(a.where.str() + ": " + at + ", is a buffer of " + to_string(a.type) +
                             (a.components > 1 ? std::to_string(a.components) : "") + " for the parameter [" + p.text +
                             "]; passed as raw bytes");
  }
}

}  // namespace

void check_kernel_signature(Draft& d) {
  Spec& s = d.spec;
  if (s.kernel.name.empty() || s.kernel.source.empty() || kernel_source_missing(s)) return;
  const std::string text = with_local_headers(s.kernel.source, std::filesystem::path(s.kernel.source_path).parent_path());
  std::vector<std::pair<std::string, SourceLocation>> kernels = {{s.kernel.name, s.kernel.where}};
  if (s.verify.mode == Verify::Mode::Reference) kernels.emplace_back(s.verify.kernel, s.verify.where);
  for (const auto& [name, where] : kernels) {
    if (!source_mentions(text, name)) {
      not_runnable(d, where, "kernel '" + name + "' is not defined in " + s.kernel.source_path);
      continue;
    }
    const auto params = kernel_parameters(text, name);
    if (!params) {
      s.notes.push_back(where.str() + ": the parameters of kernel '" + name +
                        "' could not be read from its source (a macro builds it?); the arguments are not checked");
      continue;
    }
    check_one(d, name, *params);
  }
}

}  // namespace ktune::spec_detail
