// Private to tuner/spec/: a parsed YAML or JSON document in which every
// value and every map key remembers where it was written, plus the schema
// helpers the two spec readers share.
//
// Both readers reject duplicate keys and report syntax errors with file, line
// and column. For a string value, `where` is the position of its first
// character (after the opening quote), so an expression error's column lands
// inside the text as written.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ktune/error.h"
#include "search/expr/expr.h"
#include "search/expr/value.h"

namespace ktune::spec_detail {

struct Doc {
  enum class Kind { Null, Bool, Int, Float, String, List, Map };
  Kind kind = Kind::Null;
  Value scalar;       // Bool, Int, Float, String
  bool quoted = false;  // YAML: a quoted or block scalar (always a string)
  std::vector<Doc> items;  // List
  struct Member;
  std::vector<Member> members;  // Map, in document order
  SourceLocation where;

  bool is_map() const { return kind == Kind::Map; }
  bool is_list() const { return kind == Kind::List; }
  bool is_string() const { return kind == Kind::String; }
  bool is_number() const { return kind == Kind::Int || kind == Kind::Float; }
  bool is_null() const { return kind == Kind::Null; }
  // REQUIRES: is_string().
  const std::string& str() const { return scalar.as_string(); }
  // The member's value, or nullptr. REQUIRES: is_map().
  const Doc* find(std::string_view key) const;
  // Where the key was written (the map's own position if absent).
  SourceLocation key_location(std::string_view key) const;
};
struct Doc::Member {
  std::string key;
  SourceLocation key_where;
  Doc value;
};

const char* kind_name(Doc::Kind k);  // "a string", "a list", ...

// Both refuse (bad input, located) a document deeper than kMaxDocDepth or
// holding more than kMaxDocValues values or kMaxDocText bytes of scalar text,
// YAML aliases counted each time they are used: an alias bomb, or a file far
// beyond any spec, stops there instead of taking the memory it asks for.
// A YAML file must hold one document.
constexpr int kMaxDocDepth = 64;
constexpr size_t kMaxDocValues = 500'000;
constexpr size_t kMaxDocText = size_t{4} << 20;
Doc parse_yaml(const std::string& text, const std::string& file);
Doc parse_json(const std::string& text, const std::string& file);
// Line and column (1-based) of a byte offset in text.
SourceLocation location_of(const std::string& text, size_t offset, const std::string& file);

[[noreturn]] void fail(const SourceLocation& where, const std::string& message);

// Levenshtein distance (for "did you mean" hints).
size_t edit_distance(std::string_view a, std::string_view b);
// edit_distance(a, b) <= n, without the quadratic work when the lengths alone
// rule it out (a hostile key may be megabytes long).
bool within_edits(std::string_view a, std::string_view b, size_t n);

// Rejects any key outside `allowed`, naming the key, `context` and the allowed keys.
void check_keys(const Doc& map, std::initializer_list<std::string_view> allowed, std::string_view context);
// Requires a key; `context` names the map in the message.
const Doc& required(const Doc& map, std::string_view key, std::string_view context);

// Typed accessors: a value of another kind is a type clash naming `what`.
const Doc& need_map(const Doc& d, std::string_view what);
const Doc& need_list(const Doc& d, std::string_view what);
const std::string& need_string(const Doc& d, std::string_view what);
int64_t need_int(const Doc& d, std::string_view what);  // integral floats accepted
double need_number(const Doc& d, std::string_view what);  // finite: NaN and infinities are refused
bool need_bool(const Doc& d, std::string_view what);
// A literal scalar (number, bool or string) as a Value.
Value need_scalar(const Doc& d, std::string_view what);
// A string in a list-of-strings position (compiler options, template args).
std::vector<std::string> need_string_list(const Doc& d, std::string_view what);

// An expression: a string is parsed as written; a number or bool becomes a
// literal expression at the same place.
expr::Expression need_expression(const Doc& d, std::string_view what);

// Integer value of an evaluated expression (integral floats accepted).
int64_t value_as_int(const Value& v, const SourceLocation& where, std::string_view what);

}  // namespace ktune::spec_detail
