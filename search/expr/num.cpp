#include "search/expr/num.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace ktune::expr {

const char kBail[] = "<not a scalar operation>";

namespace {

constexpr Err kIntOverflow = "integer overflow (ktune ints are 64-bit)";
constexpr double kTwo63 = 9223372036854775808.0;

}  // namespace

const char* binop_symbol(BinOp op) {
  static const char* const names[] = {"+", "-", "*", "/", "//", "%", "**"};
  return names[static_cast<int>(op)];
}

const char* cmpop_symbol(CmpOp op) {
  static const char* const names[] = {"<", "<=", "==", "!=", ">", ">=", "in", "not in"};
  return names[static_cast<int>(op)];
}

const char* builtin_name(Builtin b) {
  static const char* const names[] = {"min", "max", "abs", "int", "float", "round", "len", "range", "list", "sum"};
  return names[static_cast<int>(b)];
}

Value Num::to_value() const {
  switch (kind) {
    case Int: return Value(i);
    case Float: return Value(f);
    case Bool: return Value(i != 0);
    case Str: return Value(*s);
  }
  return {};
}

namespace {

// Python's float // and % (floatobject.c): the remainder takes the divisor's sign.
Err float_divmod(double a, double b, double* div_out, double* mod_out) {
  if (b == 0.0) return div_out ? "float floor division by zero" : "float modulo by zero";
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, b);
  }
  if (div != 0.0) {
    double floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
    div = floordiv;
  } else {
    div = std::copysign(0.0, a / b);
  }
  if (div_out) *div_out = div;
  if (mod_out) *mod_out = mod;
  return nullptr;
}

Err float_pow(double a, double b, double& out) {
  if (b == 0.0) {
    out = 1.0;
    return nullptr;
  }
  if (a == 0.0 && b < 0.0) return "0.0 cannot be raised to a negative power";
  if (a < 0.0 && std::isfinite(b) && b != std::floor(b))
    return "negative number raised to a fractional power (the result would be complex)";
  out = std::pow(a, b);
  if (std::isinf(out) && std::isfinite(a) && std::isfinite(b)) return "float overflow in '**'";
  return nullptr;
}

Err int_pow(int64_t base, int64_t exp, Num& out) {
  if (exp < 0) {
    if (base == 0) return "0.0 cannot be raised to a negative power";
    out = Num::of_float(std::pow(static_cast<double>(base), static_cast<double>(exp)));
    return nullptr;
  }
  int64_t result = 1;
  while (exp) {
    if ((exp & 1) && __builtin_mul_overflow(result, base, &result)) return kIntOverflow;
    exp >>= 1;
    if (exp && __builtin_mul_overflow(base, base, &base)) return kIntOverflow;
  }
  out = Num::of_int(result);
  return nullptr;
}

Err int_binary(BinOp op, int64_t a, int64_t b, Num& out) {
  int64_t r = 0;
  switch (op) {
    case BinOp::Add:
      if (__builtin_add_overflow(a, b, &r)) return kIntOverflow;
      break;
    case BinOp::Sub:
      if (__builtin_sub_overflow(a, b, &r)) return kIntOverflow;
      break;
    case BinOp::Mul:
      if (__builtin_mul_overflow(a, b, &r)) return kIntOverflow;
      break;
    case BinOp::Div:
      if (b == 0) return "division by zero";
      // long double holds every int64 exactly, so only the final rounding remains.
      out = Num::of_float(static_cast<double>(static_cast<long double>(a) / static_cast<long double>(b)));
      return nullptr;
    case BinOp::FloorDiv:
      if (b == 0) return "integer division or modulo by zero";
      if (a == std::numeric_limits<int64_t>::min() && b == -1) return kIntOverflow;
      r = a / b;
      if (a % b != 0 && ((a < 0) != (b < 0))) --r;
      break;
    case BinOp::Mod:
      if (b == 0) return "integer modulo by zero";
      if (b == -1) break;  // r = 0; also avoids INT64_MIN % -1
      r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      break;
    case BinOp::Pow: return int_pow(a, b, out);
  }
  out = Num::of_int(r);
  return nullptr;
}

Err float_binary(BinOp op, double a, double b, Num& out) {
  double r = 0.0;
  switch (op) {
    case BinOp::Add: r = a + b; break;
    case BinOp::Sub: r = a - b; break;
    case BinOp::Mul: r = a * b; break;
    case BinOp::Div:
      if (b == 0.0) return "float division by zero";
      r = a / b;
      break;
    case BinOp::FloorDiv:
      if (Err e = float_divmod(a, b, &r, nullptr)) return e;
      break;
    case BinOp::Mod:
      if (Err e = float_divmod(a, b, nullptr, &r)) return e;
      break;
    case BinOp::Pow:
      if (Err e = float_pow(a, b, r)) return e;
      break;
  }
  out = Num::of_float(r);
  return nullptr;
}

