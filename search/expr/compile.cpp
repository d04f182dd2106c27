// compile(): name resolution, constant folding and bytecode emission.
#include <algorithm>
#include <climits>

#include "search/expr/expr.h"
#include "search/expr/ast.h"

namespace ktune::expr {
namespace {

// The VM's operand stack is a fixed array; deeper expressions use the tree.
constexpr int kMaxStack = 32;
constexpr int kMaxCallArgs = 8;

std::string known_names(const Scope& scope) {
  std::vector<std::string> names;
  for (const auto& [name, slot] : scope.slots) names.push_back(name);
  for (const auto& [name, value] : scope.constants) names.push_back(name);
  if (names.empty()) return " (no names are defined here)";
  std::string out = " (known names: ";
  for (size_t k = 0; k < names.size() && k < 40; ++k) out += (k ? ", " : "") + names[k];
  if (names.size() > 40) out += ", ... " + std::to_string(names.size() - 40) + " more";
  return out + ")";
}

void resolve(Node& n, const Scope& scope, std::vector<std::string>& bound, Program& p) {
  if (n.kind == NodeKind::Name) {
    for (size_t k = bound.size(); k-- > 0;) {
      if (bound[k] == n.name) {
        n.kind = NodeKind::Local;
        n.index = static_cast<int>(k);
        return;
      }
    }
    if (auto it = scope.slots.find(n.name); it != scope.slots.end()) {
      n.kind = NodeKind::Slot;
      n.index = it->second;
    } else if (auto c = scope.constants.find(n.name); c != scope.constants.end()) {
      n.kind = NodeKind::Const;
      n.value = c->second;
    } else {
      throw Error::bad_input("unknown name '" + n.name + "'" + known_names(scope), p.where.at_column(n.col));
    }
    return;
  }
  if (n.kind == NodeKind::Comp) {  // the iterable is resolved outside the loop variable's scope
    resolve(n.kids[1], scope, bound, p);
    bound.push_back(n.name);
    n.index = static_cast<int>(bound.size()) - 1;
    p.num_locals = std::max(p.num_locals, static_cast<int>(bound.size()));
    resolve(n.kids[0], scope, bound, p);
    if (n.kids.size() > 2) resolve(n.kids[2], scope, bound, p);
    bound.pop_back();
    return;
  }
  for (Node& k : n.kids) resolve(k, scope, bound, p);
}

struct Deps {
  bool slot = false;
  int min_local = INT_MAX;  // lowest comprehension variable read
  bool raised = false;      // a subtree raised when folded: nothing above it is folded
};

// Replaces each largest subtree that reads no slot and no enclosing
// comprehension variable by its value. Bottom-up, so each node is evaluated
// once, over children already folded: compiling stays linear in the size of
// the tree, and all the folding of one expression shares one work budget. A
// subtree whose evaluation fails is kept (and so is everything above it), so
// the error surfaces at run time with its column.
Deps fold(Node& n, int depth, Program& p, uint64_t& budget) {
  Deps d;
  switch (n.kind) {
    case NodeKind::Const: return d;
    case NodeKind::Slot: d.slot = true; return d;
    case NodeKind::Local: d.min_local = n.index; return d;
    default: break;
  }
  auto merge = [&d](const Deps& k) {
    d.slot = d.slot || k.slot;
    d.raised = d.raised || k.raised;
    d.min_local = std::min(d.min_local, k.min_local);
  };
  if (n.kind == NodeKind::Comp) {
    merge(fold(n.kids[1], depth, p, budget));
    merge(fold(n.kids[0], depth + 1, p, budget));
    if (n.kids.size() > 2) merge(fold(n.kids[2], depth + 1, p, budget));
  } else {
    for (Node& k : n.kids) merge(fold(k, depth, p, budget));
  }
  if (d.slot || d.raised || d.min_local < depth) return d;
  try {
    Value v = eval_tree(n, p.num_locals, {}, p.where, &budget);
    Node c;
    c.kind = NodeKind::Const;
    c.col = n.col;
    c.value = std::move(v);
    n = std::move(c);
    return {};
  } catch (const EvalError&) {
    d.raised = true;
  }
  return d;
}

void collect_slots(const Node& n, std::vector<int>& out) {
  if (n.kind == NodeKind::Slot) out.push_back(n.index);
  for (const Node& k : n.kids) collect_slots(k, out);
}

class Emitter {
 public:
  explicit Emitter(Program& p) : p_(p) {}

  bool run() {
    if (!node(p_.root)) return false;
    emit(Instr::Return);
    p_.stack_needed = max_depth_;
    return max_depth_ <= kMaxStack;
  }

