// Loading a spec, and what is evaluated per configuration: launch geometry,
// -D definitions, template arguments and metrics.
#include "tuner/spec/spec.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tuner/base/sha256.h"
#include "tuner/spec/build.h"

namespace ktune {

using spec_detail::Draft;

const char* fill_kind_name(ArgFill::Kind k) {
  static const char* names[] = {"zeros", "constant", "random", "sequence", "generator", "file", "randn", "copy"};
  return names[int(k)];
}

// ---------------------------------------------------------------- loading

Spec load_spec_text(const std::string& text, const std::string& path, Spec::Format format,
                    const ConstantOverrides& overrides) {
  Draft d;
  for (const auto& [name, v] : overrides) d.overrides.push_back({name, v, false});
  d.spec.format = format;
  d.spec.path = path;
  d.spec.dir = std::filesystem::absolute(std::filesystem::path(path)).parent_path().lexically_normal().string();
  d.objective_where = SourceLocation{path};
  if (format == Spec::Format::T1) {
    spec_detail::read_t1_spec(spec_detail::parse_json(text, path), d);
  } else {
    spec_detail::read_yaml_spec(spec_detail::parse_yaml(text, path), d);
  }
  for (const auto& o : d.overrides) {
    if (o.used) continue;
    std::string known;
    for (const auto& [name, v] : d.spec.constants) known += (known.empty() ? "" : ", ") + name;
    throw Error::bad_input("cannot set '" + o.name + "': the spec has no such constant" +
                               (known.empty() ? std::string(" (it has none)") : " (constants: " + known + ")"),
                           SourceLocation{path});
  }
  spec_detail::finish_spec(d);
  return std::move(d.spec);
}

namespace {

Value override_value(const std::string& v) {
  char* end = nullptr;
  errno = 0;
  long long i = std::strtoll(v.c_str(), &end, 10);
  if (!v.empty() && *end == '\0' && errno == 0) return Value(int64_t(i));
  double f = std::strtod(v.c_str(), &end);
  if (!v.empty() && *end == '\0' && std::isfinite(f)) return Value(f);
  if (v == "true" || v == "True") return Value(true);
  if (v == "false" || v == "False") return Value(false);
  return Value(v);
}

}  // namespace

ConstantOverrides parse_constant_overrides(const std::vector<std::string>& items) {
  ConstantOverrides out;
  for (const std::string& text : items) {
    const size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0) throw Error::bad_input("'" + text + "' is not NAME=VALUE");
    if (invalid_utf8(text)) throw Error::bad_input("'" + text + "' is not UTF-8 text");
    out.emplace_back(text.substr(0, eq), override_value(text.substr(eq + 1)));
  }
  return out;
}

Spec load_spec(const std::string& path, const ConstantOverrides& overrides) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw Error::bad_input("spec file does not exist", SourceLocation{path});
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  if (!in && !in.eof()) throw Error::bad_input("cannot read the spec file", SourceLocation{path});
  std::string text = s.str();
  std::string ext = std::filesystem::path(path).extension().string();
  size_t first = text.find_first_not_of(" \t\r\n");
  bool json = ext == ".json" ||
              (ext != ".yaml" && ext != ".yml" && first != std::string::npos && text[first] == '{');
  return load_spec_text(text, path, json ? Spec::Format::T1 : Spec::Format::Yaml, overrides);
}

void Spec::require_runnable() const {
  if (not_runnable.empty()) return;
  const NotRunnable& m = not_runnable.front();
  throw Error::bad_input(m.why.empty() ? m.what + " '" + m.path + "' does not exist" : m.why, m.where);
}

void Spec::verify_against_first_valid() {
  if (verify.mode != Verify::Mode::None)
    throw Error::bad_input("first-valid verification: the spec verifies its outputs already", verify.where);
  bool output = false;
  for (const Argument& a : arguments) output = output || a.output;
  if (!output)
    throw Error::bad_input(
        "first-valid verification: no argument is marked as an output (T1 Output: 1, YAML output: true)",
                           SourceLocation{path});
  verify.mode = Verify::Mode::FirstValid;
  hash = Sha256::hex_of(spec_detail::canonical_text(*this));
}

