// Shared finishing of a spec read from YAML or T1: types, files, the search
// space and every expression compiled against it.
#include "tuner/spec/build.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>

#include "tuner/base/sha256.h"

namespace ktune::spec_detail {

ConstantMap constant_map(const Spec& spec) {
  ConstantMap m;
  for (const auto& [name, v] : spec.constants) m[name] = v;
  return m;
}

Value constant_value(Draft& draft, const std::string& name, Value own) {
  for (auto& o : draft.overrides)
    if (o.name == name) {
      o.used = true;
      return o.value;
    }
  return own;
}

Value eval_constant(const expr::Expression& e, const Draft& draft) {
  const auto& constants = draft.spec.constants;
  if (draft.constants_indexed > constants.size()) {  // some were dropped since: index again
    draft.constant_index.clear();
    draft.constants_indexed = 0;
  }
  for (; draft.constants_indexed < constants.size(); ++draft.constants_indexed)
    draft.constant_index[constants[draft.constants_indexed].first] = constants[draft.constants_indexed].second;
  ConstantMap named;
  for (const std::string& n : e.names()) {
    if (auto it = draft.constant_index.find(n); it != draft.constant_index.end()) {
      named.emplace(n, it->second);
      continue;
    }
    // A value fixed for the whole run (an argument's size, a fill) can use
    // constants only: say which names those are, and why a parameter is none.
    const size_t at = e.text().find(n);
    const SourceLocation where = at == std::string::npos ? e.where() : e.where().at_column(int(at));
    const bool tuned = std::any_of(draft.params.begin(), draft.params.end(), [&](const Parameter& p) { return p.name == n; });
    std::string listed;
    for (const auto& [name, value] : constants) listed += (listed.empty() ? "" : ", ") + name;
    throw Error::bad_input(
        "'" + n + "' " +
            (tuned ? "is a tunable parameter, and this value is the same for every configuration: write it with "
                     "constants (e.g. the largest value of '" + n + "')"
                   : "is no constant") +
            (listed.empty() ? "; the spec defines no constants" : "; the constants: " + listed),
        where);
  }
  return e.evaluate(named);
}

std::optional<ElemType> elem_type_from_name(std::string_view n) {
  static const std::pair<std::string_view, ElemType> names[] = {
      {"int8", ElemType::I8},     {"uint8", ElemType::U8},   {"int16", ElemType::I16},
      {"uint16", ElemType::U16}, {"int32", ElemType::I32},   {"uint32", ElemType::U32},
      {"int64", ElemType::I64},   {"uint64", ElemType::U64}, {"half", ElemType::F16},
      {"bf16", ElemType::BF16}, {"float", ElemType::F32},   {"double", ElemType::F64},
      // aliases
      {"int", ElemType::I32},     {"uint", ElemType::U32},   {"float32", ElemType::F32},
      {"float64", ElemType::F64}, {"float16", ElemType::F16}, {"bfloat16", ElemType::BF16},
      {"char", ElemType::I8},     {"byte", ElemType::I8},     {"bool", ElemType::U8},
  };
  for (const auto& [name, t] : names)
    if (name == n) return t;
  return std::nullopt;
}

std::optional<ElemType> elem_type_with_lanes(std::string_view n, int& components) {
  components = 1;
  if (auto t = elem_type_from_name(n)) return t;
  static const std::pair<std::string_view, ElemType> vectors[] = {
      {"float", ElemType::F32}, {"double", ElemType::F64}, {"half", ElemType::F16},
      {"int", ElemType::I32},   {"uint", ElemType::U32},   {"char", ElemType::I8},
      {"uchar", ElemType::U8}, {"short", ElemType::I16},   {"ushort", ElemType::U16},
      {"longlong", ElemType::I64}};
  if (n.size() < 2 || n.back() < '2' || n.back() > '4') return std::nullopt;
  const std::string_view base = n.substr(0, n.size() - 1);
  for (const auto& [name, t] : vectors)
    if (name == base) {
      components = n.back() - '0';
      return t;
    }
  return std::nullopt;
}

Value coerce_to_elem(const Value& v, ElemType t, const SourceLocation& where, std::string_view what) {
  if (!v.is_number()) fail(where, std::string(what) + " must be a number, not " + v.repr());
  if (is_float(t)) return Value(v.as_float());
  if (v.is_float()) {
    double f = v.as_float();
    if (!std::isfinite(f) || f != std::floor(f) || std::fabs(f) > 9.2e18)
      fail(where, std::string(what) + " must be an integer for type " + to_string(t) + ", not " + v.repr());
  }
  int64_t i = v.is_float() ? int64_t(v.as_float()) : v.as_int();
  int bits = int(elem_size(t)) * 8;
  bool is_unsigned = t == ElemType::U8 || t == ElemType::U16 || t == ElemType::U32 || t == ElemType::U64;
  bool fits = is_unsigned ? (i >= 0 && (bits == 64 || i < (int64_t{1} << bits)))
                          : (bits == 64 || (i >= -(int64_t{1} << (bits - 1)) && i < (int64_t{1} << (bits - 1))));
  if (!fits) fail(where, std::string(what) + " = " + std::to_string(i) + " does not fit in " + to_string(t));
  return Value(i);
}

void require_identifier(const std::string& name, const SourceLocation& where, std::string_view what) {
  bool ok = !name.empty() && (std::isalpha((unsigned char)name[0]) || name[0] == '_');
  for (char c : name) ok = ok && (std::isalnum((unsigned char)c) || c == '_');
  if (!ok) fail(where, std::string(what) + " '" + name + "' is not a valid name (letters, digits, _)");
}

void require_finite(const Value& v, const SourceLocation& where, std::string_view what) {
  // NaN equals nothing, itself included (a configuration no key finds again),
  // and neither NaN nor an infinity is a literal a kernel can be compiled with.
  if (v.is_float() && !std::isfinite(v.as_float()))
    fail(where, std::string(what) + ": " + v.repr() + " is not a finite number");
}

Parameter make_parameter(const std::string& name, std::vector<Value> values, const SourceLocation& where,
                         const SourceLocation& values_where) {
  if (values.empty()) fail(values_where, "parameter '" + name + "' has no values");
  Parameter p{name, std::move(values), ValueType::Int, where};
  bool any_float = false, any_int = false, any_bool = false, any_str = false;
  for (const Value& v : p.values) {
    if (v.is_list()) fail(values_where, "parameter '" + name + "': a value may not be a list (" + v.repr() + ")");
    require_finite(v, values_where, "parameter '" + name + "'");
    any_float |= v.is_float();
    any_int |= v.is_int();
    any_bool |= v.is_bool();
    any_str |= v.is_string();
  }
  int kinds = (any_float || any_int) + any_bool + any_str;
  if (kinds > 1)
    fail(values_where, "parameter '" + name + "' mixes value types (numbers, bools and strings may not mix)");
  p.type = any_str ? ValueType::String : any_bool ? ValueType::Bool : any_float ? ValueType::Float : ValueType::Int;
  std::set<std::string> seen;
  for (const Value& v : p.values)
    if (!seen.insert(v.repr()).second)
      fail(values_where, "parameter '" + name + "' lists the value " + v.repr() + " twice");
  return p;
}

std::string resolve_path(const std::string& dir, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_relative()) p = std::filesystem::path(dir) / p;
  return p.lexically_normal().string();
}

