// Recursive-descent parser for the Python expression subset, over lex.h's tokens.
// Precedence, lowest first: x if c else y; or; and; not; comparisons (chained,
// in, not in); + -; * / // %; unary + -; ** (right-associative, binds tighter
// than a unary minus on its left: -2**2 == -4); calls, subscripts, atoms.
#include <algorithm>
#include <set>
#include <unordered_set>

#include "search/expr/ast.h"
#include "search/expr/lex.h"

namespace ktune::expr {
namespace {

const std::set<std::string_view>& reserved_words() {
  static const std::set<std::string_view> words = {
      "None", "lambda", "is", "del", "def", "class", "import", "from", "return", "yield", "await",
      "async", "while", "with", "as", "assert", "pass", "break", "continue", "global", "nonlocal",
      "raise", "try", "except", "finally", "elif"};
  return words;
}

struct Arity {
  Builtin fn;
  int min, max;
};

const Arity* find_builtin(std::string_view name) {
  static const std::pair<std::string_view, Arity> table[] = {
      {"min", {Builtin::Min, 1, 1 << 20}}, {"max", {Builtin::Max, 1, 1 << 20}}, {"abs", {Builtin::Abs, 1, 1}},
      {"int", {Builtin::Int, 0, 1}},       {"float", {Builtin::Float, 0, 1}},   {"round", {Builtin::Round, 1, 2}},
      {"len", {Builtin::Len, 1, 1}},       {"range", {Builtin::Range, 1, 3}},   {"list", {Builtin::List, 0, 1}},
      {"sum", {Builtin::Sum, 1, 2}},
  };
  for (const auto& [n, a] : table)
    if (n == name) return &a;
  return nullptr;
}

class Parser {
 public:
  Parser(std::string_view text, const SourceLocation& where)
      : where_(where), toks_(Lexer(text, where).run()) {}

  Node parse() {
    if (peek().kind == Tok::End) fail("empty expression", peek().col);
    Node n = expr();
    if (peek().kind != Tok::End) unexpected();
    return n;
  }

 private:
  const Token& peek(size_t ahead = 0) const { return toks_[std::min(pos_ + ahead, toks_.size() - 1)]; }
  const Token& next() { return toks_[pos_ < toks_.size() - 1 ? pos_++ : pos_]; }
  bool is_op(std::string_view op, size_t ahead = 0) const {
    return peek(ahead).kind == Tok::Op && peek(ahead).text == op;
  }
  bool is_kw(std::string_view kw, size_t ahead = 0) const {
    return peek(ahead).kind == Tok::Name && peek(ahead).text == kw;
  }

  [[noreturn]] void fail(const std::string& message, int col) const {
    throw Error::bad_input(message, where_.at_column(col));
  }
  [[noreturn]] void unexpected() const {
    const Token& t = peek();
    if (t.kind == Tok::End) fail("unexpected end of expression", t.col);
    std::string msg = "unexpected token '" + std::string(t.text) + "'";
    if (t.kind == Tok::Op && t.text == "=") msg += " (did you mean '=='?)";
    fail(msg, t.col);
  }
  void expect(std::string_view op) {
    if (!is_op(op)) {
      const Token& t = peek();
      std::string msg = "expected '";
      msg.append(op).append("', found ");
      if (t.kind == Tok::End) msg += "end of expression";
      else msg.append("'").append(t.text).append("'");
      fail(msg, t.col);
    }
    next();
  }

  Node make(NodeKind kind, int col, std::vector<Node> kids = {}) const {
    Node n;
    n.kind = kind;
    n.col = col;
    n.kids.reserve(kids.size());
    for (Node& k : kids) add_kid(n, std::move(k));
    return n;
  }