std::vector<std::string> restriction_notes(const Spec& spec) {
  const SearchSpace& space = spec.space();
  std::vector<std::string> out;
  for (const SearchSpace::RaisedRestriction& r : space.raised_restrictions()) {
    const expr::Expression& e = space.restrictions()[r.restriction];
    std::string where = e.where().str();
    out.push_back("restriction '" + e.text() + "'" + (where.empty() ? "" : " (" + where + ")") +
                  " raised an error in " + std::to_string(r.count) + " of its " + std::to_string(r.tested) +
                  " evaluations while the space was counted; those configurations count as invalid. First: " +
                  r.example);
  }
  return out;
}

void require_valid_configurations(const Spec& spec) {
  const SearchSpace& space = spec.space();
  if (space.count_valid() > 0) return;
  std::string why;
  for (const std::string& n : restriction_notes(spec)) why.append("; ").append(n);
  throw Error::failed("no valid configuration: the " + std::to_string(space.restrictions().size()) +
                          " restriction(s) exclude all " + space.cartesian_size() + " combinations of the " +
                          std::to_string(space.parameters().size()) + " parameters" + why,
                      SourceLocation{spec.path});
}

// ---------------------------------------------------------------- geometry

namespace {

// Evaluation failures inside geometry(): caught there and turned into the
// configuration's error string.
struct GeometryError {
  std::string message;
};

Value eval(const BoundExpr& b, const std::vector<Value>& config, const std::string& what) {
  try {
    return b.code.eval(config);
  } catch (const Error& e) {
    throw GeometryError{what + " = " + b.expression.text() + ": " + e.message()};
  }
}

double number(const Value& v, const BoundExpr& b, const std::string& what) {
  if (!v.is_number() || !std::isfinite(v.as_float()))
    throw GeometryError{what + " = " + b.expression.text() + " gives " + v.repr() + ", not a number"};
  return v.as_float();
}

int64_t whole(double v, const std::string& what, int64_t min) {
  if (v != std::floor(v) || std::fabs(v) > 9.0e18) throw GeometryError{what + " is not a whole number"};
  int64_t i = int64_t(v);
  if (i < min) throw GeometryError{what + " evaluates to " + std::to_string(i) + " (needs at least " + std::to_string(min) + ")"};
  return i;
}

const char* axis(int i) { return i == 0 ? ".x" : i == 1 ? ".y" : ".z"; }

int64_t ceil_div(double num, double den, bool exact_ints, const std::string& what) {
  if (den <= 0) throw GeometryError{what + ": divisor " + Value(den).str() + " is not positive"};
  if (exact_ints) {
    int64_t n = int64_t(num), d = int64_t(den);
    return n <= 0 ? 0 : (n + d - 1) / d;
  }
  return int64_t(std::ceil(num / den));
}

}  // namespace

