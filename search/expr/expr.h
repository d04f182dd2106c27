// The expression language: a small, safe subset of Python expressions used by
// restrictions, T1 Values/Conditions, grid and size expressions, constants and
// metrics (see docs/spec.md).
//
// An Expression is parsed once; compile() resolves each free name to a slot
// (a parameter whose value is passed at eval time) or a constant, producing a
// CompiledExpr that is evaluated many times without re-parsing.
//
// Semantics follow Python 3: / is true division, // and % floor (sign of the
// divisor), ** with a negative int exponent gives float, int/float mixing
// promotes, comparisons chain, and/or return operands, subscripts and slices
// of lists and strings index and clamp as Python's, ints are 64-bit (an
// overflow is an evaluation error, never UB).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/error.h"
#include "search/expr/value.h"

namespace ktune::expr {

// Raised while *evaluating* (division by zero, type mismatch, overflow,
// bad range() step). For a restriction this means "configuration invalid";
// elsewhere it becomes a bad-input Error. Column is 1-based within the text.
class EvalError : public Error {
 public:
  EvalError(std::string message, SourceLocation where) : Error(Kind::BadInput, std::move(message), std::move(where)) {}
};

// How free names resolve at compile time.
struct Scope {
  // Parameters: name -> slot index into the span given to eval().
  std::map<std::string, int, std::less<>> slots;
  // Constants: name -> value, folded into the compiled form.
  std::map<std::string, Value, std::less<>> constants;
};

class Node;  // the parsed tree (private to expr.cpp)
class Program;  // the compiled form (private to expr.cpp)

class CompiledExpr {
 public:
  CompiledExpr();
  ~CompiledExpr();
  CompiledExpr(const CompiledExpr&);
  CompiledExpr& operator=(const CompiledExpr&);
  CompiledExpr(CompiledExpr&&) noexcept;
  CompiledExpr& operator=(CompiledExpr&&) noexcept;

  // Evaluates with slots[i] the value of slot i. Throws EvalError.
  Value eval(std::span<const Value> slots) const;

  // A restriction's verdict on one configuration. Raised: evaluating raised
  // an EvalError (division by zero, `p in 5`, an overflow, too much work), or
  // gave a string or a list, which Python would take as a truth value and a
  // restriction never means.
  enum class Truth : uint8_t { False, True, Raised };
  Truth truth(std::span<const Value> slots) const noexcept;
  // Python's truth value of eval(); an EvalError (e.g. division by zero) gives false.
  bool test(std::span<const Value> slots) const noexcept;
  // Why truth() gives Raised for these slots: the error or the value given.
  std::string why_raised(std::span<const Value> slots) const;
  // "" when evaluating can give a bool; else what it gives instead ("an
  // int", "a str or a list"), judged from the compiled form with slot i of
  // type slot_types[i] (of any type past the end): arithmetic, numbers,
  // strings and lists are no condition.
  std::string never_bool(std::span<const ValueType> slot_types) const;
  // Slot indices this expression reads (sorted, unique).
  const std::vector<int>& slots_used() const;
  // True when it reads no slot (its value is then fixed).
  bool is_constant() const { return slots_used().empty(); }

 private:
  friend class Expression;
  std::shared_ptr<const Program> program_;
};

class Expression {
 public:
  // Parses `text`. On a syntax error throws Error::bad_input naming where.at_column(col).
  // `where` is the position of the text in its file (line; column of its first char).
  static Expression parse(std::string_view text, SourceLocation where = {});

  const std::string& text() const { return text_; }
  const SourceLocation& where() const { return where_; }
  // Free names (not comprehension variables, not builtins), first-appearance order.
  const std::vector<std::string>& names() const { return names_; }

  // Resolves names against `scope`. Unknown name: Error::bad_input with its column
  // and the list of known names.
  CompiledExpr compile(const Scope& scope) const;

  // Convenience: compile against constants only and evaluate (e.g. T1 Values,
  // constants). EvalError is rethrown as Error::bad_input with the location.
  Value evaluate(const std::map<std::string, Value, std::less<>>& constants = {}) const;

 private:
  std::string text_;
  SourceLocation where_;
  std::vector<std::string> names_;
  std::shared_ptr<const Node> root_;
};

}  // namespace ktune::expr