  // Every child joins its parent here, so the tree's depth is known as it
  // grows and a too deep one is refused before any pass recurses over it.
  void add_kid(Node& parent, Node kid) const {
    parent.height = std::max(parent.height, kid.height + 1);
    if (parent.height > kMaxTreeDepth)
      fail("expression nested too deeply (more than " + std::to_string(kMaxTreeDepth) +
               " levels; a chain such as a + b + c counts one level per operator)",
           parent.col);
    parent.kids.push_back(std::move(kid));
  }

  // Guards each recursive descent of the parser itself.
  void enter(int col) {
    if (++depth_ > kMaxNesting)
      fail("expression nested too deeply (more than " + std::to_string(kMaxNesting) +
               " levels of brackets, calls, unary operators or **)",
           col);
  }

  Node expr() {
    enter(peek().col);
    Node value = or_test();
    if (is_kw("if")) {
      int col = next().col;
      Node cond = or_test();
      if (!is_kw("else")) fail("expected 'else'", peek().col);
      next();
      Node other = expr();
      value = make(NodeKind::IfElse, col, {std::move(value), std::move(cond), std::move(other)});
    }
    --depth_;
    return value;
  }

  Node bool_chain(NodeKind kind, std::string_view kw, Node (Parser::*operand)()) {
    Node first = (this->*operand)();
    if (!is_kw(kw)) return first;
    Node n = make(kind, peek().col, {std::move(first)});
    while (is_kw(kw)) {
      next();
      add_kid(n, (this->*operand)());
    }
    return n;
  }
  Node or_test() { return bool_chain(NodeKind::Or, "or", &Parser::and_test); }
  Node and_test() { return bool_chain(NodeKind::And, "and", &Parser::not_test); }

  Node not_test() {
    if (!is_kw("not")) return comparison();
    int col = next().col;
    enter(col);
    Node n = make(NodeKind::Not, col, {not_test()});
    --depth_;
    return n;
  }

  bool comparison_op(CmpOp& op) const {
    static const std::pair<std::string_view, CmpOp> ops[] = {{"<", CmpOp::Lt},  {"<=", CmpOp::Le}, {"==", CmpOp::Eq},
                                                             {"!=", CmpOp::Ne}, {">", CmpOp::Gt},  {">=", CmpOp::Ge}};
    for (const auto& [text, o] : ops)
      if (is_op(text)) return op = o, true;
    if (is_kw("in")) return op = CmpOp::In, true;
    if (is_kw("not") && is_kw("in", 1)) return op = CmpOp::NotIn, true;
    if (is_kw("is")) fail("'is' is not supported; use == or !=", peek().col);
    return false;
  }

  Node comparison() {
    Node first = arith();
    CmpOp op;
    if (!comparison_op(op)) return first;
    Node n = make(NodeKind::Compare, peek().col, {std::move(first)});
    while (comparison_op(op)) {
      n.cmp_cols.push_back(peek().col);
      n.cmp_ops.push_back(op);
      next();
      if (op == CmpOp::NotIn) next();
      add_kid(n, arith());
    }
    return n;
  }

  Node binary_chain(std::initializer_list<std::pair<std::string_view, BinOp>> ops, Node (Parser::*operand)()) {
    Node lhs = (this->*operand)();
    while (true) {
      const std::pair<std::string_view, BinOp>* hit = nullptr;
      for (const auto& o : ops)
        if (is_op(o.first)) hit = &o;
      if (!hit) return lhs;
      Node n = make(NodeKind::Binary, next().col);
      n.bop = hit->second;
      add_kid(n, std::move(lhs));
      add_kid(n, (this->*operand)());
      lhs = std::move(n);
    }
  }
  Node arith() { return binary_chain({{"+", BinOp::Add}, {"-", BinOp::Sub}}, &Parser::term); }
  Node term() {
    return binary_chain({{"*", BinOp::Mul}, {"/", BinOp::Div}, {"//", BinOp::FloorDiv}, {"%", BinOp::Mod}},
                        &Parser::factor);
  }