LaunchResult Spec::geometry(const std::vector<Value>& config) const {
  try {
    Launch L;
    std::array<double, 3> ps{1, 1, 1};
    std::array<bool, 3> ps_int{true, true, true};
    for (size_t i = 0; i < problem_size.size(); ++i) {
      std::string what = std::string("problem_size") + axis(int(i));
      Value v = eval(problem_size[i], config, what);
      ps[i] = number(v, problem_size[i], what);
      ps_int[i] = !v.is_float();
      L.problem_size[i] = whole(std::ceil(ps[i]), what, 0);
    }
    for (int i = 0; i < 3; ++i) {
      std::string what = std::string("block") + axis(i);
      L.block[i] = whole(number(eval(block[i], config, what), block[i], what), what, 1);
    }
    for (int i = 0; i < 3; ++i) {
      std::string what = std::string("grid") + axis(i);
      if (grid_mode == GridMode::Divisors) {
        double div = 1;
        bool exact = ps_int[i];
        for (const auto& d : grid_div[i]) {
          Value v = eval(d, config, "grid_div" + std::string(axis(i)));
          div *= number(v, d, "grid_div" + std::string(axis(i)));
          exact = exact && !v.is_float();
        }
        L.grid[i] = ceil_div(ps[i], div, exact, what);
      } else {
        Value v = eval(grid[i], config, what);
        double g = number(v, grid[i], what);
        if (grid_mode == GridMode::GlobalSize && global_size_in_threads) {
          L.problem_size[i] = whole(std::ceil(g), what, 1);  // total threads
          L.grid[i] = ceil_div(g, double(L.block[i]), !v.is_float(), what);
        } else {
          L.grid[i] = whole(g, what, 1);
          if (grid_mode == GridMode::GlobalSize) L.problem_size[i] = L.grid[i] * L.block[i];
        }
      }
      if (L.grid[i] < 1) throw GeometryError{what + " evaluates to " + std::to_string(L.grid[i]) + " (needs at least 1)"};
    }
    L.shared_memory = whole(number(eval(shared_memory, config, "shared_memory"), shared_memory, "shared_memory"),
                            "shared_memory", 0);
    return {L, {}};
  } catch (const GeometryError& e) {
    return {std::nullopt, e.message};
  }
}

// ---------------------------------------------------------------- literals

