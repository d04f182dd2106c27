// The general evaluator: walks the resolved tree over Values. It is the
// reference semantics (the VM defers to it for every error and every
// non-scalar case) and is also what compile() uses to fold constants.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include "search/expr/expr.h"
#include "search/expr/ast.h"

namespace ktune::expr {
namespace {

const char* tn(const Value& v) { return type_name(v.type()); }
std::string q(const char* s) { return std::string("'") + s + "'"; }

std::string_view strip(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The positions seq[start:stop:step] selects from a sequence of length len,
// clamped as Python's PySlice_AdjustIndices does. REQUIRES: step != 0.
std::vector<size_t> slice_positions(std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step,
                                    size_t len) {
  int64_t n = static_cast<int64_t>(len);
  step = std::max(step, -INT64_MAX);  // as Python, so that -step cannot overflow
  auto clamp = [&](std::optional<int64_t> bound, int64_t when_omitted) {
    if (!bound) return when_omitted;
    int64_t b = *bound;
    if (b < 0) return b + n < 0 ? (step < 0 ? int64_t{-1} : int64_t{0}) : b + n;
    return b >= n ? (step < 0 ? n - 1 : n) : b;
  };
  int64_t from = clamp(start, step < 0 ? n - 1 : 0);
  int64_t to = clamp(stop, step < 0 ? -1 : n);
  int64_t count = 0;
  if (step > 0 && from < to) count = (to - from - 1) / step + 1;
  if (step < 0 && to < from) count = (from - to - 1) / -step + 1;
  std::vector<size_t> out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) out.push_back(static_cast<size_t>(from + k * step));
  return out;
}

class Evaluator {
 public:
  Evaluator(int num_locals, std::span<const Value> slots, const SourceLocation& where, uint64_t& budget)
      : slots_(slots), where_(where), locals_(static_cast<size_t>(num_locals)), budget_(budget) {}

  Value eval(const Node& n) {
    spend(1, n.col);
    switch (n.kind) {
      case NodeKind::Const: return n.value;
      case NodeKind::Slot: return slots_[static_cast<size_t>(n.index)];
      case NodeKind::Local: return locals_[static_cast<size_t>(n.index)];
      case NodeKind::Name: fail(n.col, "unresolved name '" + n.name + "'");
      case NodeKind::Neg:
      case NodeKind::Pos: return unary(n, eval(n.kids[0]));
      case NodeKind::Not: return Value(!eval(n.kids[0]).truthy());
      case NodeKind::Binary: {
        Value a = eval(n.kids[0]);
        return binary(n.bop, a, eval(n.kids[1]), n.col);
      }
      case NodeKind::And:
      case NodeKind::Or: {
        bool stop_on = n.kind == NodeKind::Or;
        Value v = eval(n.kids[0]);
        for (size_t k = 1; k < n.kids.size() && v.truthy() != stop_on; ++k) v = eval(n.kids[k]);
        return v;
      }
      case NodeKind::IfElse: return eval(n.kids[1]).truthy() ? eval(n.kids[0]) : eval(n.kids[2]);
      case NodeKind::Compare: return Value(chain(n));
      case NodeKind::List: {
        build_list(n.kids.size(), n.col);
        ValueList items;
        items.reserve(n.kids.size());
        for (const Node& k : n.kids) items.push_back(eval(k));
        return Value(std::move(items));
      }
      case NodeKind::Comp: return comprehension(n);
      case NodeKind::Call: return call(n);
      case NodeKind::Index: {
        Value seq = eval(n.kids[0]);
        return index(seq, eval(n.kids[1]), n.col);
      }
      case NodeKind::Slice: return slice(n);
    }
    fail(n.col, "unknown node");
  }

 private:
  [[noreturn]] void fail(int col, const std::string& message) const {
    throw EvalError(message, where_.at_column(col));
  }

  void spend(uint64_t units, int col) {
    if (units > budget_) {
      budget_ = 0;
      fail(col, "expression needs too much work (more than " + std::to_string(kMaxWork) +
                    " steps: lists, strings and loops this large are not supported)");
    }
    budget_ -= units;
  }
  // The cost of building a list of n elements (checked against kMaxLength).
  void build_list(size_t n, int col) {
    if (n > kMaxLength) fail(col, "list too large (more than " + std::to_string(kMaxLength) + " elements)");
    spend(n * kListElementWork, col);
  }
  void build_string(size_t bytes, int col) {
    if (bytes > kMaxLength) fail(col, "string too large (more than " + std::to_string(kMaxLength) + " bytes)");
    spend(bytes, col);
  }

