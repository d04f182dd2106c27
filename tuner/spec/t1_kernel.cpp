// T1 `KernelSpecification`: the kernel, its launch geometry and arguments.
//
// Geometry follows Kernel Tuner's T1 reader where the file gives a ProblemSize
// (grid = ceil(ProblemSize / product(GridDiv))); otherwise GlobalSize, read as
// blocks (GlobalSizeType CUDA, the default, as in BAT's runner) or as threads
// (OpenCL: grid = ceil(GlobalSize / LocalSize)). LocalSize is the block.
#include <cctype>
#include <map>

#include "tuner/spec/build.h"

namespace ktune::spec_detail {

namespace {

BoundExpr bound(const Doc& d, std::string_view what) { return {need_expression(d, what), {}}; }
BoundExpr one() { return {expr::Expression::parse("1"), {}}; }

std::array<BoundExpr, 3> xyz(const Doc& section, std::string_view what, Draft& draft) {
  Doc d = t1_map(section, {"X", "Y", "Z"}, {}, what, draft);
  required(d, "X", what);
  std::array<BoundExpr, 3> out{one(), one(), one()};
  const char* axes[] = {"X", "Y", "Z"};
  for (int i = 0; i < 3; ++i)
    if (const Doc* a = d.find(axes[i]); a && !a->is_null()) out[i] = bound(*a, std::string(what) + "." + axes[i]);
  return out;
}

ArgFill::Kind t1_fill(const Doc& d) {
  const std::string& s = need_string(d, "FillType");
  static const std::pair<std::string_view, ArgFill::Kind> kinds[] = {
      {"Constant", ArgFill::Kind::Constant},   {"Random", ArgFill::Kind::Random},
      {"Generator", ArgFill::Kind::Generator}, {"BinaryRaw", ArgFill::Kind::File},
      {"File", ArgFill::Kind::File},           {"Uninitialized", ArgFill::Kind::Zeros}};
  for (const auto& [word, kind] : kinds)
    if (t1_word_is(s, word)) return kind;
  fail(d.where, "FillType '" + s + "' is not supported (Constant, Random, Generator, BinaryRaw, Uninitialized)");
}

void read_t1_fill(const Doc& a, Argument& arg, Draft& draft) {
  ArgFill& f = arg.fill;
  f.kind = t1_fill(required(a, "FillType", "vector argument '" + arg.name + "'"));
  const Doc* value = a.find("FillValue");
  switch (f.kind) {
    case ArgFill::Kind::Constant:
      f.value = value ? coerce_to_elem(need_scalar(*value, "FillValue"), arg.type, value->where, "FillValue") : Value(0);
      break;
    case ArgFill::Kind::Random:
      // BAT draws normals and ignores FillValue; Kernel Tuner scales by it. Here:
      // uniform in [0, FillValue), a positive FillValue being the scale.
      if (value) {
        if (double hi = need_number(*value, "FillValue"); hi > 0) {
          f.lo = 0;
          f.hi = hi;
        }
      }
      if (const Doc* seed = a.find("RandomSeed")) {
        int64_t n = need_int(*seed, "RandomSeed");
        if (n < 0) fail(seed->where, "RandomSeed must not be negative");
        f.seed = uint64_t(n);
      }
      break;
    case ArgFill::Kind::Generator:
      f.generator = need_expression(required(a, "DataSource", "a Generator argument"), "DataSource");
      break;
    case ArgFill::Kind::File: {
      const Doc& src = required(a, "DataSource", "a BinaryRaw argument");
      f.path = resolve_path(draft.spec.dir, need_string(src, "DataSource"));
      file_for_gpu(f.path, src.where, "DataSource", draft);
      break;
    }
    default: break;
  }
}

// Vector types (float2, double4, ...) are buffers of their components.
ElemType t1_type(const Doc& d, int& components) {
  auto et = elem_type_with_lanes(need_string(d, "Type"), components);
  if (!et) fail(d.where, "argument Type '" + d.str() + "' is not supported");
  return *et;
}

Argument read_t1_argument(const Doc& entry, size_t index, const ConstantMap& sizes, Draft& draft) {
  Doc a = t1_map(entry,
                 {"Name", "Type", "TypeSize", "Size", "MemoryType", "MemType", "AccessType", "FillType", "FillValue",
                  "DataSource", "RandomSeed", "Output"},
                 {{"length", "Size"}, {"value", "FillValue"}, {"path", "DataSource"}}, "an Arguments entry", draft);
  Argument arg;
  arg.where = a.where;
  arg.name = a.find("Name") ? need_string(*a.find("Name"), "Name") : "arg" + std::to_string(index);
  int components = 1;
  arg.type = t1_type(required(a, "Type", "argument '" + arg.name + "'"), components);
  const Doc& mem = required(a, "MemoryType", "argument '" + arg.name + "'");
  std::string m = need_string(mem, "MemoryType");
  for (std::string_view word : {"Scalar", "Vector", "Symbol"})
    if (t1_word_is(m, word)) m = word;
  if (m != "Scalar" && m != "Vector" && m != "Symbol")
    fail(mem.where, "MemoryType '" + m + "' is not supported (Scalar, Vector, Symbol)");
  if (const Doc* o = a.find("Output")) arg.output = o->kind == Doc::Kind::Bool ? o->scalar.as_bool() : need_int(*o, "Output") != 0;
  if (const Doc* acc = a.find("AccessType")) {
    const std::string& s = need_string(*acc, "AccessType");
    if (!t1_word_is(s, "ReadOnly") && !t1_word_is(s, "WriteOnly") && !t1_word_is(s, "ReadWrite"))
      fail(acc->where, "AccessType must be ReadOnly, WriteOnly or ReadWrite");
    arg.read_write = t1_word_is(s, "ReadWrite");
  }
  if (const Doc* mt = a.find("MemType")) arg.constant_memory = t1_word_is(need_string(*mt, "MemType"), "Constant");
  arg.constant_memory = arg.constant_memory || m == "Symbol";
  if (m == "Scalar") {
    if (components != 1) fail(a.where, "a Scalar argument cannot have a vector Type");
    const Doc& v = required(a, "FillValue", "scalar argument '" + arg.name + "'");
    arg.value = coerce_to_elem(v.is_string() ? eval_constant(need_expression(v, "FillValue"), draft)
                                             : need_scalar(v, "FillValue"),
                               arg.type, v.where, "FillValue");
    return arg;
  }
  arg.pointer = true;
  const Doc& size = required(a, "Size", "vector argument '" + arg.name + "'");
  arg.components = components;
  arg.size = value_as_int(need_expression(size, "Size").evaluate(sizes), size.where, "Size") * components;
  if (arg.size < 1) fail(size.where, "Size must be at least 1");
  read_t1_fill(a, arg, draft);
  return arg;
}

// Kernel Tuner evaluates an argument's Size with `ProblemSize` (the list) and
// each tunable parameter bound to its list of values (so `max(filter_width)`
// sizes a buffer for every configuration); ktune reads T1 files so too.
ConstantMap size_scope(const Draft& draft) {
  ConstantMap m = constant_map(draft.spec);
  for (const Parameter& p : draft.params)
    if (!m.count(p.name)) m[p.name] = Value(ValueList(p.values.begin(), p.values.end()));
  const Spec& s = draft.spec;
  if (!m.count("ProblemSize") && s.grid_mode == GridMode::Divisors) {
    try {
      ValueList ps;
      for (const BoundExpr& e : s.problem_size) ps.push_back(eval_constant(e.expression, draft));
      m["ProblemSize"] = Value(std::move(ps));
    } catch (const Error&) {  // a size that depends on parameters: no ProblemSize to offer
    }
  }
  return m;
}

// BAT's runner evaluates SharedMemory with the launch in scope: BLOCK_SIZE_X..Z
// and GRID_SIZE_X..Z name the LocalSize and GlobalSize values. ktune writes
// those expressions in their place, so "8*BLOCK_SIZE_X" means what BAT meant.
BoundExpr shared_memory(const Doc& d, const Spec& s) {
  BoundExpr e = bound(d, "SharedMemory");
  if (!d.is_string()) return e;
  std::map<std::string, std::string> launch;
  const char* axes[] = {"X", "Y", "Z"};
  for (int i = 0; i < 3; ++i) {
    launch[std::string("BLOCK_SIZE_") + axes[i]] = "(" + s.block[i].expression.text() + ")";
    if (s.grid_mode == GridMode::GlobalSize) launch[std::string("GRID_SIZE_") + axes[i]] = "(" + s.grid[i].expression.text() + ")";
  }
  bool used = false;
  for (const std::string& n : e.expression.names()) used = used || launch.count(n);
  if (!used) return e;
  const std::string& text = d.str();
  std::string out;
  for (size_t i = 0; i < text.size();) {
    auto word = [&](size_t k) { return std::isalnum(static_cast<unsigned char>(text[k])) || text[k] == '_'; };
    if (!word(i)) {
      out += text[i++];
      continue;
    }
    size_t j = i;
    while (j < text.size() && word(j)) ++j;
    const std::string name = text.substr(i, j - i);
    auto it = launch.find(name);
    out += it != launch.end() ? it->second : name;
    i = j;
  }
  return {expr::Expression::parse(out, d.where), {}};
}

void read_t1_geometry(const Doc& d, Draft& draft) {
  Spec& s = draft.spec;
  s.block = xyz(required(d, "LocalSize", "KernelSpecification"), "LocalSize", draft);
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
    auto g = xyz(required(d, "GlobalSize", "KernelSpecification (without ProblemSize)"), "GlobalSize", draft);
    s.grid.assign(g.begin(), g.end());
    s.problem_size = {one()};
  }
  s.global_size_in_threads = false;
  if (const Doc* t = d.find("GlobalSizeType")) {
    const std::string& type = need_string(*t, "GlobalSizeType");
    if (!t1_word_is(type, "CUDA") && !t1_word_is(type, "OpenCL"))
      fail(t->where, "GlobalSizeType must be CUDA or OpenCL, not '" + type + "'");
    s.global_size_in_threads = t1_word_is(type, "OpenCL");
  }
  const Doc* smem = d.find("SharedMemory");
  s.shared_memory = smem && !smem->is_null() ? shared_memory(*smem, s) : BoundExpr{expr::Expression::parse("0"), {}};
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
  if (const Doc* r = d.find("ReferenceArguments"))
    draft.spec.notes.push_back(r->where.str() + ": ReferenceArguments are not supported; outputs are not verified");
  if (const Doc* dev = d.find("Device"))
    draft.spec.notes.push_back(dev->where.str() + ": Device is not used to pick a GPU; ktune tune --gpu I does");
  if (const Doc* p = d.find("Profiling"))
    draft.spec.notes.push_back(p->where.str() + ": Profiling is ignored");
}

}  // namespace

