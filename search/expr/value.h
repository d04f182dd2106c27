// A value of the expression language and of a tunable parameter.
//
// Parameters take int, float, bool or string values; expressions may also
// produce lists (tune_params expressions, `in` operands, range()). Equality and
// ordering follow Python: 1 == 1.0 == True, and str(v) prints as Python's str()
// does (True, 2.45, 1e-06, 'abc' without quotes), which is also Kernel Tuner's
// cache-key format.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ktune {

class Value;
using ValueList = std::vector<Value>;

enum class ValueType { Int, Float, Bool, String, List };
const char* type_name(ValueType t);  // "int", "float", "bool", "str", "list"

class Value {
 public:
  Value() : v_(int64_t{0}) {}
  Value(int64_t i) : v_(i) {}
  Value(int i) : v_(int64_t{i}) {}
  Value(double d) : v_(d) {}
  Value(bool b) : v_(b) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(ValueList l) : v_(std::make_shared<const ValueList>(std::move(l))) {}

  ValueType type() const { return static_cast<ValueType>(v_.index()); }
  bool is_int() const { return v_.index() == 0; }
  bool is_float() const { return v_.index() == 1; }
  bool is_bool() const { return v_.index() == 2; }
  bool is_string() const { return v_.index() == 3; }
  bool is_list() const { return v_.index() == 4; }
  bool is_number() const { return v_.index() <= 2; }  // bool counts, as in Python

  // REQUIRES: the matching is_*() (as_int also accepts bool).
  int64_t as_int() const { return is_bool() ? std::get<bool>(v_) : std::get<int64_t>(v_); }
  double as_float() const;  // int, bool or float
  bool as_bool() const { return std::get<bool>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const ValueList& as_list() const { return *std::get<4>(v_); }

  bool truthy() const;  // Python truth value

  // Python's str(): True, 3, 2.45, 1e-06, 1.0, inf, abc, [1, 2, 'a'].
  std::string str() const;
  // Python's repr(): like str() but strings quoted ('abc').
  std::string repr() const;

  // Python ==: numbers compare by value across int/float/bool; lists elementwise.
  friend bool operator==(const Value& a, const Value& b);
  friend bool operator!=(const Value& a, const Value& b) { return !(a == b); }
  // Python-style hash consistent with ==  (1, 1.0 and True hash alike).
  size_t hash() const;

 private:
  std::variant<int64_t, double, bool, std::string, std::shared_ptr<const ValueList>> v_;
};

// Python's repr of a float (shortest round-trip digits, ".0" for integral,
// exponent form outside [1e-4, 1e16)).
std::string python_float_repr(double d);

// The text that identifies a configuration, Kernel Tuner's cache key: each
// value as Python's str(), joined by ',' ("128,alg_2,True,2.45"). The store's
// config_key column, the cache files' keys and every lookup by configuration.
std::string config_key(const std::vector<Value>& config);

// The offset of the first byte of `text` that is not part of well-formed
// UTF-8 (overlong forms, surrogates and code points past U+10FFFF included),
// or nullopt. Strings reach JSON (the store, --json, exports), which holds
// nothing else.
std::optional<size_t> invalid_utf8(std::string_view text);
// The UTF-8 encoding of a code point (REQUIRES: <= 0x10FFFF).
std::string utf8_encode(uint32_t code_point);
// The UTF-8 characters of `s`, as Python iterates a str (views into `s`).
std::vector<std::string_view> utf8_characters(std::string_view s);

}  // namespace ktune
