// YAML `arguments` and `verify`: kernel parameters in order, how buffers are
// filled, and how a configuration's outputs are checked.
#include <cmath>

#include "tuner/spec/build.h"

namespace ktune::spec_detail {

namespace {

ArgFill::Kind fill_kind(const Doc& d) {
  const std::string& s = need_string(d, "fill");
  static const std::pair<std::string_view, ArgFill::Kind> kinds[] = {
      {"zeros", ArgFill::Kind::Zeros},       {"constant", ArgFill::Kind::Constant},
      {"random", ArgFill::Kind::Random},     {"sequence", ArgFill::Kind::Sequence},
      {"generator", ArgFill::Kind::Generator}, {"file", ArgFill::Kind::File},
      {"randn", ArgFill::Kind::Normal},       {"copy", ArgFill::Kind::Copy}};
  for (const auto& [name, k] : kinds)
    if (name == s) return k;
  fail(d.where, "unknown fill '" + s + "'; known: zeros, constant, random, randn, sequence, generator, file, copy");
}

// Keys that only make sense with one fill kind (seed: two).
void check_fill_keys(const Doc& a, ArgFill::Kind k) {
  static const std::pair<std::string_view, ArgFill::Kind> owners[] = {
      {"range", ArgFill::Kind::Random},       {"start", ArgFill::Kind::Sequence}, {"step", ArgFill::Kind::Sequence},
      {"generator", ArgFill::Kind::Generator}, {"path", ArgFill::Kind::File},      {"mean", ArgFill::Kind::Normal},
      {"stddev", ArgFill::Kind::Normal},      {"of", ArgFill::Kind::Copy}};
  for (const auto& [key, owner] : owners)
    if (a.find(key) && owner != k)
      fail(a.key_location(key), std::string("'").append(key).append("' only applies to fill: ").append(fill_kind_name(owner)));
  if (a.find("seed") && k != ArgFill::Kind::Random && k != ArgFill::Kind::Normal)
    fail(a.key_location("seed"), "'seed' only applies to fill: random and fill: randn");
}

void read_fill(const Doc& a, Argument& arg, Draft& draft) {
  ArgFill& f = arg.fill;
  f.kind = ArgFill::Kind::Random;  // the engine's default: never silently zeros
  if (const Doc* k = a.find("fill")) f.kind = fill_kind(*k);
  check_fill_keys(a, f.kind);
  const Doc* value = a.find("value");
  if (value && f.kind != ArgFill::Kind::Constant)
    fail(a.key_location("value"), "'value' of a buffer needs fill: constant");
  if (f.kind == ArgFill::Kind::Constant) {
    const Doc& v = required(a, "value", "a buffer with fill: constant");
    f.value = coerce_to_elem(eval_constant(need_expression(v, "value"), draft), arg.type, v.where, "value");
  }
  if (const Doc* s = a.find("seed")) {
    int64_t seed = need_int(*s, "seed");
    if (seed < 0) fail(s->where, "seed must not be negative");
    f.seed = uint64_t(seed);
  }
  if (const Doc* r = a.find("range")) {
    if (!r->is_list() || r->items.size() != 2) fail(r->where, "range must be a list [low, high]");
    f.lo = need_number(r->items[0], "range low");
    f.hi = need_number(r->items[1], "range high");
    if (!(*f.lo < *f.hi)) fail(r->where, "range [low, high] needs low < high");
  }
  if (const Doc* s = a.find("start")) f.start = need_number(*s, "start");
  if (const Doc* s = a.find("step")) f.step = need_number(*s, "step");
  if (f.kind == ArgFill::Kind::Normal) {
    if (!is_float(arg.type)) fail(a.where, "fill: randn needs a floating-point type (half, bf16, float, double)");
    if (const Doc* m = a.find("mean")) f.mean = need_number(*m, "mean");
    if (const Doc* s = a.find("stddev")) {
      f.stddev = need_number(*s, "stddev");
      if (!(f.stddev >= 0) || !std::isfinite(f.stddev)) fail(s->where, "stddev must be finite and not negative");
    }
    if (!std::isfinite(f.mean)) fail(a.key_location("mean"), "mean must be finite");
  }
  if (f.kind == ArgFill::Kind::Copy)
    f.copy_of = need_string(required(a, "of", "fill: copy"), "of");
  if (f.kind == ArgFill::Kind::Generator) f.generator = need_expression(required(a, "generator", "fill: generator"), "generator");
  if (f.kind == ArgFill::Kind::File) {
    const Doc& p = required(a, "path", "fill: file");
    f.path = resolve_path(draft.spec.dir, need_string(p, "path"));
    file_for_gpu(f.path, p.where, "fill file", draft);  // a GPU run stops before its first launch
  }
}

void read_access(const Doc& a, Argument& arg) {
  const Doc* acc = a.find("access");
  if (!acc) return;
  const std::string& s = need_string(*acc, "access");
  if (s == "read_write") arg.read_write = true;
  else if (s != "read" && s != "write") fail(acc->where, "access must be read, write or read_write, not '" + s + "'");
  if (s == "read" && arg.output) fail(acc->where, "an output argument cannot have access: read");
}

// A list of constant integers, each in [lo, hi].
std::vector<int64_t> constant_ints(const Doc& d, const char* what, int64_t lo, int64_t hi, const Draft& draft) {
  std::vector<int64_t> out;
  for (const Doc& item : need_list(d, what).items) {
    const int64_t v = value_as_int(eval_constant(need_expression(item, what), draft), item.where, what);
    if (v < lo || v > hi)
      fail(item.where, std::string(what) + " entries must lie in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                           "], not " + std::to_string(v));
    out.push_back(v);
  }
  return out;
}

// `type: tensor_map`: what the map describes; checked against its buffer once
// every argument is read (check_tensor_map).
void read_tensor_map(const Doc& a, Argument& arg, const Draft& draft) {
  for (const char* k : {"size", "fill", "value", "seed", "range", "start", "step", "generator", "path", "mean",
                        "stddev", "output", "atol", "rtol", "access", "memory"})
    if (a.find(k)) fail(a.key_location(k), std::string("'").append(k).append("' does not apply to a tensor_map"));
  const std::string what = "tensor_map '" + arg.name + "'";
  TensorMapArg m;
  m.of = need_string(required(a, "of", what), "of");
  const Doc& dims = required(a, "dims", what);
  m.dims = constant_ints(dims, "dims", 1, int64_t(1) << 32, draft);
  if (m.dims.empty() || m.dims.size() > 5) fail(dims.where, "dims needs 1 to 5 entries (innermost first)");
  const Doc& box = required(a, "box", what);
  m.box = constant_ints(box, "box", 1, 256, draft);
  if (m.box.size() != m.dims.size())
    fail(box.where, "box needs one entry per dimension (" + std::to_string(m.dims.size()) + ")");
  if (const Doc* st = a.find("strides")) {
    m.strides = constant_ints(*st, "strides", 1, int64_t(1) << 40, draft);
    if (m.strides.size() + 1 != m.dims.size())
      fail(st->where, "strides needs one entry per dimension after the first (" + std::to_string(m.dims.size() - 1) + ")");
  } else {
    int64_t stride = 1;
    for (size_t i = 1; i < m.dims.size(); ++i) m.strides.push_back(stride *= m.dims[i - 1]);
  }
  if (const Doc* sw = a.find("swizzle")) {
    m.swizzle = int(value_as_int(eval_constant(need_expression(*sw, "swizzle"), draft), sw->where, "swizzle"));
    if (m.swizzle != 0 && m.swizzle != 32 && m.swizzle != 64 && m.swizzle != 128)
      fail(sw->where, "swizzle must be 0, 32, 64 or 128 (bytes), not " + std::to_string(m.swizzle));
  }
  arg.tensor_map = std::move(m);
}

// A tensor map against the buffer it describes: TMA's rules (cuTensorMapEncodeTiled's),
// so that a map the driver would refuse stops the spec, not a GPU run.
void check_tensor_map(const Doc& d, Argument& arg, const std::vector<Argument>& all) {
  const TensorMapArg& m = *arg.tensor_map;
  const Argument* of = nullptr;
  for (const Argument& other : all)
    if (other.name == m.of && other.pointer && !other.constant_memory) of = &other;
  if (!of) fail(d.key_location("of"), "tensor_map of '" + m.of + "': no buffer argument of that name in global memory");
  arg.type = of->type;
  const int64_t elem = int64_t(elem_size(arg.type));
  int64_t last = 0;  // the last element the map can reach
  for (size_t i = 0; i < m.dims.size(); ++i) last += (m.dims[i] - 1) * (i ? m.strides[i - 1] : 1);
  if (last >= of->size)
    fail(d.key_location("dims"), "tensor_map '" + arg.name + "' reaches element " + std::to_string(last) + " of '" +
                                     m.of + "', which has " + std::to_string(of->size));
  for (size_t i = 0; i < m.strides.size(); ++i)
    if (m.strides[i] * elem % 16)
      fail(d.key_location(d.find("strides") ? "strides" : "dims"), "tensor_map '" + arg.name + "': the stride of dimension " +
                                                    std::to_string(i + 1) + " is " + std::to_string(m.strides[i] * elem) +
                                                    " bytes, not a multiple of 16");
  if (m.box[0] * elem % 16)
    fail(d.key_location("box"), "tensor_map '" + arg.name + "': the box's first dimension is " +
                                    std::to_string(m.box[0] * elem) + " bytes, not a multiple of 16");
  if (m.swizzle && m.box[0] * elem > m.swizzle)
    fail(d.key_location("box"), "tensor_map '" + arg.name + "': the box's first dimension is " +
                                    std::to_string(m.box[0] * elem) + " bytes, more than the " +
                                    std::to_string(m.swizzle) + "-byte swizzle span");
}

Argument read_argument(const Doc& a, Draft& draft) {
  need_map(a, "an argument");
  check_keys(a, {"name", "type", "size", "fill", "value", "seed", "range", "start", "step", "generator", "path",
                 "mean", "stddev", "of", "output", "atol", "rtol", "access", "memory", "dims", "strides", "box",
                 "swizzle"},
             "an argument");
  Argument arg;
  arg.where = a.where;
  arg.name = need_string(required(a, "name", "an argument"), "argument name");
  const Doc& t = required(a, "type", "argument '" + arg.name + "'");
  if (need_string(t, "argument type") == "tensor_map") {
    read_tensor_map(a, arg, draft);
    return arg;
  }
  for (const char* k : {"dims", "strides", "box", "swizzle"})
    if (a.find(k)) fail(a.key_location(k), std::string("'").append(k).append("' applies to type: tensor_map"));
  std::string type = need_string(t, "argument type");
  arg.pointer = !type.empty() && type.back() == '*';
  if (arg.pointer) type.pop_back();
  auto et = elem_type_with_lanes(type, arg.components);
  if (!et) fail(t.where, "unknown argument type '" + need_string(t, "") + "'; known: int8 uint8 int16 uint16 int32 "
                         "uint32 int64 uint64 half bf16 float double, and for buffers the vector types float2/3/4, "
                         "double2/3/4, half2, int2/3/4, ... (append * for a buffer), and tensor_map");
  if (!arg.pointer && arg.components > 1)
    fail(t.where, "a vector type by value ('" + type + "') is not supported; pass a buffer ('" + type + "*')");
  arg.type = *et;
  if (const Doc* o = a.find("output")) arg.output = need_bool(*o, "output");
  for (const char* key : {"atol", "rtol"})
    if (const Doc* t = a.find(key)) {
      if (!arg.output) fail(a.key_location(key), std::string("'") + key + "' is an output's tolerance: it needs output: true");
      const double v = need_number(*t, key);
      if (!(v >= 0) || !std::isfinite(v)) fail(t->where, std::string(key) + " must be finite and not negative");
      (key[0] == 'a' ? arg.atol : arg.rtol) = v;
    }
  read_access(a, arg);
  if (const Doc* m = a.find("memory")) {
    const std::string& where = need_string(*m, "memory");
    if (where != "constant" && where != "global")
      fail(m->where, "memory must be constant (a __constant__ array of that name) or global, not '" + where + "'");
    arg.constant_memory = where == "constant";
    if (arg.constant_memory && arg.output) fail(m->where, "a __constant__ array cannot be an output");
  }
  if (!arg.pointer) {
    for (const char* k : {"size", "fill", "seed", "range", "start", "step", "generator", "path", "mean", "stddev",
                          "of", "output", "atol", "rtol", "access", "memory"})
      if (a.find(k)) fail(a.key_location(k), std::string("'").append(k).append("' applies to buffers (type ending in *), not scalars"));
    const Doc& v = required(a, "value", "scalar argument '" + arg.name + "'");
    arg.value = coerce_to_elem(eval_constant(need_expression(v, "value"), draft), arg.type, v.where, "value");
    return arg;
  }
  const Doc& size = required(a, "size", "buffer argument '" + arg.name + "'");
  arg.size = value_as_int(eval_constant(need_expression(size, "size"), draft), size.where, "size");
  if (arg.size < 1) fail(size.where, "size must be at least 1, not " + std::to_string(arg.size));
  arg.size *= arg.components;  // a float2* of n elements is 2n floats
  read_fill(a, arg, draft);
  return arg;
}

std::array<int64_t, 3> dims(const Doc& d, std::string_view what, const Draft& draft) {
  std::array<int64_t, 3> out{1, 1, 1};
  const Doc& list = need_list(d, what);
  if (list.items.empty() || list.items.size() > 3) fail(d.where, std::string(what) + " needs 1 to 3 entries");
  for (size_t i = 0; i < list.items.size(); ++i) {
    const Doc& item = list.items[i];
    out[i] = value_as_int(eval_constant(need_expression(item, what), draft), item.where, what);
    if (out[i] < 1) fail(item.where, std::string(what) + " entries must be at least 1");
  }
  return out;
}

void read_reference_kernel(const Doc& r, Draft& draft) {
  Verify& v = draft.spec.verify;
  check_keys(r, {"kernel", "block", "grid"}, "verify.reference");
  v.mode = Verify::Mode::Reference;
  v.kernel = need_string(required(r, "kernel", "verify.reference"), "verify.reference.kernel");
  require_identifier(v.kernel, r.find("kernel")->where, "reference kernel");
  if (const Doc* b = r.find("block")) v.block = dims(*b, "verify.reference.block", draft);
  if (const Doc* g = r.find("grid")) {
    v.grid = dims(*g, "verify.reference.grid", draft);
    return;
  }
  auto constants = constant_map(draft.spec);
  for (size_t i = 0; i < draft.spec.problem_size.size(); ++i) {
    const auto& e = draft.spec.problem_size[i].expression;
    for (const auto& n : e.names())
      if (!constants.count(n))
        fail(r.where, "verify.reference needs a grid: problem_size depends on '" + n + "'");
    int64_t n = value_as_int(e.evaluate(constants), e.where(), "problem_size");
    v.grid[i] = (n + v.block[i] - 1) / v.block[i];
  }
}

}  // namespace

void read_yaml_arguments(const Doc& d, Draft& draft) {
  for (const Doc& a : need_list(d, "arguments").items) {
    Argument arg = read_argument(a, draft);
    for (const auto& other : draft.spec.arguments)
      if (other.name == arg.name) fail(a.where, "duplicate argument '" + arg.name + "'");
    draft.spec.arguments.push_back(std::move(arg));
  }
  for (size_t i = 0; i < draft.spec.arguments.size(); ++i)
    if (draft.spec.arguments[i].tensor_map)
      check_tensor_map(need_list(d, "arguments").items[i], draft.spec.arguments[i], draft.spec.arguments);
  // A copy starts with the bytes of another buffer of the same type and size,
  // one whose own fill is not a copy.
  for (size_t i = 0; i < draft.spec.arguments.size(); ++i) {
    const Argument& arg = draft.spec.arguments[i];
    if (arg.fill.kind != ArgFill::Kind::Copy) continue;
    const Doc& of = *need_list(d, "arguments").items[i].find("of");
    const Argument* src = nullptr;
    for (const Argument& other : draft.spec.arguments)
      if (other.name == arg.fill.copy_of) src = &other;
    if (!src || !src->pointer) {
      std::string buffers;
      for (const Argument& other : draft.spec.arguments)
        if (other.pointer && other.name != arg.name) buffers += (buffers.empty() ? "" : ", ") + other.name;
      fail(of.where, "fill: copy of '" + arg.fill.copy_of + "': no buffer argument of that name (buffers: " +
                         (buffers.empty() ? "none" : buffers) + ")");
    }
    if (src == &arg) fail(of.where, "fill: copy of itself");
    if (src->fill.kind == ArgFill::Kind::Copy)
      fail(of.where, "fill: copy of '" + src->name + "', itself a copy: copy '" + src->fill.copy_of + "' instead");
    if (src->type != arg.type || src->size != arg.size || src->components != arg.components)
      fail(of.where, "fill: copy of '" + src->name + "' needs the same type and size: " + to_string(src->type) + "[" +
                         std::to_string(src->size) + "] there, " + to_string(arg.type) + "[" +
                         std::to_string(arg.size) + "] here");
  }
}

void read_yaml_verify(const Doc& d, Draft& draft) {
  need_map(d, "verify");
  check_keys(d, {"reference", "atol", "rtol"}, "verify");
  Verify& v = draft.spec.verify;
  v.where = d.where;
  const Doc& r = required(d, "reference", "verify");
  if (r.is_string()) {
    if (r.str() != "first_valid") fail(r.where, "verify.reference must be first_valid, {kernel: NAME} or {file: PATH}");
    v.mode = Verify::Mode::FirstValid;
  } else if (need_map(r, "verify.reference").find("file")) {
    check_keys(r, {"file"}, "verify.reference");
    const Doc& f = *r.find("file");
    v.mode = Verify::Mode::File;
    v.path = resolve_path(draft.spec.dir, need_string(f, "verify.reference.file"));
    file_for_gpu(v.path, f.where, "reference file", draft);
  } else {
    read_reference_kernel(r, draft);
  }
  if (const Doc* a = d.find("atol")) v.atol = need_number(*a, "verify.atol");
  if (const Doc* t = d.find("rtol")) v.rtol = need_number(*t, "verify.rtol");
  if (v.atol < 0 || v.rtol < 0) fail(d.where, "verify tolerances must not be negative");
  bool any_output = false;
  for (const auto& a : draft.spec.arguments) any_output = any_output || a.output;
  if (!any_output) fail(d.where, "verify needs at least one argument with output: true");
}

void require_verify_for_tolerances(const Draft& draft) {
  if (draft.spec.verify.mode != Verify::Mode::None) return;
  for (const Argument& a : draft.spec.arguments)
    if (a.atol || a.rtol)
      fail(a.where, "argument '" + a.name + "' has its own tolerance, but the spec has no verify: nothing is checked");
}

}  // namespace ktune::spec_detail