// Exact comparison of an int with a float, as Python does (no rounding of the int).
int compare_int_float(int64_t i, double d) {
  if (d >= kTwo63) return -1;
  if (d < -kTwo63) return 1;
  double t = std::trunc(d);
  int64_t ti = static_cast<int64_t>(t);
  if (i != ti) return i < ti ? -1 : 1;
  double frac = d - t;
  return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}

// -1, 0, 1; 2 when unordered (a NaN is involved). REQUIRES: both numbers.
int compare3(Num a, Num b) {
  if (a.kind != Num::Float && b.kind != Num::Float) return a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
  if (a.kind == Num::Float && b.kind == Num::Float) {
    if (std::isnan(a.f) || std::isnan(b.f)) return 2;
    return a.f < b.f ? -1 : a.f > b.f ? 1 : 0;
  }
  if (a.kind == Num::Float) {
    if (std::isnan(a.f)) return 2;
    return -compare_int_float(b.i, a.f);
  }
  if (std::isnan(b.f)) return 2;
  return compare_int_float(a.i, b.f);
}

bool holds(CmpOp op, int c) {
  if (c == 2) return op == CmpOp::Ne;
  switch (op) {
    case CmpOp::Lt: return c < 0;
    case CmpOp::Le: return c <= 0;
    case CmpOp::Eq: return c == 0;
    case CmpOp::Ne: return c != 0;
    case CmpOp::Gt: return c > 0;
    case CmpOp::Ge: return c >= 0;
    default: return false;
  }
}

Err float_to_int(double d, int64_t& out) {
  if (std::isnan(d)) return "cannot convert float NaN to integer";
  if (std::isinf(d)) return "cannot convert float infinity to integer";
  d = std::trunc(d);
  if (d >= kTwo63 || d < -kTwo63) return kIntOverflow;
  out = static_cast<int64_t>(d);
  return nullptr;
}

// round(int, ndigits < 0): half-even at 10^-ndigits, exactly.
Err round_int(int64_t x, int64_t ndigits, Num& out) {
  if (ndigits >= 0) {
    out = Num::of_int(x);
    return nullptr;
  }
  if (ndigits < -38) {
    out = Num::of_int(0);
    return nullptr;
  }
  __int128 q = 1;
  for (int64_t k = 0; k < -ndigits; ++k) q *= 10;
  __int128 a = x < 0 ? -static_cast<__int128>(x) : x;
  __int128 r = a % q;
  __int128 base = a - r;
  if (2 * r > q || (2 * r == q && (base / q) % 2 == 1)) base += q;
  if (x < 0) base = -base;
  if (base > std::numeric_limits<int64_t>::max() || base < std::numeric_limits<int64_t>::min()) return kIntOverflow;
  out = Num::of_int(static_cast<int64_t>(base));
  return nullptr;
}

// round(float, ndigits): half-even on the float's *exact* decimal expansion,
// as Python does (round(2.675, 2) == 2.67 because 2.675 is 2.67499999...).
Err round_float(double x, int64_t ndigits, Num& out) {
  if (!std::isfinite(x) || x == 0.0 || ndigits > 323) {
    out = Num::of_float(x);
    return nullptr;
  }
  if (ndigits < -308) {
    out = Num::of_float(std::copysign(0.0, x));
    return nullptr;
  }
  // Every double has at most 1074 fractional digits, so this is exact.
  static constexpr int kExact = 1100;
  char buf[1500];
  auto res = std::to_chars(buf, buf + sizeof buf, std::fabs(x), std::chars_format::fixed, kExact);
  std::string s(buf, res.ptr);
  size_t dot = s.find('.');
  std::string digits = s.substr(0, dot) + s.substr(dot + 1);
  int64_t cut = static_cast<int64_t>(dot) + ndigits;  // digits kept
  if (cut < 1) {
    digits.insert(0, static_cast<size_t>(1 - cut), '0');
    cut = 1;
  }
  std::string kept = digits.substr(0, static_cast<size_t>(cut));
  char first = digits[static_cast<size_t>(cut)];
  bool rest_nonzero = digits.find_first_not_of('0', static_cast<size_t>(cut) + 1) != std::string::npos;
  bool up = first > '5' || (first == '5' && (rest_nonzero || (kept.back() - '0') % 2 == 1));
  if (up) {
    size_t k = kept.size();
    while (k > 0 && kept[k - 1] == '9') kept[--k] = '0';
    if (k == 0) kept.insert(0, 1, '1');
    else ++kept[k - 1];
  }
  std::string dec = kept + "e" + std::to_string(-ndigits);
  double r = 0.0;
  auto conv = std::from_chars(dec.data(), dec.data() + dec.size(), r);
  if (conv.ec == std::errc::result_out_of_range && r != 0.0) return "rounded value too large to represent";
  out = Num::of_float(std::copysign(r, x));
  return nullptr;
}