  // Python ==, with every element compared paid for: lists that share their
  // elements are cheap to build and could otherwise be dear to compare.
  bool equal(const Value& a, const Value& b, int col) {
    if (a.is_list() && b.is_list()) {
      const ValueList &la = a.as_list(), &lb = b.as_list();
      if (la.size() != lb.size()) return false;
      spend(la.size(), col);
      for (size_t i = 0; i < la.size(); ++i)
        if (!equal(la[i], lb[i], col)) return false;
      return true;
    }
    if (a.is_string() && b.is_string()) spend(std::min(a.as_string().size(), b.as_string().size()) / 8, col);
    return a == b;
  }

  Value unary(const Node& n, const Value& a) {
    if (!a.is_number())
      fail(n.col, std::string("bad operand type for unary ") + (n.kind == NodeKind::Neg ? "-" : "+") + ": " + q(tn(a)));
    Num r;
    if (Err e = (n.kind == NodeKind::Neg ? num_neg : num_pos)(Num::of(a), r)) fail(n.col, e);
    return r.to_value();
  }

  Value repeat(const Value& seq, const Value& times, int col) {
    size_t len = seq.is_string() ? seq.as_string().size() : seq.as_list().size();
    // An empty sequence repeated any number of times is empty: no loop over n.
    int64_t n = len == 0 ? 0 : std::max<int64_t>(times.as_int(), 0);
    if (len != 0 && static_cast<uint64_t>(n) > kMaxLength / len) fail(col, "repetition result too large");
    if (seq.is_string()) build_string(len * static_cast<size_t>(n), col);
    else build_list(len * static_cast<size_t>(n), col);
    if (seq.is_string()) {
      std::string s;
      for (int64_t k = 0; k < n; ++k) s += seq.as_string();
      return Value(std::move(s));
    }
    ValueList out;
    for (int64_t k = 0; k < n; ++k) out.insert(out.end(), seq.as_list().begin(), seq.as_list().end());
    return Value(std::move(out));
  }

  Value binary(BinOp op, const Value& a, const Value& b, int col) {
    if (a.is_number() && b.is_number()) {
      Num r;
      if (Err e = num_binary(op, Num::of(a), Num::of(b), r)) fail(col, e);
      return r.to_value();
    }
    bool a_int = a.is_int() || a.is_bool(), b_int = b.is_int() || b.is_bool();
    if (op == BinOp::Add && a.type() == b.type()) {
      if (a.is_string()) {
        build_string(a.as_string().size() + b.as_string().size(), col);
        return Value(a.as_string() + b.as_string());
      }
      build_list(a.as_list().size() + b.as_list().size(), col);
      ValueList out = a.as_list();
      out.insert(out.end(), b.as_list().begin(), b.as_list().end());
      return Value(std::move(out));
    }
    if (op == BinOp::Mul && (a.is_string() || a.is_list()) && b_int) return repeat(a, b, col);
    if (op == BinOp::Mul && (b.is_string() || b.is_list()) && a_int) return repeat(b, a, col);
    if (op == BinOp::Mod && a.is_string()) fail(col, "string formatting with % is not supported");
    fail(col, std::string("unsupported operand type(s) for ") + binop_symbol(op) + ": " + q(tn(a)) + " and " +
                  q(tn(b)));
  }

  bool contains(const Value& haystack, const Value& needle, int col) {
    if (haystack.is_list()) {
      spend(haystack.as_list().size(), col);
      for (const Value& v : haystack.as_list())
        if (equal(v, needle, col)) return true;
      return false;
    }
    if (haystack.is_string()) {
      if (!needle.is_string())
        fail(col, std::string("'in <string>' requires string as left operand, not ") + tn(needle));
      // A substring search may compare the needle at every position.
      const uint64_t h = haystack.as_string().size(), w = needle.as_string().size();
      spend(h / 8 + 1, col);
      if (w > 0 && h / w < kMaxWork) spend(h / 8 * std::min<uint64_t>(w, kMaxWork) / 8, col);
      return haystack.as_string().find(needle.as_string()) != std::string::npos;
    }
    fail(col, std::string("argument of type ") + q(tn(haystack)) + " is not iterable");
  }