  Node factor() {
    if (is_op("-") || is_op("+")) {
      NodeKind kind = is_op("-") ? NodeKind::Neg : NodeKind::Pos;
      int col = next().col;
      enter(col);
      Node n = make(kind, col, {factor()});
      --depth_;
      return n;
    }
    return power();
  }

  Node power() {
    Node base = primary();
    if (!is_op("**")) return base;
    Node n = make(NodeKind::Binary, next().col);
    n.bop = BinOp::Pow;
    add_kid(n, std::move(base));
    enter(n.col);  // right-associative: the exponent recurses
    add_kid(n, factor());
    --depth_;
    return n;
  }

  Node primary() {
    Node n = atom();
    int chained = 0;
    while (is_op("[")) {  // each subscript nests the tree one level deeper
      enter(peek().col);
      ++chained;
      n = subscript(std::move(n));
    }
    depth_ -= chained;
    if (is_op(".")) fail("attribute access not allowed", peek().col);
    if (is_op("("))
      fail("only the builtin functions min, max, abs, int, float, round, len, range, list, sum can be called",
           peek().col);
    return n;
  }

  // After a primary: [index] or [start:stop:step], each bound optional.
  Node subscript(Node value) {
    int col = next().col;  // [
    Node n = make(NodeKind::Index, col, {std::move(value)});
    if (!is_op(":")) {
      add_kid(n, expr());
      if (!is_op(":")) {
        expect("]");
        return n;
      }
      n.parts |= kSliceStart;
    }
    n.kind = NodeKind::Slice;
    next();  // :
    if (!is_op(":") && !is_op("]")) {
      add_kid(n, expr());
      n.parts |= kSliceStop;
    }
    if (is_op(":")) {
      next();
      if (!is_op("]")) {
        add_kid(n, expr());
        n.parts |= kSliceStep;
      }
    }
    expect("]");
    return n;
  }

  Node atom() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::Int:
      case Tok::Float: {
        Node n = make(NodeKind::Const, t.col);
        n.value = next().value;
        return n;
      }
      case Tok::Str: {
        Node n = make(NodeKind::Const, t.col);
        std::string s;
        while (peek().kind == Tok::Str) s += next().value.as_string();  // adjacent literals concatenate
        n.value = Value(std::move(s));
        return n;
      }
      case Tok::Name: return name_atom();
      case Tok::Op:
        if (t.text == "(") return paren();
        if (t.text == "[") return bracket();
        break;
      case Tok::End: break;
    }
    unexpected();
  }

  Node name_atom() {
    const Token& t = peek();
    if (t.text == "True" || t.text == "False") {
      Node n = make(NodeKind::Const, t.col);
      n.value = Value(next().text == "True");
      return n;
    }
    static const std::set<std::string_view> keywords = {"and", "or", "not", "in", "if", "else", "for"};
    if (keywords.count(t.text) || reserved_words().count(t.text)) unexpected();
    if (is_op("(", 1)) return call();
    Node n = make(NodeKind::Name, t.col);
    n.name = std::string(next().text);
    return n;
  }

  Node call() {
    const Token& name = next();
    const Arity* b = find_builtin(name.text);
    if (!b) fail("unknown function '" + std::string(name.text) + "'", name.col);
    Node n = make(NodeKind::Call, name.col);
    n.fn = b->fn;
    next();  // (
    while (!is_op(")")) {
      if (peek().kind == Tok::Name && is_op("=", 1)) fail("keyword arguments are not supported", peek().col);
      Node arg = expr();
      if (is_kw("for") && n.kids.empty()) {  // a generator argument: max(x for x in xs)
        int col = arg.col;
        add_kid(n, comprehension(std::move(arg), col));
        break;
      }
      add_kid(n, std::move(arg));
      if (!is_op(",")) break;
      next();
    }
    expect(")");
    int argc = static_cast<int>(n.kids.size());
    if (argc < b->min || argc > b->max) {
      std::string takes = b->min == b->max               ? std::to_string(b->min)
                          : b->max > 3                    ? "at least " + std::to_string(b->min)
                          : b->max == b->min + 1          ? std::to_string(b->min) + " or " + std::to_string(b->max)
                                                          : std::to_string(b->min) + " to " + std::to_string(b->max);
      fail(std::string(name.text) + "() takes " + takes + " argument" + (b->max == 1 ? "" : "s") + " (" +
               std::to_string(argc) + " given)",
           name.col);
    }
    return n;
  }

