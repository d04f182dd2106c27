#include "search/expr/expr.h"

#include "search/expr/ast.h"

namespace ktune::expr {

CompiledExpr::CompiledExpr() = default;
CompiledExpr::~CompiledExpr() = default;
CompiledExpr::CompiledExpr(const CompiledExpr&) = default;
CompiledExpr& CompiledExpr::operator=(const CompiledExpr&) = default;
CompiledExpr::CompiledExpr(CompiledExpr&&) noexcept = default;
CompiledExpr& CompiledExpr::operator=(CompiledExpr&&) noexcept = default;

static bool enough_slots(const Program& p, std::span<const Value> slots) {
  return p.slots_used.empty() || static_cast<size_t>(p.slots_used.back()) < slots.size();
}

Value CompiledExpr::eval(std::span<const Value> slots) const {
  if (!program_) throw Error::failed("evaluating an expression that was never compiled");
  const Program& p = *program_;
  if (!enough_slots(p, slots))
    throw Error::failed("expression reads slot " + std::to_string(p.slots_used.back()) + " but only " +
                            std::to_string(slots.size()) + " values were given",
                        p.where);
  if (p.fast) {
    Num out;
    if (run_vm(p, slots, out) == VmResult::Ok) return out.to_value();
  }
  return eval_tree(p.root, p.num_locals, slots, p.where);
}

CompiledExpr::Truth CompiledExpr::truth(std::span<const Value> slots) const noexcept {
  if (!program_ || !enough_slots(*program_, slots)) return Truth::Raised;
  const Program& p = *program_;
  if (p.fast) {
    Num out;
    switch (run_vm(p, slots, out)) {
      case VmResult::Ok:
        if (out.kind == Num::Str) return Truth::Raised;
        return out.truthy() ? Truth::True : Truth::False;
      case VmResult::Error: return Truth::Raised;
      case VmResult::Bail: break;
    }
  }
  try {
    const Value v = eval_tree(p.root, p.num_locals, slots, p.where);
    if (v.is_string() || v.is_list()) return Truth::Raised;
    return v.truthy() ? Truth::True : Truth::False;
  } catch (...) {  // EvalError (or running out of memory) means "raised"; nothing may escape
    return Truth::Raised;
  }
}

bool CompiledExpr::test(std::span<const Value> slots) const noexcept {
  if (!program_ || !enough_slots(*program_, slots)) return false;
  const Program& p = *program_;
  if (p.fast) {
    Num out;
    switch (run_vm(p, slots, out)) {
      case VmResult::Ok: return out.truthy();
      case VmResult::Error: return false;
      case VmResult::Bail: break;
    }
  }
  try {
    return eval_tree(p.root, p.num_locals, slots, p.where).truthy();
  } catch (...) {  // EvalError means "invalid"; nothing else may escape a noexcept test
    return false;
  }
}

std::string CompiledExpr::why_raised(std::span<const Value> slots) const {
  try {
    const Value v = eval(slots);
    if (v.is_string() || v.is_list())
      return "gives " + v.repr() + " (a " + type_name(v.type()) + "), not True or False";
    return "gives " + v.repr();
  } catch (const Error& e) {
    return e.message();
  }
}

const std::vector<int>& CompiledExpr::slots_used() const {
  static const std::vector<int> none;
  return program_ ? program_->slots_used : none;
}

Expression Expression::parse(std::string_view text, SourceLocation where) {
  // Its tokens and tree take about a hundred times the text's bytes.
  if (text.size() > kMaxExpressionText)
    throw Error::bad_input("expression too long (" + std::to_string(text.size()) + " bytes; at most " +
                               std::to_string(kMaxExpressionText >> 20) + " MiB)",
                           where);
  Expression e;
  e.root_ = std::make_shared<const Node>(parse_tree(text, where));
  e.text_ = std::string(text);
  e.where_ = std::move(where);
  e.names_ = free_names(*e.root_);
  return e;
}

CompiledExpr Expression::compile(const Scope& scope) const {
  if (!root_) throw Error::failed("compiling an expression that was never parsed", where_);
  auto p = std::make_shared<Program>();
  p->where = where_;
  p->root = *root_;
  resolve_and_fold(*p, scope);
  emit_bytecode(*p);
  CompiledExpr c;
  c.program_ = std::move(p);
  return c;
}

Value Expression::evaluate(const std::map<std::string, Value, std::less<>>& constants) const {
  Scope scope;
  scope.constants = constants;
  CompiledExpr c = compile(scope);
  try {
    return c.eval({});
  } catch (const EvalError& e) {
    throw Error::bad_input(e.message(), e.where());
  }
}

}  // namespace ktune::expr
