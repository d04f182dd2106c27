// T1 `KernelSpecification`: the kernel, its launch geometry and arguments.
//
// Geometry follows Kernel Tuner's T1 reader where the file gives a ProblemSize
// (grid = ceil(ProblemSize / product(GridDiv))); otherwise GlobalSize, read as
// blocks (GlobalSizeType CUDA, the default, as in BAT's runner) or as threads
// (OpenCL: grid = ceil(GlobalSize / LocalSize)). LocalSize is the block.
#include "tuner/spec_build.h"

namespace ktune::spec_detail {

namespace {

BoundExpr bound(const Doc& d, std::string_view what) { return {need_expression(d, what), {}}; }
BoundExpr one() { return {expr::Expression::parse("1"), {}}; }

std::array<BoundExpr, 3> xyz(const Doc& d, std::string_view what) {
  need_map(d, what);
  check_keys(d, {"X", "Y", "Z"}, what);
  required(d, "X", what);
  std::array<BoundExpr, 3> out{one(), one(), one()};
  const char* axes[] = {"X", "Y", "Z"};
  for (int i = 0; i < 3; ++i)
    if (const Doc* a = d.find(axes[i]); a && !a->is_null()) out[i] = bound(*a, std::string(what) + "." + axes[i]);
  return out;
}

ArgFill::Kind t1_fill(const Doc& d) {
  const std::string& s = need_string(d, "FillType");
  if (s == "Constant") return ArgFill::Kind::Constant;
  if (s == "Random") return ArgFill::Kind::Random;
  if (s == "Generator") return ArgFill::Kind::Generator;
  if (s == "BinaryRaw") return ArgFill::Kind::File;
  if (s == "Uninitialized") return ArgFill::Kind::Zeros;
  fail(d.where, "FillType '" + s + "' is not supported (Constant, Random, Generator, BinaryRaw, Uninitialized)");
}

void read_t1_fill(const Doc& a, Argument& arg, Draft& draft) {
  ArgFill& f = arg.fill;
  f.kind = t1_fill(required(a, "FillType", "vector argument '" + arg.name + "'"));
  const Doc* value = a.find("FillValue");
  if (f.kind == ArgFill::Kind::Constant) {
    f.value = value ? coerce_to_elem(need_scalar(*value, "FillValue"), arg.type, value->where, "FillValue") : Value(0);
  } else if (f.kind == ArgFill::Kind::Random && value) {
    // BAT draws normals and ignores FillValue; Kernel Tuner scales by it. Here:
    // uniform in [0, FillValue), a positive FillValue being the scale.
    double hi = need_number(*value, "FillValue");
    if (hi > 0) {
      f.lo = 0;
      f.hi = hi;
    }
  } else if (f.kind == ArgFill::Kind::Generator) {
    f.generator = need_expression(required(a, "DataSource", "a Generator argument"), "DataSource");
  } else if (f.kind == ArgFill::Kind::File) {
    const Doc& src = required(a, "DataSource", "a BinaryRaw argument");
    f.path = resolve_path(draft.spec.dir, need_string(src, "DataSource"));
    file_for_gpu(f.path, src.where, "DataSource", draft);
  }
}

// Vector types (float2, double4, ...) are buffers of their components.
ElemType t1_type(const Doc& d, int& components) {
  std::string t = need_string(d, "Type");
  components = 1;
  if (t.size() > 1 && (t.back() == '2' || t.back() == '3' || t.back() == '4') &&
      (t.rfind("float", 0) == 0 || t.rfind("double", 0) == 0 || t.rfind("half", 0) == 0) && t.size() <= 7) {
    components = t.back() - '0';
    t.pop_back();
  }
  auto et = elem_type_from_name(t);
  if (!et) fail(d.where, "argument Type '" + d.str() + "' is not supported");
  return *et;
}

Argument read_t1_argument(const Doc& a, size_t index, Draft& draft) {
  need_map(a, "an Arguments entry");
  check_keys(a, {"Name", "Type", "TypeSize", "Size", "MemoryType", "MemType", "AccessType", "FillType", "FillValue",
                 "DataSource", "Output"},
             "an Arguments entry");
  Argument arg;
  arg.where = a.where;
  arg.name = a.find("Name") ? need_string(*a.find("Name"), "Name") : "arg" + std::to_string(index);
  int components = 1;
  arg.type = t1_type(required(a, "Type", "argument '" + arg.name + "'"), components);
  const Doc& mem = required(a, "MemoryType", "argument '" + arg.name + "'");
  const std::string& m = need_string(mem, "MemoryType");
  if (m != "Scalar" && m != "Vector" && m != "Symbol")
    fail(mem.where, "MemoryType '" + m + "' is not supported (Scalar, Vector, Symbol)");
  if (const Doc* o = a.find("Output")) arg.output = o->kind == Doc::Kind::Bool ? o->scalar.as_bool() : need_int(*o, "Output") != 0;
  if (const Doc* acc = a.find("AccessType")) {
    const std::string& s = need_string(*acc, "AccessType");
    if (s != "ReadOnly" && s != "WriteOnly" && s != "ReadWrite")
      fail(acc->where, "AccessType must be ReadOnly, WriteOnly or ReadWrite");
    arg.read_write = s == "ReadWrite";
  }
  if (const Doc* mt = a.find("MemType")) arg.constant_memory = need_string(*mt, "MemType") == "Constant";
  arg.constant_memory = arg.constant_memory || m == "Symbol";
  if (m == "Scalar") {
    if (components != 1) fail(a.where, "a Scalar argument cannot have a vector Type");
    const Doc& v = required(a, "FillValue", "scalar argument '" + arg.name + "'");
    arg.value = coerce_to_elem(v.is_string() ? eval_constant(need_expression(v, "FillValue"), draft.spec)
                                             : need_scalar(v, "FillValue"),
                               arg.type, v.where, "FillValue");
    return arg;
  }
  arg.pointer = true;
  const Doc& size = required(a, "Size", "vector argument '" + arg.name + "'");
  arg.size = value_as_int(eval_constant(need_expression(size, "Size"), draft.spec), size.where, "Size") * components;
  if (arg.size < 1) fail(size.where, "Size must be at least 1");
  read_t1_fill(a, arg, draft);
  return arg;
}

void read_t1_geometry(const Doc& d, Draft& draft) {
  Spec& s = draft.spec;
  s.block = xyz(required(d, "LocalSize", "KernelSpecification"), "LocalSize");
  const Doc* ps = d.find("ProblemSize");
  bool has_ps = ps && !ps->is_null() && !(ps->is_list() && ps->items.empty());
  if (has_ps) {
    s.grid_mode = GridMode::Divisors;
    if (ps->is_list()) {
      if (ps->items.size() > 3) fail(ps->where, "ProblemSize needs 1 to 3 entries");
      for (const Doc& item : ps->items) s.problem_size.push_back(bound(item, "ProblemSize"));
    } else {
      s.problem_size.push_back(bound(*ps, "ProblemSize"));
    }
    const char* keys[] = {"GridDivX", "GridDivY", "GridDivZ"};
    for (int i = 0; i < 3; ++i) {
      const Doc* g = d.find(keys[i]);
      if (!g || g->is_null()) {
        if (s.block[i].expression.text() != "1") s.grid_div[i].push_back(s.block[i]);  // divide by the block
        continue;
      }
      for (const Doc& item : need_list(*g, keys[i]).items) s.grid_div[i].push_back(bound(item, keys[i]));
    }
    if (d.find("GlobalSize")) s.notes.push_back("GlobalSize is not used: ProblemSize and GridDiv* give the grid");
  } else {
    s.grid_mode = GridMode::GlobalSize;
    auto g = xyz(required(d, "GlobalSize", "KernelSpecification (without ProblemSize)"), "GlobalSize");
    s.grid.assign(g.begin(), g.end());
    s.problem_size = {one()};
  }
  s.global_size_in_threads = false;
  if (const Doc* t = d.find("GlobalSizeType")) {
    const std::string& type = need_string(*t, "GlobalSizeType");
    if (type != "CUDA" && type != "OpenCL") fail(t->where, "GlobalSizeType must be CUDA or OpenCL, not '" + type + "'");
    s.global_size_in_threads = type == "OpenCL";
  }
  const Doc* smem = d.find("SharedMemory");
  s.shared_memory = smem && !smem->is_null() ? bound(*smem, "SharedMemory") : BoundExpr{expr::Expression::parse("0"), {}};
}

void note_unused(const Doc& d, Draft& draft) {
  if (const Doc* r = d.find("ReferenceData"))
    draft.spec.notes.push_back("ReferenceData (line " + std::to_string(r->where.line) + ") is not supported; outputs are not verified");
  if (const Doc* m = d.find("Misc"))
    draft.spec.notes.push_back("Misc (line " + std::to_string(m->where.line) + ") is ignored; ktune always compiles with NVRTC");
  if (const Doc* si = d.find("SimulationInput"))
    draft.spec.notes.push_back("SimulationInput (line " + std::to_string(si->where.line) + ") is ignored; use ktune tune --simulate");
  if (const Doc* st = d.find("Stream"); st && !st->is_null())
    draft.spec.notes.push_back("Stream is ignored; ktune launches on its own stream");
}

}  // namespace

void read_t1_kernel(const Doc& d, Draft& draft) {
  need_map(d, "KernelSpecification");
  check_keys(d, {"Language", "CompilerOptions", "BenchmarkName", "KernelName", "KernelFile", "KernelTypeNames",
                 "GlobalSizeType", "LocalSize", "GlobalSize", "SharedMemory", "SimulationInput", "Stream", "Misc",
                 "Arguments", "ReferenceData", "ProblemSize", "GridDivX", "GridDivY", "GridDivZ"},
             "KernelSpecification");
  if (const Doc* l = d.find("Language"); l && need_string(*l, "Language") != "CUDA")
    fail(l->where, "Language '" + l->str() + "' is not supported; ktune tunes CUDA kernels");
  if (const Doc* t = d.find("KernelTypeNames"); t && !need_list(*t, "KernelTypeNames").items.empty())
    fail(t->where, "KernelTypeNames (fixed template types) are not supported");
  KernelSpec& k = draft.spec.kernel;
  k.where = d.where;
  const Doc& name = required(d, "KernelName", "KernelSpecification");
  k.name = need_string(name, "KernelName");
  require_identifier(k.name, name.where, "KernelName");
  const Doc& file = required(d, "KernelFile", "KernelSpecification");
  k.source_path = resolve_path(draft.spec.dir, need_string(file, "KernelFile"));
  if (file_for_gpu(k.source_path, file.where, "KernelFile", draft))
    k.source = read_text_file(k.source_path, file.where, "KernelFile");
  if (const Doc* o = d.find("CompilerOptions")) k.compiler_options = need_string_list(*o, "CompilerOptions");
  read_t1_geometry(d, draft);
  if (const Doc* args = d.find("Arguments")) {
    const auto& items = need_list(*args, "Arguments").items;
    for (size_t i = 0; i < items.size(); ++i) draft.spec.arguments.push_back(read_t1_argument(items[i], i, draft));
  }
  note_unused(d, draft);
}

}  // namespace ktune::spec_detail