  Node paren() {
    int col = next().col;
    if (is_op(")")) {  // () is an empty tuple; tuples are lists here
      next();
      return make(NodeKind::List, col);
    }
    Node first = expr();
    if (!is_op(",")) {
      expect(")");
      return first;
    }
    Node n = make(NodeKind::List, col, {std::move(first)});
    while (is_op(",")) {
      next();
      if (is_op(")")) break;
      add_kid(n, expr());
    }
    expect(")");
    return n;
  }

  Node bracket() {
    int col = next().col;
    Node n = make(NodeKind::List, col);
    if (is_op("]")) {
      next();
      return n;
    }
    Node first = expr();
    if (is_kw("for")) {
      Node c = comprehension(std::move(first), col);
      expect("]");
      return c;
    }
    add_kid(n, std::move(first));
    while (is_op(",")) {
      next();
      if (is_op("]")) break;
      add_kid(n, expr());
    }
    expect("]");
    return n;
  }

  // After the element: for NAME in ITERABLE [if COND]...
  Node comprehension(Node element, int col) {
    next();  // for
    const Token& var = peek();
    if (var.kind != Tok::Name || var.text == "True" || var.text == "False" || reserved_words().count(var.text) ||
        var.text == "in" || var.text == "if")
      fail("expected a variable name after 'for'", var.col);
    Node n = make(NodeKind::Comp, col);
    n.name = std::string(next().text);
    if (is_op(",")) fail("only one loop variable is supported", peek().col);
    if (!is_kw("in")) fail("expected 'in'", peek().col);
    next();
    add_kid(n, std::move(element));
    add_kid(n, or_test());
    if (is_kw("if")) {
      int if_col = next().col;
      Node cond = or_test();
      if (is_kw("if")) {
        cond = make(NodeKind::And, if_col, {std::move(cond)});
        while (is_kw("if")) {
          next();
          add_kid(cond, or_test());
        }
      }
      add_kid(n, std::move(cond));
    }
    if (is_kw("for")) fail("only one 'for' per comprehension is supported", peek().col);
    return n;
  }

  const SourceLocation& where_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
};

// `seen` holds the names already in `out` (views into the tree), so that an
// expression naming many different things is still read in linear time.
void collect(const Node& n, std::vector<std::string>& bound, std::vector<std::string>& out,
             std::unordered_set<std::string_view>& seen) {
  if (n.kind == NodeKind::Name) {
    for (const std::string& b : bound)
      if (b == n.name) return;
    if (seen.insert(n.name).second) out.push_back(n.name);
    return;
  }
  if (n.kind == NodeKind::Comp) {  // the iterable is outside the variable's scope
    bound.push_back(n.name);
    collect(n.kids[0], bound, out, seen);
    bound.pop_back();
    collect(n.kids[1], bound, out, seen);
    bound.push_back(n.name);
    if (n.kids.size() > 2) collect(n.kids[2], bound, out, seen);
    bound.pop_back();
    return;
  }
  for (const Node& k : n.kids) collect(k, bound, out, seen);
}

}  // namespace

Node parse_tree(std::string_view text, const SourceLocation& where) { return Parser(text, where).parse(); }

std::vector<std::string> free_names(const Node& root) {
  std::vector<std::string> bound, out;
  std::unordered_set<std::string_view> seen;
  collect(root, bound, out, seen);
  return out;
}

}  // namespace ktune::expr
