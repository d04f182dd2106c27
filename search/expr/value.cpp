#include "search/expr/value.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>

#include "search/expr/num.h"

namespace ktune {

const char* type_name(ValueType t) {
  switch (t) {
    case ValueType::Int: return "int";
    case ValueType::Float: return "float";
    case ValueType::Bool: return "bool";
    case ValueType::String: return "str";
    case ValueType::List: return "list";
  }
  return "?";
}

double Value::as_float() const {
  if (is_float()) return std::get<double>(v_);
  return static_cast<double>(as_int());
}

bool Value::truthy() const {
  switch (type()) {
    case ValueType::Int: return std::get<int64_t>(v_) != 0;
    case ValueType::Float: return std::get<double>(v_) != 0.0;
    case ValueType::Bool: return std::get<bool>(v_);
    case ValueType::String: return !as_string().empty();
    case ValueType::List: return !as_list().empty();
  }
  return false;
}

// Python formats a float's shortest round-trip digits in fixed notation when
// the decimal point falls within [-4, 16) digits of the first digit, else in
// exponent notation with at least two exponent digits.
std::string python_float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == 0.0) return std::signbit(d) ? "-0.0" : "0.0";

  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));  // "-1.2345e+02"
  std::string out;
  if (sci.front() == '-') {
    out += '-';
    sci.remove_prefix(1);
  }
  size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e))
    if (c != '.') digits += c;
  int exp10 = 0;
  std::string_view es = sci.substr(e + 1);
  if (es.front() == '+') es.remove_prefix(1);
  std::from_chars(es.data(), es.data() + es.size(), exp10);
  int decpt = exp10 + 1;  // value = 0.<digits> * 10^decpt
  int ndigits = static_cast<int>(digits.size());

  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += "0.";
      out.append(static_cast<size_t>(-decpt), '0').append(digits);
    } else if (decpt >= ndigits) {
      out += digits + std::string(static_cast<size_t>(decpt - ndigits), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(decpt)) + "." + digits.substr(static_cast<size_t>(decpt));
    }
    return out;
  }
  out += digits[0];
  if (ndigits > 1) out.append(".").append(digits, 1);
  char ebuf[16];
  std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
  return out + ebuf;
}

// Python's repr of a str: single quotes unless the text holds a single quote
// and no double quote; backslash escapes for control characters.
static std::string python_str_repr(const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos;
  bool has_double = s.find('"') != std::string::npos;
  char q = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c == static_cast<unsigned char>(q)) {
          out += '\\';
          out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\x%02x", c);
          out += hex;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + q;
}

std::string Value::str() const {
  switch (type()) {
    case ValueType::Int: return std::to_string(std::get<int64_t>(v_));
    case ValueType::Float: return python_float_repr(std::get<double>(v_));
    case ValueType::Bool: return std::get<bool>(v_) ? "True" : "False";
    case ValueType::String: return as_string();
    case ValueType::List: {
      std::string out = "[";
      bool first = true;
      for (const Value& v : as_list()) {
        if (!first) out += ", ";
        first = false;
        out += v.repr();
      }
      return out + "]";
    }
  }
  return {};
}

std::string Value::repr() const { return is_string() ? python_str_repr(as_string()) : str(); }

bool operator==(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (!a.is_float() && !b.is_float()) return a.as_int() == b.as_int();
    return expr::num_equal(expr::Num::of(a), expr::Num::of(b));
  }
  if (a.type() != b.type()) return false;
  if (a.is_string()) return a.as_string() == b.as_string();
  const ValueList& la = a.as_list();
  const ValueList& lb = b.as_list();
  if (la.size() != lb.size()) return false;
  for (size_t i = 0; i < la.size(); ++i)
    if (la[i] != lb[i]) return false;
  return true;
}

size_t Value::hash() const {
  switch (type()) {
    case ValueType::Int:
    case ValueType::Bool: return std::hash<int64_t>{}(as_int());
    case ValueType::Float: {
      // An integral float equals the int of the same value, so hashes as it.
      double d = std::get<double>(v_);
      if (d == std::trunc(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0)
        return std::hash<int64_t>{}(static_cast<int64_t>(d));
      return std::hash<double>{}(d);
    }
    case ValueType::String: return std::hash<std::string>{}(as_string());
    case ValueType::List: {
      size_t h = 0x345678;
      for (const Value& v : as_list()) h = (h ^ v.hash()) * 1000003u;
      return h ^ as_list().size();
    }
  }
  return 0;
}

std::optional<size_t> invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    size_t len = 0;
    uint32_t cp = 0, min = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07, min = 0x10000;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::nullopt;
}

std::vector<std::string_view> utf8_characters(std::string_view s) {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < s.size();) {
    size_t j = i + 1;
    while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string utf8_encode(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

std::string config_key(const std::vector<Value>& config) {
  std::string key;
  for (size_t i = 0; i < config.size(); ++i) {
    if (i) key += ',';
    key += config[i].str();
  }
  return key;
}

}  // namespace ktune