std::optional<double> parse_duration(std::string_view text) {
  static const std::pair<std::string_view, double> units[] = {{"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}};
  for (const auto& [unit, scale] : units) {
    if (text.size() <= unit.size() || !text.ends_with(unit)) continue;
    const std::string num(text.substr(0, text.size() - unit.size()));
    char* end = nullptr;
    const double v = std::strtod(num.c_str(), &end);
    if (end && *end == 0 && v > 0 && v * scale <= kMaxDurationS) return v * scale;
  }
  return std::nullopt;
}

std::string c_define_literal(const Value& v) {
  if (v.is_bool()) return v.as_bool() ? "1" : "0";
  if (v.is_string()) return v.as_string();
  if (v.is_float()) {
    double d = v.as_float();
    if (std::isnan(d)) return "(0.0/0.0)";
    if (std::isinf(d)) return d > 0 ? "(1.0/0.0)" : "(-1.0/0.0)";
    return python_float_repr(d);  // always has '.' or an exponent: a double literal
  }
  return v.str();
}

std::string template_literal(const Value& v) {
  if (v.is_bool()) return v.as_bool() ? "true" : "false";
  return c_define_literal(v);
}

// ---------------------------------------------------------------- per configuration

std::vector<std::pair<std::string, std::string>> Spec::defines(const std::vector<Value>& config,
                                                               const Launch& launch) const {
  std::vector<std::pair<std::string, std::string>> out;
  auto is_param = [&](const std::string& n) { return space().parameter_index(n) >= 0; };
  static const char* grid_names[] = {"grid_size_x", "grid_size_y", "grid_size_z"};
  for (int i = 0; i < 3; ++i)
    if (!is_param(grid_names[i])) out.emplace_back(grid_names[i], std::to_string(launch.grid[i]));
  for (size_t i = 0; i < block_size_names.size() && i < 3; ++i) {
    const std::string& n = block_size_names[i];
    bool constant = false;
    for (const auto& c : constants) constant = constant || c.first == n;
    if (!is_param(n) && !constant) out.emplace_back(n, std::to_string(launch.block[i]));
  }
  std::vector<std::pair<std::string, std::string>> rest = defines(config);
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

std::vector<std::pair<std::string, std::string>> Spec::defines(const std::vector<Value>& config) const {
  std::vector<std::pair<std::string, std::string>> out;
  const auto& params = space().parameters();
  for (size_t i = 0; i < params.size() && i < config.size(); ++i) {
    bool templ = false;
    for (const auto& t : kernel.template_args) templ = templ || t == params[i].name;
    if (!templ) out.emplace_back(params[i].name, c_define_literal(config[i]));
  }
  for (const auto& [name, v] : fixed_defines) out.emplace_back(name, c_define_literal(v));
  // Kernel Tuner defines it in every compile; kernels written for it test it
  // (`#ifndef kernel_tuner` guards their stand-alone default parameters).
  out.emplace_back("kernel_tuner", "1");
  return out;
}

std::vector<std::string> Spec::template_arguments(const std::vector<Value>& config) const {
  std::vector<std::string> out;
  for (const std::string& name : kernel.template_args) {
    int i = space().parameter_index(name);
    if (i >= 0 && size_t(i) < config.size()) {
      out.push_back(template_literal(config[i]));
      continue;
    }
    for (const auto& [cname, v] : constants)
      if (cname == name) out.push_back(template_literal(v));
  }
  return out;
}

std::optional<Arch> KernelSpec::target_arch(const Arch& requested) const {
  if (archs.empty()) return requested;
  for (const Arch& a : archs)
    if (a == requested || (requested.suffix.empty() && a.sm == requested.sm)) return a;
  return std::nullopt;
}

std::string KernelSpec::archs_text() const {
  std::string s;
  for (const Arch& a : archs) s += (s.empty() ? "" : ", ") + a.name();
  return s;
}

std::string KernelSpec::not_written_for(const Arch& requested) const {
  return "kernel '" + name + "' is written for " + archs_text() + " (kernel.archs), not " + requested.name();
}

std::string Spec::name_expression(const std::vector<Value>& config) const {
  if (kernel.template_args.empty()) return kernel.name;
  std::string s = kernel.name + "<";
  auto args = template_arguments(config);
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
  return s + ">";
}

std::vector<std::optional<double>> Spec::evaluate_metrics(const std::vector<Value>& config, double time_ms,
                                                          std::optional<double> energy_j) const {
  std::vector<Value> slots(config);
  slots.resize(space().parameters().size());
  slots.push_back(Value(time_ms));
  slots.push_back(Value(energy_j.value_or(std::nan(""))));  // NaN: a metric over energy_j is absent without it
  std::vector<std::optional<double>> out;
  for (const auto& m : metrics) {
    std::optional<double> r;
    try {
      Value v = m.expr.code.eval(slots);
      if (v.is_number() && !std::isnan(v.as_float())) r = v.as_float();
    } catch (const Error&) {
      // a metric that cannot be evaluated for this configuration is simply absent
    }
    out.push_back(r);
    slots.push_back(Value(r.value_or(std::nan(""))));  // NaN: metrics built on an absent one are absent too
  }
  return out;
}

std::optional<double> Spec::objective_value(const std::vector<Value>& config, double time_ms,
                                            std::optional<double> energy_j) const {
  if (objective == "time") return time_ms;
  if (objective == "energy") return energy_j;
  auto values = evaluate_metrics(config, time_ms, energy_j);
  for (size_t i = 0; i < metrics.size(); ++i)
    if (metrics[i].name == objective) return values[i];
  return std::nullopt;
}

void Spec::set_objective(const std::string& name) {
  bool known = name == "time" || name == "energy";
  std::string names = "time, energy";
  for (const auto& m : metrics) {
    known = known || m.name == name;
    names += ", " + m.name;
  }
  if (!known)
    throw Error::bad_input("objective: '" + name + "' is neither time, energy nor a metric (known: " + names + ")");
  if (name == "time" || name == "energy") higher_is_better = false;
  objective = name;
}

bool Spec::needs_energy() const {
  if (objective == "energy") return true;
  for (const auto& m : metrics)
    for (const std::string& n : m.expr.expression.names())
      if (n == "energy_j") return true;
  return false;
}

}  // namespace ktune