void read_t1_kernel(const Doc& section, Draft& draft) {
  Doc d = t1_map(section,
                 {"Language", "CompilerOptions", "BenchmarkName", "KernelName", "KernelFile", "KernelTypeNames",
                  "GlobalSizeType", "LocalSize", "GlobalSize", "SharedMemory", "SimulationInput", "Stream", "Misc",
                  "Arguments", "ReferenceData", "ReferenceArguments", "ProblemSize", "GridDivX", "GridDivY",
                  "GridDivZ", "Device", "Profiling"},
                 {{"blockSize", "LocalSize"}, {"gridSize", "GlobalSize"}}, "KernelSpecification", draft);
  // A kernel in another language still has a space to count and recordings to
  // replay; only compiling it is impossible.
  if (const Doc* l = d.find("Language"); l && !t1_word_is(need_string(*l, "Language"), "CUDA")) {
    const std::string why = "Language '" + l->str() + "': ktune compiles and launches CUDA kernels only";
    draft.spec.notes.push_back(l->where.str() + ": " + why + "; the space can be counted, searched and replayed");
    draft.spec.not_runnable.push_back({"Language", draft.spec.path, l->where, why});
    // Kernel Tuner's hyper-parameter tuning (hyper.py) scores each setting of
    // a strategy's options by `score`, higher is better, and records no time:
    // that is what its recordings are replayed by.
    if (t1_word_is(l->str(), "Hypertuner") && !draft.objective_named) {
      draft.spec.objective = "score";
      draft.spec.higher_is_better = true;
      draft.spec.objective_recorded = true;
      draft.spec.notes.push_back(l->where.str() + ": Language 'Hypertuner': the objective is the recorded 'score' "
                                 "(higher is better), as Kernel Tuner's hyper-parameter tuning scores a setting");
    }
  }
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
    const ConstantMap sizes = size_scope(draft);
    for (size_t i = 0; i < items.size(); ++i)
      draft.spec.arguments.push_back(read_t1_argument(items[i], i, sizes, draft));
  }
  note_unused(d, draft);
}

void no_t1_kernel(const Doc& root, Draft& draft) {
  Spec& s = draft.spec;
  s.notes.push_back(root.where.str() + ": the file has no KernelSpecification: the space can be counted, searched "
                    "and replayed, but nothing can be compiled or launched");
  s.not_runnable.push_back({"KernelSpecification", s.path, root.where,
                             "the T1 file has no KernelSpecification: there is no kernel to compile or launch"});
  s.kernel.where = root.where;
  unit_geometry(s);
}

}  // namespace ktune::spec_detail
