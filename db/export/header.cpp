// The C++17 header export (see header.h for the layout and contract).
#include "db/export/header.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "ktune/error.h"

namespace ktune::db {
namespace {

constexpr const char* kKeywords[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
    "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
    "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
    "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
    "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
    "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
    "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
    "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
    // Common macros: an identifier spelled like one would be rewritten.
    "NULL", "EOF", "assert", "errno", "INFINITY", "NAN"};

bool is_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

enum class Field { Bool, Int, Double, String };

// The narrowest field type that holds every stored value of parameter i.
Field field_type(const DeployKernel& k, size_t i) {
  bool all_bool = true, all_int = true, all_num = true;
  auto see = [&](const Value& v) {
    all_bool = all_bool && v.is_bool();
    all_int = all_int && (v.is_int() || v.is_bool());
    all_num = all_num && v.is_number();
  };
  for (const DeployEntry& e : k.entries) see(e.config.at(i));
  for (const DeployPortable& p : k.portable) see(p.config.at(i));
  if (all_bool) return Field::Bool;
  if (all_int) return Field::Int;
  return all_num ? Field::Double : Field::String;
}

const char* field_type_name(Field f) {
  switch (f) {
    case Field::Bool: return "bool";
    case Field::Int: return "std::int64_t";
    case Field::Double: return "double";
    case Field::String: return "const char*";
  }
  return "";
}

std::string string_literal(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f || c == '?') {  // '?' avoids trigraphs
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string int_literal(int64_t v) {
  if (v == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807LL - 1)";
  return std::to_string(v) + "LL";
}

std::string double_literal(double d) {
  if (std::isnan(d)) return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(d)) return d > 0 ? "std::numeric_limits<double>::infinity()" : "-std::numeric_limits<double>::infinity()";
  return python_float_repr(d);
}

std::string literal(const Value& v, Field f) {
  switch (f) {
    case Field::Bool: return v.as_bool() ? "true" : "false";
    case Field::Int: return int_literal(v.as_int());
    case Field::Double: return double_literal(v.as_float());
    case Field::String: return string_literal(v.str());
  }
  return "";
}

std::string size_text(const ProblemSize& ps) { return ps.empty() ? "unknown" : problem_size_key(ps); }

std::string size_tag(const ProblemSize& ps) {
  if (ps.empty()) return "any";
  std::string s;
  for (size_t i = 0; i < ps.size(); ++i) {
    if (i) s += 'x';
    s += std::to_string(ps[i]);
  }
  return s;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  return s;
}

std::string provenance(const DeployEntry& e) {
  std::ostringstream o;
  o << one_line(e.device) << " ("
    << (e.compute_capability ? "sm_" + std::to_string(e.compute_capability) : std::string("architecture unknown"))
    << "), problem size " << size_text(e.problem_size)
    << ": " << python_float_repr(e.time_ms) << " ms, " << (e.timestamp.empty() ? "no date" : one_line(e.timestamp))
    << ", run " << (e.run_id ? std::to_string(*e.run_id) : "none");
  if (e.replayed) o << ", REPLAYED from recorded data (not measured by ktune)";
  return o.str();
}

// One kernel's generated names and field types.
struct Names {
  std::string ns;
  std::vector<std::string> fields;
  std::vector<Field> types;
  std::vector<std::string> device_consts;  // parallel to entries
  std::vector<std::string> portable_consts;  // parallel to portable
};

std::string config_init(const Names& n, const std::vector<Value>& config) {
  std::string s = "{";
  for (size_t i = 0; i < n.fields.size(); ++i) s.append(i ? ", " : "").append(literal(config.at(i), n.types[i]));
  return s + "}";
}

std::string config_init(const Names& n, const DeployEntry& e) { return config_init(n, e.config); }

std::string fixed3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

void write_tables(std::ostream& o, const DeployKernel& k, const Names& n, const std::vector<DeployEntry>& arch,
                  const std::vector<std::string>& arch_consts) {
  o << "struct Entry {\n  const char* device;  // \"sm_XX\" in by_arch\n  int compute_capability;\n"
    << "  long long problem_size_total;  // 0 = unknown\n  Config config;\n};\n\n";
  o << "constexpr Entry by_device[] = {\n";
  for (size_t i = 0; i < k.entries.size(); ++i) {
    const DeployEntry& e = k.entries[i];
    o << "    {" << string_literal(e.device) << ", " << e.compute_capability << ", "
      << problem_size_total(e.problem_size) << "LL, device::" << n.device_consts[i] << "},\n";
  }
  o << "};\nconstexpr int by_device_count = " << k.entries.size() << ";\n\n";
  o << "constexpr Entry by_arch[] = {\n";
  for (size_t i = 0; i < arch.size(); ++i)
    o << "    {\"sm_" << arch[i].compute_capability << "\", " << arch[i].compute_capability << ", "
      << problem_size_total(arch[i].problem_size) << "LL, arch::" << arch_consts[i] << "},\n";
  if (arch.empty()) o << "    {\"\", 0, 0LL, most_often},  // placeholder: no compute capability known\n";
  o << "};\nconstexpr int by_arch_count = " << arch.size() << ";\n\n";
  o << "constexpr Entry by_size[] = {\n";
  for (size_t i = 0; i < k.portable.size(); ++i)
    o << "    {\"portable\", 0, " << problem_size_total(k.portable[i].problem_size) << "LL, portable::"
      << n.portable_consts[i] << "},\n";
  if (k.portable.empty()) o << "    {\"\", 0, 0LL, most_often},  // placeholder: no configuration measured on every device\n";
  o << "};\nconstexpr int by_size_count = " << k.portable.size() << ";\n\n";
}

void write_select(std::ostream& o) {
  o << "// For a device these results do not know: the most portable configuration of\n"
    << "// the nearest problem size total (ties: the smaller), else most_often.\n"
    << "constexpr Config fallback(long long problem_size_total) {\n"
    << "  int pick = -1;\n"
    << "  for (int i = 0; i < by_size_count; ++i) {\n"
    << "    const long long d = detail::distance(by_size[i].problem_size_total, problem_size_total);\n"
    << "    if (pick < 0) {\n      pick = i;\n      continue;\n    }\n"
    << "    const long long dp = detail::distance(by_size[pick].problem_size_total, problem_size_total);\n"
    << "    if (d < dp || (d == dp && by_size[i].problem_size_total < by_size[pick].problem_size_total)) pick = i;\n"
    << "  }\n"
    << "  return pick < 0 ? most_often : by_size[pick].config;\n}\n\n"
    << "// Same compute capability, else same major architecture (nearest minor),\n"
    << "// else fallback(); among those the nearest problem size total.\n"
    << "constexpr Config select(int compute_capability, long long problem_size_total) {\n"
    << "  int pick = -1;\n"
    << "  for (int pass = 0; pass < 2 && pick < 0; ++pass) {\n"
    << "    for (int i = 0; i < by_arch_count; ++i) {\n"
    << "      const int cc = by_arch[i].compute_capability;\n"
    << "      const bool match = pass == 0 ? cc == compute_capability : cc / 10 == compute_capability / 10;\n"
    << "      if (match && (pick < 0 || detail::closer(by_arch[i].compute_capability, by_arch[i].problem_size_total,\n"
    << "                                               by_arch[pick].compute_capability,\n"
    << "                                               by_arch[pick].problem_size_total, compute_capability,\n"
    << "                                               problem_size_total)))\n"
    << "        pick = i;\n"
    << "    }\n  }\n"
    << "  return pick < 0 ? fallback(problem_size_total) : by_arch[pick].config;\n}\n\n"
    << "// The exact device (nearest problem size), else select(compute_capability, ...).\n"
    << "constexpr Config select(const char* device_name, int compute_capability, long long problem_size_total) {\n"
    << "  int pick = -1;\n"
    << "  for (int i = 0; i < by_device_count; ++i) {\n"
    << "    if (!detail::same(by_device[i].device, device_name)) continue;\n"
    << "    if (pick < 0 || detail::distance(by_device[i].problem_size_total, problem_size_total) <\n"
    << "                        detail::distance(by_device[pick].problem_size_total, problem_size_total))\n"
    << "      pick = i;\n  }\n"
    << "  return pick < 0 ? select(compute_capability, problem_size_total) : by_device[pick].config;\n}\n";
}

void write_kernel(std::ostream& o, const DeployKernel& k, const Names& n) {
  o << "// kernel " << one_line(k.name) << "\nnamespace " << n.ns << " {\n\nstruct Config {\n";
  for (size_t i = 0; i < n.fields.size(); ++i)
    o << "  " << field_type_name(n.types[i]) << ' ' << n.fields[i] << ";  // " << one_line(k.param_names[i]) << '\n';
  o << "};\n\n// Best per device and problem size.\nnamespace device {\n";
  for (size_t i = 0; i < k.entries.size(); ++i)
    o << "// " << provenance(k.entries[i]) << "\nconstexpr Config " << n.device_consts[i] << " = "
      << config_init(n, k.entries[i]) << ";\n";
  o << "}  // namespace device\n\n// Best among each architecture's devices, per problem size.\nnamespace arch {\n";
  const std::vector<DeployEntry> arch = best_per_arch(k);
  IdentifierScope arch_scope;
  std::vector<std::string> arch_consts;
  for (const DeployEntry& e : arch) {
    arch_consts.push_back(arch_scope.make("sm_" + std::to_string(e.compute_capability) + "_" + size_tag(e.problem_size)));
    o << "// " << provenance(e) << "\nconstexpr Config " << arch_consts.back() << " = " << config_init(n, e) << ";\n";
  }
  const DeployEntry& often = most_often_winner(k);
  o << "}  // namespace arch\n\n// Best for the most (device, problem size) pairs; first: " << provenance(often)
    << "\nconstexpr Config most_often = " << config_init(n, often) << ";\n\n";
  o << "// Most portable per problem size: of the configurations measured on every\n"
    << "// device with results at that size, the one whose worst ratio to a device's\n"
    << "// optimum is smallest (select()'s answer for a device these results do not know).\n"
    << "namespace portable {\n";
  for (size_t i = 0; i < k.portable.size(); ++i) {
    const DeployPortable& p = k.portable[i];
    std::string devices;
    for (const std::string& d : p.devices) devices.append(devices.empty() ? "" : ", ").append(one_line(d));
    o << "// problem size " << size_text(p.problem_size) << ", over " << p.devices.size() << " device"
      << (p.devices.size() == 1 ? "" : "s") << " (" << devices << "): worst " << fixed3(p.worst)
      << " x a device's optimum, performance portability " << fixed3(p.pp) << "\nconstexpr Config "
      << n.portable_consts[i] << " = " << config_init(n, p.config) << ";\n";
  }
  o << "}  // namespace portable\n\n";
  write_tables(o, k, n, arch, arch_consts);
  write_select(o);
  o << "\n}  // namespace " << n.ns << "\n\n";
}

Names make_names(const DeployKernel& k, IdentifierScope& kernels) {
  Names n;
  n.ns = kernels.make(k.name);
  IdentifierScope fields({"Config"});
  for (size_t i = 0; i < k.param_names.size(); ++i) {
    n.fields.push_back(fields.make(k.param_names[i]));
    n.types.push_back(field_type(k, i));
  }
  IdentifierScope consts;
  for (const DeployEntry& e : k.entries) n.device_consts.push_back(consts.make(e.device + "_" + size_tag(e.problem_size)));
  IdentifierScope sizes;
  for (const DeployPortable& p : k.portable) n.portable_consts.push_back(sizes.make("size_" + size_tag(p.problem_size)));
  return n;
}

void write_kernel_tuner_defines(std::ostream& o, const DeployKernel& k, const Names& n, bool guard) {
  o << "// Kernel Tuner-compatible defines for " << one_line(k.name)
    << " (problem size ignored: per device, the configuration best for most sizes).\n";
  if (guard) o << "#if defined(KTUNE_TUNED_" << n.ns << ")\n";
  // Under a tuner (Kernel Tuner and ktune define kernel_tuner and pass the
  // parameters being tried as -D) these defines would clash with them.
  o << "#ifndef kernel_tuner\n";
  std::map<std::string, DeployKernel> per_device;
  for (const DeployEntry& e : k.entries) per_device[e.device].entries.push_back(e);
  IdentifierScope targets;
  bool first = true;
  auto defines = [&](const DeployEntry& e) {
    for (size_t i = 0; i < n.fields.size(); ++i) {
      const Value& v = e.config.at(i);
      o << "#define " << n.fields[i] << ' ' << (v.is_bool() ? (v.as_bool() ? "1" : "0") : one_line(v.str())) << '\n';
    }
  };
  for (const auto& [device, sub] : per_device) {
    std::string target = targets.make(kernel_tuner_target(device));
    o << (first ? "#if" : "#elif") << " defined(" << target << ")\n";
    first = false;
    defines(most_often_winner(sub));
  }
  o << "#else\n";
  if (const DeployPortable* p = widest_portable(k)) {
    DeployEntry e;
    e.config = p->config;
    defines(e);
  } else {
    defines(most_often_winner(k));
  }
  o << "#endif\n";
  o << "#endif  // kernel_tuner\n";
  if (guard) o << "#endif\n";
  o << '\n';
}

void check_namespace(const std::string& ns) {
  size_t pos = 0;
  while (true) {
    const size_t next = ns.find("::", pos);
    const std::string part = ns.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    if (part.empty() || sanitize_identifier(part) != part)
      throw Error::bad_input("namespace: '" + ns + "' is not a valid C++ namespace name");
    if (next == std::string::npos) return;
    pos = next + 2;
  }
}

}  // namespace

bool is_cpp_keyword(std::string_view s) {
  return std::find(std::begin(kKeywords), std::end(kKeywords), s) != std::end(kKeywords);
}

std::string sanitize_identifier(std::string_view name) {
  std::string s;
  bool gap = false;
  for (char c : name) {
    if (!is_alnum(c)) {
      gap = true;
      continue;
    }
    if (gap && !s.empty()) s += '_';
    gap = false;
    s += c;
  }
  if (s.empty()) s = "k";
  else if (s[0] >= '0' && s[0] <= '9') s.insert(0, "k_");
  if (is_cpp_keyword(s)) s += '_';
  return s;
}

std::string kernel_tuner_target(std::string_view device) {
  std::string s = "TARGET_";
  bool gap = false;
  for (char c : device) {
    if (!is_alnum(c)) {
      gap = true;
      continue;
    }
    if (gap) s += '_';
    gap = false;
    s += c;
  }
  if (gap) s += '_';
  return s;
}

IdentifierScope::IdentifierScope(std::vector<std::string> reserved) : used_(reserved.begin(), reserved.end()) {}

std::string IdentifierScope::make(std::string_view name) {
  const std::string base = sanitize_identifier(name);
  std::string s = base;
  // A keyword's base already ends in '_'; another would make a reserved "__".
  const std::string sep = base.back() == '_' ? "" : "_";
  for (int i = 2; used_.count(s); ++i) s = base + sep + std::to_string(i);
  used_.insert(s);
  return s;
}

std::string tuned_header(const std::vector<DeployKernel>& kernels, const HeaderOptions& options) {
  check_namespace(options.namespace_name);
  std::ostringstream o;
  o << "// Generated by `ktune export --format header`: the best configurations in a\n"
    << "// ktune results database. Regenerate rather than edit.\n#pragma once\n\n"
    << "#include <cstdint>\n#include <limits>\n\n";
  IdentifierScope kernel_scope({"detail", "std", "ktune_tuned"});
  std::vector<Names> names;
  for (const DeployKernel& k : kernels) names.push_back(make_names(k, kernel_scope));
  // Kernel sources include this header where a tuner passes the parameters as
  // -D (Kernel Tuner, ktune): the fields are kept from those macros here.
  std::set<std::string> fields;
  for (const Names& n : names) fields.insert(n.fields.begin(), n.fields.end());
  for (const std::string& f : fields) o << "#pragma push_macro(\"" << f << "\")\n#undef " << f << "\n";
  if (!fields.empty()) o << "\n";
  o << "namespace " << options.namespace_name << " {\n\n"
    << "namespace detail {\n"
    << "constexpr long long distance(long long a, long long b) { return a > b ? a - b : b - a; }\n"
    << "constexpr bool same(const char* a, const char* b) {\n"
    << "  while (*a && *a == *b) ++a, ++b;\n  return *a == *b;\n}\n"
    << "// Whether entry a beats entry b for (cc, total): nearer compute capability, then size.\n"
    << "constexpr bool closer(int cc_a, long long total_a, int cc_b, long long total_b, int cc, long long total) {\n"
    << "  return distance(cc_a, cc) != distance(cc_b, cc) ? distance(cc_a, cc) < distance(cc_b, cc)\n"
    << "                                                  : distance(total_a, total) < distance(total_b, total);\n"
    << "}\n}  // namespace detail\n\n";
  for (size_t i = 0; i < kernels.size(); ++i) write_kernel(o, kernels[i], names[i]);
  o << "}  // namespace " << options.namespace_name << "\n";
  for (const std::string& f : fields) o << "#pragma pop_macro(\"" << f << "\")\n";
  if (options.kernel_tuner_defines) {
    o << '\n';
    for (size_t i = 0; i < kernels.size(); ++i) write_kernel_tuner_defines(o, kernels[i], names[i], kernels.size() > 1);
  }
  return o.str();
}

}  // namespace ktune::db