Err call_round(const Num* args, int argc, Num& out) {
  Num x = args[0];
  if (argc == 1) {
    if (x.kind != Num::Float) {
      out = Num::of_int(x.i);
      return nullptr;
    }
    int64_t r = 0;
    if (Err e = float_to_int(std::nearbyint(x.f), r)) return e;
    out = Num::of_int(r);
    return nullptr;
  }
  if (args[1].kind == Num::Float) return "'float' object cannot be interpreted as an integer";
  if (x.kind == Num::Float) return round_float(x.f, args[1].i, out);
  return round_int(x.i, args[1].i, out);
}

}  // namespace

Err num_binary(BinOp op, Num a, Num b, Num& out) {
  if (a.kind == Num::Str || b.kind == Num::Str) return kBail;
  if (a.kind != Num::Float && b.kind != Num::Float) return int_binary(op, a.i, b.i, out);
  return float_binary(op, a.to_float(), b.to_float(), out);
}

bool num_equal(Num a, Num b) {
  if (a.kind == Num::Str || b.kind == Num::Str) return a.kind == b.kind && *a.s == *b.s;
  return compare3(a, b) == 0;
}

Err num_compare(CmpOp op, Num a, Num b, bool& out) {
  if (a.kind == Num::Str || b.kind == Num::Str) {
    if (op == CmpOp::Eq || op == CmpOp::Ne) {
      out = num_equal(a, b) == (op == CmpOp::Eq);
      return nullptr;
    }
    if (a.kind != b.kind) return kBail;
    int c = a.s->compare(*b.s);
    out = holds(op, c < 0 ? -1 : c > 0 ? 1 : 0);
    return nullptr;
  }
  out = holds(op, compare3(a, b));
  return nullptr;
}

Err num_neg(Num a, Num& out) {
  if (a.kind == Num::Str) return kBail;
  if (a.kind == Num::Float) {
    out = Num::of_float(-a.f);
    return nullptr;
  }
  if (a.i == std::numeric_limits<int64_t>::min()) return kIntOverflow;
  out = Num::of_int(-a.i);
  return nullptr;
}

Err num_pos(Num a, Num& out) {
  if (a.kind == Num::Str) return kBail;
  out = a.kind == Num::Bool ? Num::of_int(a.i) : a;
  return nullptr;
}

Err num_call(Builtin b, const Num* args, int argc, Num& out) {
  for (int k = 0; k < argc; ++k)
    if (args[k].kind == Num::Str) return kBail;
  switch (b) {
    case Builtin::Abs:
      if (argc != 1) return kBail;
      if (args[0].kind == Num::Float) {
        out = Num::of_float(std::fabs(args[0].f));
        return nullptr;
      }
      if (args[0].i == std::numeric_limits<int64_t>::min()) return kIntOverflow;
      out = Num::of_int(args[0].i < 0 ? -args[0].i : args[0].i);
      return nullptr;
    case Builtin::Int: {
      if (argc != 1) return kBail;
      int64_t r = args[0].i;
      if (args[0].kind == Num::Float)
        if (Err e = float_to_int(args[0].f, r)) return e;
      out = Num::of_int(r);
      return nullptr;
    }
    case Builtin::Float:
      if (argc != 1) return kBail;
      out = Num::of_float(args[0].to_float());
      return nullptr;
    case Builtin::Round:
      if (argc != 1 && argc != 2) return kBail;
      return call_round(args, argc, out);
    case Builtin::Min:
    case Builtin::Max: {
      if (argc < 2) return kBail;
      CmpOp better = b == Builtin::Min ? CmpOp::Lt : CmpOp::Gt;
      Num best = args[0];
      for (int k = 1; k < argc; ++k)
        if (holds(better, compare3(args[k], best))) best = args[k];
      out = best;
      return nullptr;
    }
    default: return kBail;
  }
}

}  // namespace ktune::expr
