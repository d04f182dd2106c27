// The hot path: a stack VM over Num, no allocation, no exceptions. It stops
// at the first error or non-scalar value and lets the general evaluator redo
// the work (that evaluator owns all error messages).
#include "search/expr/ast.h"

namespace ktune::expr {
namespace {

// Uninitialised storage: the VM writes every cell before reading it.
union Cell {
  Cell() {}
  Num n;
};

inline VmResult fail(Err e) { return e == kBail ? VmResult::Bail : VmResult::Error; }

bool is_intlike(Num n) { return n.kind == Num::Int || n.kind == Num::Bool; }

// The common int cases, inline; everything else (and every failure) goes to
// num_binary, which holds the full semantics.
inline bool quick_int_binary(BinOp op, int64_t a, int64_t b, int64_t& r) {
  switch (op) {
    case BinOp::Add: return !__builtin_add_overflow(a, b, &r);
    case BinOp::Sub: return !__builtin_sub_overflow(a, b, &r);
    case BinOp::Mul: return !__builtin_mul_overflow(a, b, &r);
    case BinOp::Mod:
      if (b <= 0) return false;
      r = a % b;
      if (r < 0) r += b;
      return true;
    case BinOp::FloorDiv:
      if (b <= 0) return false;
      r = a / b;
      if (a % b < 0) --r;
      return true;
    default: return false;
  }
}

inline bool int_compare(CmpOp op, int64_t a, int64_t b) {
  switch (op) {
    case CmpOp::Lt: return a < b;
    case CmpOp::Le: return a <= b;
    case CmpOp::Eq: return a == b;
    case CmpOp::Ne: return a != b;
    case CmpOp::Gt: return a > b;
    default: return a >= b;
  }
}

// Binary operator on the two top cells: result in a.
inline Err binary(BinOp op, Num& a, const Num& b) {
  int64_t q;
  if (is_intlike(a) && is_intlike(b) && quick_int_binary(op, a.i, b.i, q)) {
    a = Num::of_int(q);
    return nullptr;
  }
  Num r;
  if (Err e = num_binary(op, a, b, r)) return e;
  a = r;
  return nullptr;
}

inline Err compare(CmpOp op, const Num& a, const Num& b, bool& r) {
  if (is_intlike(a) && is_intlike(b)) {
    r = int_compare(op, a.i, b.i);
    return nullptr;
  }
  return num_compare(op, a, b, r);
}

bool in_list(const std::vector<Num>& items, const Num& x) {
  for (const Num& item : items)
    if (num_equal(x, item)) return true;
  return false;
}

}  // namespace

VmResult run_vm(const Program& p, std::span<const Value> slots, Num& out) noexcept {
  Cell stack[32];
  int sp = 0;  // number of cells in use
  const Instr* code = p.code.data();
  size_t pc = 0;
  for (;;) {
    const Instr in = code[pc++];
    Num& top = stack[sp > 0 ? sp - 1 : 0].n;  // meaningful for every op but Const and Slot, which push
    switch (in.op) {
      case Instr::Const: stack[sp++].n = p.consts[static_cast<size_t>(in.arg)]; break;
      case Instr::Slot: {
        const Value& v = slots[static_cast<size_t>(in.arg)];
        if (v.is_list()) return VmResult::Bail;
        stack[sp++].n = Num::of(v);
        break;
      }
      case Instr::Bin:
        if (Err e = binary(static_cast<BinOp>(in.sub), stack[sp - 2].n, top)) return fail(e);
        --sp;
        break;
      case Instr::BinConst:
        if (Err e = binary(static_cast<BinOp>(in.sub), top, p.consts[static_cast<size_t>(in.arg)])) return fail(e);
        break;
      case Instr::CmpConst: {
        bool r = false;
        if (Err e = compare(static_cast<CmpOp>(in.sub), top, p.consts[static_cast<size_t>(in.arg)], r)) return fail(e);
        top = Num::of_bool(r);
        break;
      }
      case Instr::Neg:
      case Instr::Pos:
        if (Err e = (in.op == Instr::Neg ? num_neg : num_pos)(top, top)) return fail(e);
        break;
      case Instr::Not: top = Num::of_bool(!top.truthy()); break;
      case Instr::Cmp:
      case Instr::Chain: {
        bool r = false;
        if (Err e = compare(static_cast<CmpOp>(in.sub), stack[sp - 2].n, top, r)) return fail(e);
        --sp;
        if (in.op == Instr::Cmp || !r) stack[sp - 1].n = Num::of_bool(r);
        else stack[sp - 1].n = stack[sp].n;  // a chain goes on from its right operand
        if (in.op == Instr::Chain && !r) pc = static_cast<size_t>(in.arg);
        break;
      }
      case Instr::InList:
        top = Num::of_bool(in_list(p.const_lists[static_cast<size_t>(in.arg)], top) != (in.sub != 0));
        break;
      case Instr::JumpIfFalseOrPop:
      case Instr::JumpIfTrueOrPop:
        if (top.truthy() == (in.op == Instr::JumpIfTrueOrPop)) pc = static_cast<size_t>(in.arg);
        else --sp;
        break;
      case Instr::PopJumpIfFalse:
        if (!stack[--sp].n.truthy()) pc = static_cast<size_t>(in.arg);
        break;
      case Instr::Jump: pc = static_cast<size_t>(in.arg); break;
      case Instr::Call: {
        Num args[8];
        sp -= in.arg;
        for (int k = 0; k < in.arg; ++k) args[k] = stack[sp + k].n;
        if (Err e = num_call(static_cast<Builtin>(in.sub), args, in.arg, stack[sp].n)) return fail(e);
        ++sp;
        break;
      }
      case Instr::Return: out = stack[0].n; return VmResult::Ok;
    }
  }
}

}  // namespace ktune::expr