  bool compare(CmpOp op, const Value& a, const Value& b, int col) {
    switch (op) {
      case CmpOp::Eq: return equal(a, b, col);
      case CmpOp::Ne: return !equal(a, b, col);
      case CmpOp::In: return contains(b, a, col);
      case CmpOp::NotIn: return !contains(b, a, col);
      default: break;
    }
    if ((a.is_number() && b.is_number()) || (a.is_string() && b.is_string())) {
      if (a.is_string()) spend(std::min(a.as_string().size(), b.as_string().size()) / 8, col);
      bool r = false;
      num_compare(op, Num::of(a), Num::of(b), r);
      return r;
    }
    if (a.is_list() && b.is_list()) {  // lexicographic, as Python
      const ValueList &la = a.as_list(), &lb = b.as_list();
      for (size_t k = 0; k < la.size() && k < lb.size(); ++k) {
        spend(1, col);
        if (!equal(la[k], lb[k], col)) return compare(op, la[k], lb[k], col);
      }
      return compare(op, Value(static_cast<int64_t>(la.size())), Value(static_cast<int64_t>(lb.size())), col);
    }
    fail(col, q(cmpop_symbol(op)) + " not supported between instances of " + q(tn(a)) + " and " + q(tn(b)));
  }

  bool chain(const Node& n) {
    Value left = eval(n.kids[0]);
    for (size_t k = 0; k < n.cmp_ops.size(); ++k) {
      Value right = eval(n.kids[k + 1]);
      if (!compare(n.cmp_ops[k], left, right, n.cmp_cols[k])) return false;
      left = std::move(right);
    }
    return true;
  }

  // The items of a list (the list itself, not a copy) or the characters of a
  // str (built in `chars`). REQUIRES: v outlives the result.
  const ValueList& iterate(const Value& v, ValueList& chars, int col) {
    if (v.is_list()) return v.as_list();
    chars = items(v, col);
    return chars;
  }

  // The items of a list or the characters of a str.
  ValueList items(const Value& v, int col) {
    if (v.is_list()) {
      build_list(v.as_list().size(), col);
      return v.as_list();
    }
    if (!v.is_string()) fail(col, q(tn(v)) + " object is not iterable");
    build_list(v.as_string().size(), col);
    ValueList out;
    for (std::string_view c : utf8_characters(v.as_string())) out.emplace_back(std::string(c));
    return out;
  }

  Value comprehension(const Node& n) {
    const Value iterable = eval(n.kids[1]);
    ValueList chars;
    const ValueList& source = iterate(iterable, chars, n.kids[1].col);
    ValueList out;
    Value& var = locals_[static_cast<size_t>(n.index)];
    for (const Value& item : source) {
      var = item;
      if (n.kids.size() > 2 && !eval(n.kids[2]).truthy()) continue;
      if (out.size() >= kMaxLength) build_list(out.size() + 1, n.col);  // refuses
      spend(kListElementWork, n.col);
      out.push_back(eval(n.kids[0]));
    }
    return Value(std::move(out));
  }

  void require_subscriptable(const Value& seq, int col) const {
    if (!seq.is_list() && !seq.is_string()) fail(col, q(tn(seq)) + " object is not subscriptable");
  }

  Value index(const Value& seq, const Value& i, int col) {
    require_subscriptable(seq, col);
    const char* what = seq.is_list() ? "list" : "string";
    if (!i.is_int() && !i.is_bool()) {
      if (seq.is_list()) fail(col, std::string("list indices must be integers or slices, not ") + tn(i));
      fail(col, std::string("string indices must be integers, not ") + q(tn(i)));
    }
    std::vector<std::string_view> chars;
    if (seq.is_string()) {
      spend(seq.as_string().size(), col);
      chars = utf8_characters(seq.as_string());
    }
    int64_t len = static_cast<int64_t>(seq.is_list() ? seq.as_list().size() : chars.size());
    int64_t k = i.as_int();
    if (k < 0) k += len;
    if (k < 0 || k >= len) fail(col, std::string(what) + " index out of range");
    if (seq.is_list()) return seq.as_list()[static_cast<size_t>(k)];
    return Value(std::string(chars[static_cast<size_t>(k)]));
  }

  // A slice bound or step: Python's None when omitted.
  std::optional<int64_t> slice_part(const std::optional<Value>& v, int col) const {
    if (!v) return std::nullopt;
    if (!v->is_int() && !v->is_bool()) fail(col, "slice indices must be integers or None or have an __index__ method");
    return v->as_int();
  }

