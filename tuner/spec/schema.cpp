// Schema helpers shared by the YAML and T1 readers: key checks and typed
// accessors whose errors name what was expected, what was found, and where.
#include <algorithm>
#include <cmath>

#include "tuner/spec/doc.h"

namespace ktune::spec_detail {

namespace {

std::string join(std::initializer_list<std::string_view> names) {
  std::string s;
  for (auto n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

[[noreturn]] void clash(const Doc& d, std::string_view what, std::string_view expected) {
  std::string found = kind_name(d.kind);
  if (d.kind == Doc::Kind::String) found += " ('" + d.str() + "')";
  if (d.is_number() || d.kind == Doc::Kind::Bool) found += " (" + d.scalar.str() + ")";
  fail(d.where, std::string(what) + " must be " + std::string(expected) + ", not " + found);
}

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

bool within_edits(std::string_view a, std::string_view b, size_t n) {
  const size_t longer = std::max(a.size(), b.size()), shorter = std::min(a.size(), b.size());
  return longer - shorter <= n && edit_distance(a, b) <= n;
}

void check_keys(const Doc& map, std::initializer_list<std::string_view> allowed, std::string_view context) {
  for (const auto& m : map.members) {
    bool ok = false;
    for (auto a : allowed) ok = ok || a == m.key;
    if (ok) continue;
    std::string hint;
    for (auto a : allowed)
      if (hint.empty() && within_edits(a, m.key, 2)) hint = " (did you mean '" + std::string(a) + "'?)";
    fail(m.key_where,
         "unknown key '" + m.key + "' in " + std::string(context) + hint + "; allowed keys: " + join(allowed));
  }
}

const Doc& required(const Doc& map, std::string_view key, std::string_view context) {
  if (const Doc* d = map.find(key)) return *d;
  fail(map.where, std::string(context) + " needs the key '" + std::string(key) + "'");
}

const Doc& need_map(const Doc& d, std::string_view what) {
  if (!d.is_map()) clash(d, what, "a map");
  return d;
}

const Doc& need_list(const Doc& d, std::string_view what) {
  if (!d.is_list()) clash(d, what, "a list");
  return d;
}

const std::string& need_string(const Doc& d, std::string_view what) {
  if (!d.is_string()) clash(d, what, "a string");
  return d.str();
}

int64_t need_int(const Doc& d, std::string_view what) {
  if (d.kind == Doc::Kind::Int) return d.scalar.as_int();
  if (d.kind == Doc::Kind::Float) {
    double f = d.scalar.as_float();
    if (std::isfinite(f) && f == std::floor(f) && std::fabs(f) < 9.2e18) return int64_t(f);
  }
  clash(d, what, "an integer");
}

double need_number(const Doc& d, std::string_view what) {
  if (!d.is_number()) clash(d, what, "a number");
  if (!std::isfinite(d.scalar.as_float())) clash(d, what, "a finite number");
  return d.scalar.as_float();
}

bool need_bool(const Doc& d, std::string_view what) {
  if (d.kind != Doc::Kind::Bool) clash(d, what, "true or false");
  return d.scalar.as_bool();
}

Value need_scalar(const Doc& d, std::string_view what) {
  if (d.is_number() || d.is_string() || d.kind == Doc::Kind::Bool) return d.scalar;
  clash(d, what, "a number, bool or string");
}

std::vector<std::string> need_string_list(const Doc& d, std::string_view what) {
  std::vector<std::string> out;
  for (const Doc& item : need_list(d, what).items) out.push_back(need_string(item, std::string(what) + " entries"));
  return out;
}

expr::Expression need_expression(const Doc& d, std::string_view what) {
  if (d.is_string()) {
    if (d.str().find_first_not_of(" \t\r\n") == std::string::npos) fail(d.where, std::string(what) + " is empty");
    return expr::Expression::parse(d.str(), d.where);
  }
  if (d.is_number() || d.kind == Doc::Kind::Bool) return expr::Expression::parse(d.scalar.repr(), d.where);
  clash(d, what, "an expression (a string or a number)");
}

int64_t value_as_int(const Value& v, const SourceLocation& where, std::string_view what) {
  if (v.is_int() || v.is_bool()) return v.as_int();
  if (v.is_float()) {
    double f = v.as_float();
    if (std::isfinite(f) && f == std::floor(f) && std::fabs(f) < 9.2e18) return int64_t(f);
  }
  fail(where, std::string(what) + " must be an integer, but evaluates to " + v.repr());
}

}  // namespace ktune::spec_detail
