// The expression language: parse, compile against parameters and constants
// of every kind, evaluate (the bytecode VM and the tree evaluator), and ask
// what a restriction would: its truth, why it raised, whether it can be a bool.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "search/expr/expr.h"

namespace {

using ktune::Value;
using ktune::ValueList;
using ktune::expr::CompiledExpr;
using ktune::expr::Expression;

const std::vector<std::pair<std::string, Value>>& slot_values() {
  static const std::vector<std::pair<std::string, Value>> v = {
      {"p", Value(128)}, {"q", Value(-3)}, {"f", Value(2.5)}, {"b", Value(true)}, {"s", Value("alg_2")},
      {"z", Value(0)},   {"L", Value(ValueList{Value(1), Value(2.5), Value("x")})}};
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ktune::fuzz::expect_answer([&] {
    const Expression e = Expression::parse(text, ktune::SourceLocation{"fuzz.yaml", 3, 7});
    ktune::expr::Scope scope;
    std::vector<Value> slots;
    std::vector<ktune::ValueType> types;
    for (const auto& [name, value] : slot_values()) {
      scope.slots[name] = static_cast<int>(slots.size());
      slots.push_back(value);
      types.push_back(value.type());
    }
    scope.constants = {{"N", Value(4096)}, {"M", Value(1.5)}, {"S", Value("abc")},
                       {"P", Value(ValueList{Value(1024), Value(768), Value(1)})}};
    const CompiledExpr c = e.compile(scope);
    (void)c.never_bool(types);
    if (c.truth(slots) == CompiledExpr::Truth::Raised) (void)c.why_raised(slots);
    (void)c.test(slots);
    try {
      const Value v = c.eval(slots);
      (void)v.repr();
      (void)v.hash();
    } catch (const ktune::expr::EvalError& err) {
      if (err.where().file != "fuzz.yaml" || err.where().line != 3) std::abort();  // located inside the text
    }
  });
  return 0;
}
