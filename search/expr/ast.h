// The parsed and the compiled forms of an expression (private to search/expr/).
//
// Node is the syntax tree produced by the parser; compile() copies it, resolves
// every Name to a Slot, a Const or a comprehension Local, and folds constant
// subtrees. Program holds that resolved tree (run by the general evaluator,
// which handles every type) and, when the expression is scalar-only, a flat
// bytecode for the allocation-free VM that serves the hot path.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/error.h"
#include "search/expr/num.h"
#include "search/expr/value.h"

namespace ktune::expr {

enum class NodeKind : uint8_t {
  Const, Name, Slot, Local,
  Neg, Pos, Not,
  Binary,   // kids: lhs, rhs
  And, Or,  // kids: 2 or more operands, evaluated left to right
  IfElse,   // kids: then-value, condition, else-value (source order)
  Compare,  // kids: n+1 operands of the n cmp_ops (a chain)
  List,     // kids: elements
  Comp,     // kids: element, iterable, condition (optional)
  Call,     // kids: arguments; fn says which builtin
  Index,    // kids: sequence, index
  Slice,    // kids: sequence, then those of start, stop, step written; parts says which
};

// Bits of Node::parts: the slice bounds present in the text (an omitted one is
// Python's None, so omitted parts have no kid to resolve, fold or evaluate).
enum SlicePart : uint8_t { kSliceStart = 1, kSliceStop = 2, kSliceStep = 4 };

// Limits on what one expression may be, so that every pass over its tree
// (parsing, folding, evaluating, copying, freeing: all recursive) stays well
// within a thread's stack, whatever the text: brackets, calls, unary operators
// and `**` nest the parser itself (a dozen frames a level), and every level of
// the tree, a left-associative chain such as `a + b + c` included, nests the
// passes over it. Lists, `and`/`or` chains and comparison chains are wide, not
// deep, and take any length.
constexpr int kMaxNesting = 200;
constexpr int kMaxTreeDepth = 1000;
// The text itself: parsing takes about a hundred bytes a byte of it.
constexpr size_t kMaxExpressionText = size_t{2} << 20;

// Limits on what evaluating one expression may cost, so that neither a typo
// (range(10**12)) nor a hostile spec (a list doubled forty times, nested
// comprehensions) runs away with time or memory: no list or string longer
// than kMaxLength, and at most kMaxWork steps per evaluation (a step is a node
// visited, an element compared or iterated, a byte of string built; an
// element of a list built costs kListElementWork, its share of the memory),
// which keeps one evaluation under about a second and a hundred megabytes.
constexpr size_t kMaxLength = 1'000'000;
constexpr uint64_t kMaxWork = 10'000'000;
constexpr uint64_t kListElementWork = 4;

class Node {
 public:
  NodeKind kind = NodeKind::Const;
  int col = 0;  // 1-based column in the text of the token errors point at
  int height = 1;  // levels of the tree below and including this node (parser only)
  BinOp bop = BinOp::Add;
  Builtin fn = Builtin::Min;
  Value value;        // Const
  std::string name;   // Name; Comp: the loop variable
  int index = -1;     // Slot: slot index; Local and Comp: local variable index
  uint8_t parts = 0;  // Slice: SlicePart bits
  std::vector<Node> kids;
  std::vector<CmpOp> cmp_ops;  // Compare
  std::vector<int> cmp_cols;   // Compare: column of each operator
};

// Throws Error::bad_input (mapped through where.at_column) on a syntax error.
Node parse_tree(std::string_view text, const SourceLocation& where);
// Free names in order of first appearance (comprehension variables excluded).
std::vector<std::string> free_names(const Node& root);

// One VM instruction. Jump targets and constant/slot numbers live in arg.
struct Instr {
  enum Op : uint8_t {
    Const, Slot, Bin, Neg, Pos, Not, Cmp, Chain, InList,
    BinConst, CmpConst,  // the right operand is consts[arg]: the common `X % 2`, `N == 0`
    JumpIfFalseOrPop, JumpIfTrueOrPop, PopJumpIfFalse, Jump, Call, Return,
  };
  Op op = Return;
  uint8_t sub = 0;  // BinOp / CmpOp / Builtin; InList: 1 for `not in`; Call: argc in arg
  int32_t arg = 0;
};

class Program {
 public:
  Node root;  // resolved and folded; never modified after the bytecode points into it
  int num_locals = 0;
  std::vector<int> slots_used;
  SourceLocation where;

  bool fast = false;  // code is valid
  int stack_needed = 0;
  std::vector<Instr> code;
  std::vector<Num> consts;                   // strings borrowed from Const nodes of root
  std::vector<std::vector<Num>> const_lists;  // right-hand sides of `in` against a constant list
};

struct Scope;
// Resolves every Name of p.root against the comprehension variables, then
// scope.slots, then scope.constants (unknown: Error::bad_input at its column),
// folds constant subtrees, and fills num_locals and slots_used.
void resolve_and_fold(Program& p, const Scope& scope);

// Emits the VM form of p.root; leaves p.fast false when some part needs the
// general evaluator (lists, comprehensions, subscripts, len/range/list/sum).
void emit_bytecode(Program& p);

enum class VmResult { Ok, Error, Bail };
// Runs p.code. Error: an evaluation error (the general evaluator reproduces
// it with its message); Bail: a non-scalar case the VM does not handle.
VmResult run_vm(const Program& p, std::span<const Value> slots, Num& out) noexcept;

// The general evaluator: every type, exact Python errors. Throws EvalError
// located at where.at_column(node column). `budget` is the work left
// (kMaxWork units when null); running out is an EvalError too.
Value eval_tree(const Node& root, int num_locals, std::span<const Value> slots, const SourceLocation& where,
                uint64_t* budget = nullptr);

}  // namespace ktune::expr