 private:
  size_t emit(Instr::Op op, int sub = 0, int arg = 0) {
    p_.code.push_back(Instr{op, static_cast<uint8_t>(sub), arg});
    return p_.code.size() - 1;
  }
  void push(int n = 1) { max_depth_ = std::max(max_depth_, depth_ += n); }
  void pop(int n = 1) { depth_ -= n; }
  void patch(size_t at) { p_.code[at].arg = static_cast<int32_t>(p_.code.size()); }

  bool node(const Node& n) {
    switch (n.kind) {
      case NodeKind::Const:
        if (n.value.is_list()) return false;
        p_.consts.push_back(Num::of(n.value));
        emit(Instr::Const, 0, static_cast<int>(p_.consts.size()) - 1);
        push();
        return true;
      case NodeKind::Slot:
        emit(Instr::Slot, 0, n.index);
        push();
        return true;
      case NodeKind::Neg:
      case NodeKind::Pos:
      case NodeKind::Not:
        if (!node(n.kids[0])) return false;
        emit(n.kind == NodeKind::Neg ? Instr::Neg : n.kind == NodeKind::Pos ? Instr::Pos : Instr::Not);
        return true;
      case NodeKind::Binary:
        if (!node(n.kids[0])) return false;
        if (int k = scalar_const(n.kids[1]); k >= 0) {
          emit(Instr::BinConst, static_cast<int>(n.bop), k);
          return true;
        }
        if (!node(n.kids[1])) return false;
        emit(Instr::Bin, static_cast<int>(n.bop));
        pop();
        return true;
      case NodeKind::And:
      case NodeKind::Or: return boolean(n);
      case NodeKind::IfElse: return if_else(n);
      case NodeKind::Compare: return compare(n);
      case NodeKind::Call: return call(n);
      default: return false;  // Name, Local, List, Comp, Index, Slice
    }
  }

  // Index of n's value in consts when n is a scalar constant, else -1.
  int scalar_const(const Node& n) {
    if (n.kind != NodeKind::Const || n.value.is_list()) return -1;
    p_.consts.push_back(Num::of(n.value));
    return static_cast<int>(p_.consts.size()) - 1;
  }

  bool boolean(const Node& n) {
    std::vector<size_t> jumps;
    if (!node(n.kids[0])) return false;
    for (size_t k = 1; k < n.kids.size(); ++k) {
      jumps.push_back(emit(n.kind == NodeKind::And ? Instr::JumpIfFalseOrPop : Instr::JumpIfTrueOrPop));
      pop();
      if (!node(n.kids[k])) return false;
    }
    for (size_t j : jumps) patch(j);
    return true;
  }

  bool if_else(const Node& n) {
    if (!node(n.kids[1])) return false;
    size_t to_else = emit(Instr::PopJumpIfFalse);
    pop();
    if (!node(n.kids[0])) return false;
    size_t to_end = emit(Instr::Jump);
    pop();
    patch(to_else);
    if (!node(n.kids[2])) return false;
    patch(to_end);
    return true;
  }

  bool compare(const Node& n) {
    bool has_in = std::any_of(n.cmp_ops.begin(), n.cmp_ops.end(),
                              [](CmpOp op) { return op == CmpOp::In || op == CmpOp::NotIn; });
    if (has_in) {
      // Only `x in <constant list>`: membership over scalars needs no allocation.
      if (n.cmp_ops.size() != 1 || n.kids[1].kind != NodeKind::Const || !n.kids[1].value.is_list()) return false;
      if (!node(n.kids[0])) return false;
      std::vector<Num> items;
      for (const Value& v : n.kids[1].value.as_list())
        if (!v.is_list()) items.push_back(Num::of(v));  // a list never equals a scalar
      p_.const_lists.push_back(std::move(items));
      emit(Instr::InList, n.cmp_ops[0] == CmpOp::NotIn, static_cast<int>(p_.const_lists.size()) - 1);
      return true;
    }
    std::vector<size_t> jumps;
    if (!node(n.kids[0])) return false;
    for (size_t k = 0; k < n.cmp_ops.size(); ++k) {
      bool last = k + 1 == n.cmp_ops.size();
      if (int c = last ? scalar_const(n.kids[k + 1]) : -1; c >= 0) {
        emit(Instr::CmpConst, static_cast<int>(n.cmp_ops[k]), c);
        break;
      }
      if (!node(n.kids[k + 1])) return false;
      size_t at = emit(last ? Instr::Cmp : Instr::Chain, static_cast<int>(n.cmp_ops[k]));
      if (!last) jumps.push_back(at);
      pop();
    }
    for (size_t j : jumps) patch(j);
    return true;
  }