bool kernel_source_missing(const Spec& spec) {
  return std::any_of(spec.not_runnable.begin(), spec.not_runnable.end(),
                     [&](const Spec::NotRunnable& m) { return m.path == spec.kernel.source_path; });
}

bool file_for_gpu(const std::string& path, const SourceLocation& where, std::string_view what, Draft& draft) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) return true;
  draft.spec.not_runnable.push_back({std::string(what), path, where});
  draft.spec.notes.push_back(std::string(what) + " '" + path + "' (" + where.str() +
                             ") does not exist: the space, replays and strategy comparisons work without it; "
                             "compiling and tuning on a GPU need it");
  return false;
}

void unit_geometry(Spec& s) {
  const auto one = [] { return BoundExpr{expr::Expression::parse("1"), {}}; };
  s.grid_mode = GridMode::GlobalSize;
  s.grid = {one(), one(), one()};
  s.block = {one(), one(), one()};
  s.grid_div = {};
  s.problem_size = {one()};
  s.shared_memory = {expr::Expression::parse("0"), {}};
}

std::string read_text_file(const std::string& path, const SourceLocation& where, std::string_view what) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) fail(where, std::string(what) + " '" + path + "' does not exist");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(where, "cannot read " + std::string(what) + " '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

double need_duration(const Doc& d, std::string_view what) {
  if (d.is_number()) {
    double v = d.scalar.as_float();
    if (!(v > 0)) fail(d.where, std::string(what) + " must be positive");
    if (!(v <= kMaxDurationS)) fail(d.where, std::string(what) + " must be at most 365 days (" + d.scalar.repr() + " s)");
    return v;
  }
  const std::string& s = need_string(d, what);
  if (auto seconds = parse_duration(s)) return *seconds;
  fail(d.where, std::string(what) + " '" + s +
                    "' is not a duration of at most 365 days (e.g. 90, \"90s\", \"10m\", \"1.5h\", \"500ms\")");
}

Value doc_to_value(const Doc& d, std::string_view what) {
  if (!d.is_list()) return need_scalar(d, what);
  ValueList items;
  for (const Doc& item : d.items) items.push_back(doc_to_value(item, what));
  return Value(std::move(items));
}

namespace {

// Kernel Tuner's convention: a block size name that is neither a parameter nor
// a constant is 1 (a kernel tuned in x alone may still divide its grid by
// block_size_y). Only expressions see these; they are not constants of the spec.
ConstantMap expression_constants(const Draft& d) {
  ConstantMap m = constant_map(d.spec);
  static const std::vector<std::string> kernel_tuner_names = {"block_size_x", "block_size_y", "block_size_z"};
  const auto& names = d.spec.block_size_names.empty() ? kernel_tuner_names : d.spec.block_size_names;
  for (const std::string& n : names) {
    bool param = false;
    for (const auto& p : d.params) param = param || p.name == n;
    if (!param && !m.count(n)) m[n] = Value(int64_t{1});
  }
  return m;
}

expr::Scope param_scope(const Draft& d) {
  expr::Scope scope;
  for (size_t i = 0; i < d.params.size(); ++i) scope.slots[d.params[i].name] = int(i);
  scope.constants = expression_constants(d);
  return scope;
}

// What every CUDA device since compute capability 2.0 refuses, counted out of the
// space as Kernel Tuner counts it: more than 1024 threads in a block. Only where
// the block depends on parameters (a fixed block is the user's to get right).
std::vector<expr::Expression> device_limit_restrictions(Spec& s, const Draft& d) {
  std::string product;
  bool tuned = false;
  // The most threads a block can have where each extent is one parameter or a
  // number; unknown (bounded false) where an extent is an expression of several.
  double most = 1.0;
  bool bounded = true;
  for (const BoundExpr& b : s.block) {
    const auto& names = b.expression.names();
    const Parameter* whole = nullptr;
    for (const auto& p : d.params)
      if (b.expression.text() == p.name) whole = &p;
    for (const std::string& n : names)
      for (const auto& p : d.params) tuned = tuned || p.name == n;
    if (whole) {
      double top = 0;
      for (const Value& v : whole->values) top = std::max(top, v.is_number() ? v.as_float() : 0.0);
      most *= top;
    } else if (!names.empty() || b.expression.text().find_first_not_of("0123456789 ") != std::string::npos) {
      bounded = false;
    } else if (!b.expression.text().empty()) {
      most *= std::stod(b.expression.text());
    }
    product += (product.empty() ? "(" : " * (") + b.expression.text() + ")";
  }
  if (!tuned) return {};
  s.device_limits = {"threads per block <= 1024"};
  if (bounded && most <= 1024) return {};  // holds for every configuration: nothing to count out
  return {expr::Expression::parse(product + " <= 1024", s.kernel.where)};
}

void compile(BoundExpr& b, const expr::Scope& scope) { b.code = b.expression.compile(scope); }

void compile_geometry(Spec& s, const expr::Scope& scope) {
  for (auto& e : s.problem_size) compile(e, scope);
  for (auto& axis : s.grid_div)
    for (auto& e : axis) compile(e, scope);
  for (auto& e : s.grid) compile(e, scope);
  for (auto& e : s.block) compile(e, scope);
  compile(s.shared_memory, scope);
}

void compile_metrics(Draft& d, const expr::Scope& base) {
  expr::Scope scope = base;
  int slot = int(d.params.size());
  scope.slots["time_ms"] = slot++;
  scope.slots["energy_j"] = slot++;
  for (auto& m : d.spec.metrics) {
    compile(m.expr, scope);
    scope.slots[m.name] = slot++;
  }
  const Spec& s = d.spec;
  if (s.objective == "time" || s.objective == "energy" || s.objective_recorded) return;
  for (const auto& m : s.metrics)
    if (m.name == s.objective) return;
  std::string known = "time, energy";
  for (const auto& m : s.metrics) known += ", " + m.name;
  fail(d.objective_where, "objective '" + s.objective + "' is neither time nor a metric (known: " + known + ")");
}

void check_names(const Draft& d) {
  const Spec& s = d.spec;
  std::set<std::string, std::less<>> constants;
  for (const auto& [name, v] : s.constants) constants.insert(name);
  for (size_t i = 0; i < d.params.size(); ++i) {
    const std::string& n = d.params[i].name;
    if (constants.count(n)) fail(d.param_name_where[i], "parameter '" + n + "' has the name of a constant");
    if (n == "time_ms" || n == "energy_j") fail(d.param_name_where[i], "'" + n + "' is reserved for metrics");
  }
  for (const std::string& t : s.kernel.template_args) {
    bool param = false;
    for (const auto& p : d.params) param = param || p.name == t;
    if (!param && !constants.count(t))
      fail(s.kernel.where, "template argument '" + t + "' is neither a tunable parameter nor a constant");
  }
}

}  // namespace

void finish_spec(Draft& d) {
  Spec& s = d.spec;
  check_names(d);
  // A parameter declared twice with the same values is one parameter (the
  // benchmark hub's pso hyper-parameter space lists `popsize` twice; Kernel
  // Tuner keeps the last); with other values, which one was meant is unknown.
  std::unordered_map<std::string, size_t> first;  // a set, not pairs: linear in the number of parameters
  for (size_t i = 0; i < d.params.size();) {
    auto [at, fresh] = first.emplace(d.params[i].name, i);
    if (fresh) {
      ++i;
      continue;
    }
    const std::string line = std::to_string(d.param_name_where[at->second].line);
    if (d.params[i].values != d.params[at->second].values)
      fail(d.param_name_where[i], "duplicate parameter '" + d.params[i].name + "' (first at line " + line +
                                      ") with other values");
    s.notes.push_back(d.param_name_where[i].str() + ": parameter '" + d.params[i].name +
                      "' is declared again with the same values (first at line " + line + "); it is one parameter");
    d.params.erase(d.params.begin() + long(i));
    d.param_name_where.erase(d.param_name_where.begin() + long(i));
  }
  std::vector<expr::Expression> restrictions = s.restrictions;
  for (auto& r : device_limit_restrictions(s, d)) restrictions.push_back(std::move(r));
  s.space_.emplace(d.params, std::move(restrictions), expression_constants(d));
  const auto& ordered = s.space_->parameters();
  for (size_t i = 0; i < ordered.size(); ++i)
    if (ordered[i].name != d.params[i].name)
      throw Error::failed("internal: the search space reordered the parameters");
  expr::Scope scope = param_scope(d);
  for (const BoundExpr& e : s.problem_size)
    for (const std::string& n : e.expression.names())
      if (!s.problem_size_tuned &&
          std::any_of(d.params.begin(), d.params.end(), [&](const Parameter& p) { return p.name == n; })) {
        s.problem_size_tuned = true;
        s.notes.push_back(e.expression.where().str() + ": problem_size names the tunable parameter '" + n +
                          "': it sets each configuration's grid, and is no problem size of the results, which are "
                          "stored under none (as Kernel Tuner stores such a problem_size)");
      }
  try {
    compile_geometry(s, scope);
  } catch (const Error& e) {
    // A kernel in a language ktune does not launch never needs its geometry:
    // the benchmark hub's hyper-parameter spaces (Language Hypertuner) carry a
    // CUDA kernel's GridDiv naming `tile_size_x`, no parameter of theirs.
    const bool never_launched = std::any_of(s.not_runnable.begin(), s.not_runnable.end(),
                                            [](const Spec::NotRunnable& m) { return m.what == "Language"; });
    if (e.kind() != Error::Kind::BadInput || !never_launched) throw;
    s.notes.push_back(e.where().str() + ": " + e.message() + "; the launch geometry is not used (the kernel is not " +
                      "launched), so it is set aside");
    unit_geometry(s);
    compile_geometry(s, scope);
  }
  compile_metrics(d, scope);
  check_kernel_signature(d);
  for (auto& a : s.arguments) {
    if (!a.fill.generator) continue;
    expr::Scope g;
    g.slots["i"] = 0;
    g.constants = scope.constants;
    a.fill.generator_code = a.fill.generator->compile(g);
  }
  s.source_hash = kernel_source_missing(s) ? "" : Sha256::hex_of(s.kernel.source);
  s.hash = Sha256::hex_of(canonical_text(s));
}

}  // namespace ktune::spec_detail