  Value slice(const Node& n) {
    Value seq = eval(n.kids[0]);
    std::optional<Value> written[3];
    for (size_t bit = 0, kid = 1; bit < 3; ++bit)
      if (n.parts & (1u << bit)) written[bit] = eval(n.kids[kid++]);
    require_subscriptable(seq, n.col);
    // Python reads the step first, so a zero step wins over a bad bound.
    std::optional<int64_t> step = slice_part(written[2], n.col);
    if (step == 0) fail(n.col, "slice step cannot be zero");
    std::optional<int64_t> start = slice_part(written[0], n.col), stop = slice_part(written[1], n.col);
    std::vector<std::string_view> chars;
    if (seq.is_string()) {
      spend(seq.as_string().size(), n.col);
      chars = utf8_characters(seq.as_string());
    }
    size_t len = seq.is_list() ? seq.as_list().size() : chars.size();
    std::vector<size_t> picked = slice_positions(start, stop, step.value_or(1), len);
    build_list(picked.size(), n.col);
    if (seq.is_list()) {
      ValueList out;
      out.reserve(picked.size());
      for (size_t k : picked) out.push_back(seq.as_list()[k]);
      return Value(std::move(out));
    }
    std::string out;
    for (size_t k : picked) out += chars[k];
    return Value(std::move(out));
  }

  int64_t int_arg(const Value& v, int col) {
    if (!v.is_int() && !v.is_bool()) fail(col, q(tn(v)) + " object cannot be interpreted as an integer");
    return v.as_int();
  }

  Value range(const std::vector<Value>& args, int col) {
    int64_t start = 0, stop = 0, step = 1;
    if (args.size() == 1) {
      stop = int_arg(args[0], col);
    } else {
      start = int_arg(args[0], col);
      stop = int_arg(args[1], col);
      if (args.size() == 3) step = int_arg(args[2], col);
    }
    if (step == 0) fail(col, "range() arg 3 must not be zero");
    __int128 span = static_cast<__int128>(stop) - start;
    __int128 count = step > 0 ? (span > 0 ? (span - 1) / step + 1 : 0) : (span < 0 ? (span + 1) / step + 1 : 0);
    if (count > static_cast<__int128>(kMaxLength))
      fail(col, "range() too large to expand into a list (more than " + std::to_string(kMaxLength) + " elements)");
    build_list(static_cast<size_t>(count), col);
    ValueList out;
    out.reserve(static_cast<size_t>(count));
    for (__int128 k = 0; k < count; ++k) out.emplace_back(static_cast<int64_t>(start + k * step));
    return Value(std::move(out));
  }

  Value min_max(const Node& n, const std::vector<Value>& args) {
    ValueList chars;
    const ValueList& pool = args.size() == 1 ? iterate(args[0], chars, n.col) : args;
    const char* name = builtin_name(n.fn);
    if (pool.empty()) fail(n.col, std::string(name) + "() arg is an empty sequence");
    CmpOp better = n.fn == Builtin::Min ? CmpOp::Lt : CmpOp::Gt;
    size_t best = 0;
    for (size_t k = 1; k < pool.size(); ++k) {
      spend(1, n.col);
      if (compare(better, pool[k], pool[best], n.col)) best = k;
    }
    return pool[best];
  }

  // Left to right from start (default 0) with +: Python 3.11's sum, the
  // reference for the whole language (3.12 compensates float rounding).
  Value sum(const Node& n, const std::vector<Value>& args) {
    ValueList chars;
    const ValueList& pool = iterate(args[0], chars, n.col);
    Value total = args.size() == 2 ? args[1] : Value(int64_t{0});
    if (total.is_string()) fail(n.col, "sum() can't sum strings [use ''.join(seq) instead]");
    if (total.is_list()) return join(total, pool, n.col);
    for (const Value& v : pool) {
      spend(1, n.col);
      total = binary(BinOp::Add, total, v, n.col);
    }
    return total;
  }

  // sum(lists, start_list), appending in place: adding copy by copy would be
  // quadratic in the result's length.
  Value join(const Value& start, const ValueList& lists, int col) {
    ValueList out = start.as_list();
    for (const Value& v : lists) {
      if (!v.is_list()) binary(BinOp::Add, start, v, col);  // throws the error `list + v` gives
      if (out.size() + v.as_list().size() > kMaxLength) build_list(out.size() + v.as_list().size(), col);  // refuses
      spend(1 + v.as_list().size() * kListElementWork, col);
      out.insert(out.end(), v.as_list().begin(), v.as_list().end());
    }
    return Value(std::move(out));
  }