  bool call(const Node& n) {
    int argc = static_cast<int>(n.kids.size());
    switch (n.fn) {
      case Builtin::Min:
      case Builtin::Max:
        if (argc < 2) return false;
        break;
      case Builtin::Abs:
      case Builtin::Int:
      case Builtin::Float:
      case Builtin::Round:
        if (argc < 1) return false;
        break;
      default: return false;  // len, range, list, sum produce or consume sequences
    }
    if (argc > kMaxCallArgs) return false;
    for (const Node& k : n.kids)
      if (!node(k)) return false;
    emit(Instr::Call, static_cast<int>(n.fn), argc);
    pop(argc - 1);
    return true;
  }

  Program& p_;
  int depth_ = 0;
  int max_depth_ = 0;
};

// The types a node can give, as a set of ValueType bits.
constexpr unsigned bit(ValueType t) { return 1u << static_cast<unsigned>(t); }
constexpr unsigned kNumbers = bit(ValueType::Int) | bit(ValueType::Float);
constexpr unsigned kAnyType = bit(ValueType::Int) | bit(ValueType::Float) | bit(ValueType::Bool) |
                              bit(ValueType::String) | bit(ValueType::List);

unsigned result_types(const Node& n, std::span<const ValueType> slot_types) {
  switch (n.kind) {
    case NodeKind::Const: return bit(n.value.type());
    case NodeKind::Slot:
      return n.index >= 0 && static_cast<size_t>(n.index) < slot_types.size() ? bit(slot_types[n.index]) : kAnyType;
    case NodeKind::Neg:
    case NodeKind::Pos: return kNumbers;
    case NodeKind::Not:
    case NodeKind::Compare: return bit(ValueType::Bool);
    case NodeKind::Binary: {  // never a bool: True + True is 2
      constexpr unsigned scalars = kNumbers | bit(ValueType::Bool);
      const unsigned operands = result_types(n.kids[0], slot_types) | result_types(n.kids[1], slot_types);
      return (operands & ~scalars) ? kAnyType & ~bit(ValueType::Bool) : kNumbers;
    }
    case NodeKind::And:
    case NodeKind::Or: {  // an operand, the last or the first that decides
      unsigned t = 0;
      for (const Node& k : n.kids) t |= result_types(k, slot_types);
      return t;
    }
    case NodeKind::IfElse: return result_types(n.kids[0], slot_types) | result_types(n.kids[2], slot_types);
    case NodeKind::List:
    case NodeKind::Comp: return bit(ValueType::List);
    case NodeKind::Slice: return bit(ValueType::List) | bit(ValueType::String);
    case NodeKind::Call:
      switch (n.fn) {
        case Builtin::Abs:
        case Builtin::Round: return kNumbers;
        case Builtin::Int:
        case Builtin::Len: return bit(ValueType::Int);
        case Builtin::Float: return bit(ValueType::Float);
        case Builtin::Range:
        case Builtin::List: return bit(ValueType::List);
        case Builtin::Sum: return kAnyType & ~bit(ValueType::Bool);
        default: return kAnyType;  // min, max: one of their arguments
      }
    default: return kAnyType;  // Name, Local, Index
  }
}

}  // namespace

std::string CompiledExpr::never_bool(std::span<const ValueType> slot_types) const {
  if (!program_) return "";
  const unsigned t = result_types(program_->root, slot_types);
  if (t & bit(ValueType::Bool)) return "";
  std::string out;
  for (ValueType v : {ValueType::Int, ValueType::Float, ValueType::String, ValueType::List}) {
    if (!(t & bit(v))) continue;
    out.append(out.empty() ? "" : " or ").append(v == ValueType::Int ? "an " : "a ").append(type_name(v));
  }
  return out;
}

void resolve_and_fold(Program& p, const Scope& scope) {
  std::vector<std::string> bound;
  resolve(p.root, scope, bound, p);
  uint64_t budget = kMaxWork;
  fold(p.root, 0, p, budget);
  collect_slots(p.root, p.slots_used);
  std::sort(p.slots_used.begin(), p.slots_used.end());
  p.slots_used.erase(std::unique(p.slots_used.begin(), p.slots_used.end()), p.slots_used.end());
}

void emit_bytecode(Program& p) {
  p.code.clear();
  p.consts.clear();
  p.const_lists.clear();
  p.fast = Emitter(p).run();
  if (!p.fast) {
    p.code.clear();
    p.consts.clear();
    p.const_lists.clear();
  }
}

}  // namespace ktune::expr
