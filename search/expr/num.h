// Scalar semantics of the expression language (private to search/expr/).
//
// Num is an allocation-free scalar: an int, float, bool, or a *borrowed*
// string (a pointer into a Value that outlives the evaluation). Both the fast
// bytecode VM and the general tree evaluator do their arithmetic here, so the
// two paths cannot disagree on Python semantics.
//
// Operations return an Err: nullptr on success, else a static message (the
// Python error it stands for). kBail means "not a scalar case": the caller must
// fall back to the general evaluator, which knows strings and lists and gives
// the precise type error.
#pragma once

#include <cstdint>
#include <string>

#include "search/expr/value.h"

namespace ktune::expr {

enum class BinOp : uint8_t { Add, Sub, Mul, Div, FloorDiv, Mod, Pow };
enum class CmpOp : uint8_t { Lt, Le, Eq, Ne, Gt, Ge, In, NotIn };
enum class Builtin : uint8_t { Min, Max, Abs, Int, Float, Round, Len, Range, List, Sum };

const char* binop_symbol(BinOp op);
const char* cmpop_symbol(CmpOp op);
const char* builtin_name(Builtin b);

using Err = const char*;
extern const char kBail[];

struct Num {
  enum Kind : uint8_t { Int, Float, Bool, Str };
  Kind kind = Int;
  union {
    int64_t i;
    double f;
    const std::string* s;
  };

  Num() : i(0) {}
  static Num of_int(int64_t v) { Num n; n.kind = Int; n.i = v; return n; }
  static Num of_float(double v) { Num n; n.kind = Float; n.f = v; return n; }
  static Num of_bool(bool v) { Num n; n.kind = Bool; n.i = v ? 1 : 0; return n; }
  static Num of_str(const std::string* v) { Num n; n.kind = Str; n.s = v; return n; }
  // REQUIRES: v is not a list. A string is borrowed: v must outlive the Num.
  static Num of(const Value& v) {
    switch (v.type()) {
      case ValueType::Int: return of_int(v.as_int());
      case ValueType::Float: return of_float(v.as_float());
      case ValueType::Bool: return of_bool(v.as_bool());
      default: return of_str(&v.as_string());
    }
  }

  bool is_num() const { return kind != Str; }
  bool truthy() const { return kind == Float ? f != 0.0 : kind == Str ? !s->empty() : i != 0; }
  double to_float() const { return kind == Float ? f : static_cast<double>(i); }
  Value to_value() const;
};

Err num_binary(BinOp op, Num a, Num b, Num& out);
// Comparison (not In/NotIn). Ordering a str against a number bails.
Err num_compare(CmpOp op, Num a, Num b, bool& out);
// Python == between numbers/strings (never fails: mixed kinds are unequal).
bool num_equal(Num a, Num b);
Err num_neg(Num a, Num& out);
Err num_pos(Num a, Num& out);
// abs int float round min max over scalar arguments; anything else bails.
Err num_call(Builtin b, const Num* args, int argc, Num& out);

}  // namespace ktune::expr