  Value parse_number(const Node& n, const std::string& text) {
    std::string_view s = strip(text);
    std::string clean(s);
    if (n.fn == Builtin::Int) {
      clean.erase(std::remove(clean.begin(), clean.end(), '_'), clean.end());
      std::string_view d = clean;
      if (d.size() > 1 && d[0] == '+' && d[1] != '-') d.remove_prefix(1);
      int64_t v = 0;
      auto r = std::from_chars(d.data(), d.data() + d.size(), v);
      bool bad_underscore = s.find("__") != std::string_view::npos || s.starts_with('_') || s.ends_with('_');
      if (r.ec == std::errc::result_out_of_range) fail(n.col, "int() result too large (ktune ints are 64-bit)");
      if (d.empty() || r.ec != std::errc() || r.ptr != d.data() + d.size() || bad_underscore)
        fail(n.col, "invalid literal for int() with base 10: " + Value(text).repr());
      return Value(v);
    }
    std::string lower;
    for (char c : clean) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string_view body = lower;
    double sign = 1.0;
    if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
      sign = body[0] == '-' ? -1.0 : 1.0;
      body.remove_prefix(1);
    }
    if (!body.empty() && (body[0] == '+' || body[0] == '-')) body = "?";  // a second sign
    if (body == "inf" || body == "infinity") return Value(sign * HUGE_VAL);
    if (body == "nan") return Value(std::copysign(NAN, sign));
    double v = 0.0;
    auto r = std::from_chars(body.data(), body.data() + body.size(), v);
    if (r.ec == std::errc::result_out_of_range) v = std::strtod(std::string(body).c_str(), nullptr);
    else if (body.empty() || r.ec != std::errc() || r.ptr != body.data() + body.size())
      fail(n.col, "could not convert string to float: " + Value(text).repr());
    return Value(sign * v);
  }

  Value scalar_call(const Node& n, const std::vector<Value>& args) {
    if (args.empty()) return n.fn == Builtin::Int ? Value(int64_t{0}) : Value(0.0);
    const Value& x = args[0];
    if ((n.fn == Builtin::Int || n.fn == Builtin::Float) && x.is_string()) {
      spend(x.as_string().size(), n.col);
      return parse_number(n, x.as_string());
    }
    if (!x.is_number()) {
      if (n.fn == Builtin::Abs) fail(n.col, std::string("bad operand type for abs(): ") + q(tn(x)));
      if (n.fn == Builtin::Round) fail(n.col, std::string("type ") + tn(x) + " doesn't define __round__ method");
      fail(n.col, std::string(builtin_name(n.fn)) + "() argument must be a string or a number, not " + q(tn(x)));
    }
    if (args.size() == 2 && !args[1].is_number()) int_arg(args[1], n.col);
    Num nums[2];
    size_t argc = std::min<size_t>(args.size(), 2);  // the parser allows round() 2 arguments at most
    for (size_t k = 0; k < argc; ++k) nums[k] = Num::of(args[k]);
    Num r;
    if (Err e = num_call(n.fn, nums, static_cast<int>(argc), r)) fail(n.col, e);
    return r.to_value();
  }

  Value call(const Node& n) {
    std::vector<Value> args;
    args.reserve(n.kids.size());
    for (const Node& k : n.kids) args.push_back(eval(k));
    switch (n.fn) {
      case Builtin::Min:
      case Builtin::Max: return min_max(n, args);
      case Builtin::Len:
        if (args[0].is_string()) {
          spend(args[0].as_string().size(), n.col);
          return Value(static_cast<int64_t>(utf8_characters(args[0].as_string()).size()));
        }
        if (args[0].is_list()) return Value(static_cast<int64_t>(args[0].as_list().size()));
        fail(n.col, "object of type " + q(tn(args[0])) + " has no len()");
      case Builtin::Range: return range(args, n.col);
      case Builtin::List: return args.empty() ? Value(ValueList{}) : Value(items(args[0], n.col));
      case Builtin::Sum: return sum(n, args);
      default: return scalar_call(n, args);
    }
  }

  std::span<const Value> slots_;
  const SourceLocation& where_;
  std::vector<Value> locals_;
  uint64_t& budget_;  // steps left
};

}  // namespace

Value eval_tree(const Node& root, int num_locals, std::span<const Value> slots, const SourceLocation& where,
                uint64_t* budget) {
  uint64_t own = kMaxWork;
  return Evaluator(num_locals, slots, where, budget ? *budget : own).eval(root);
}

}  // namespace ktune::expr
