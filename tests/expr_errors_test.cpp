// Expression language: error reporting (syntax, unknown names, evaluation
// errors, all with exact columns), name/slot bookkeeping, and agreement of the
// fast VM with the general evaluator.
#include <gtest/gtest.h>

#include <random>

#include "search/expr/expr.h"
#include "search/expr/ast.h"

namespace ktune::expr {
namespace {

struct SyntaxCase {
  const char* text;
  int column;
  const char* message;  // a substring of the message
};

TEST(ExprErrors, SyntaxErrorsNameTheColumn) {
  const SyntaxCase cases[] = {
      {"(1 + 2", 7, "expected ')', found end of expression"},
      {"1 +", 4, "unexpected end of expression"},
      {"x.y", 2, "attribute access not allowed"},
      {"x.__class__", 2, "attribute access not allowed"},
      {"open('f')", 1, "unknown function 'open'"},
      {"__import__('os')", 1, "unknown function '__import__'"},
      {"1 + * 2", 5, "unexpected token '*'"},
      {"x = 3", 3, "unexpected token '=' (did you mean '=='?)"},
      {"[1, 2", 6, "expected ']'"},
      {"a if b", 7, "expected 'else'"},
      {"1 2", 3, "unexpected token '2'"},
      {"", 1, "empty expression"},
      {"   ", 4, "empty expression"},
      {"x[]", 3, "unexpected token ']'"},
      {"x[0", 4, "expected ']', found end of expression"},
      {"x[1, 2]", 4, "expected ']', found ','"},
      {"x[1:2:3:4]", 8, "expected ']', found ':'"},
      {"x[0].y", 5, "attribute access not allowed"},
      {"x[0](1)", 5, "only the builtin functions min, max, abs, int, float, round, len, range, list, sum"},
      {"x[0][1 +]", 9, "unexpected token ']'"},
      {"sum()", 1, "sum() takes 1 or 2 arguments (0 given)"},
      {"sum(x, 0, 1)", 1, "sum() takes 1 or 2 arguments (3 given)"},
      {"sum(i for i in x, 1)", 17, "expected ')', found ','"},
      {"None", 1, "unexpected token 'None'"},
      {"lambda: 1", 1, "unexpected token 'lambda'"},
      {"x is 1", 3, "'is' is not supported"},
      {"round(1, 2, 3)", 1, "round() takes 1 or 2 arguments (3 given)"},
      {"len()", 1, "len() takes 1 argument (0 given)"},
      {"round(x, ndigits=2)", 10, "keyword arguments are not supported"},
      {"'abc", 1, "unterminated string"},
      {"1 $ 2", 3, "unexpected character '$'"},
      {"012", 1, "leading zeros"},
      {"99999999999999999999", 1, "integer literal too large"},
      {"1j", 1, "complex numbers are not supported"},
      {"[i for i in range(3) for j in range(2)]", 22, "only one 'for'"},
      {"[i for 1 in x]", 8, "expected a variable name after 'for'"},
      {"(x)(1)", 4, "only the builtin functions"},
      {"1 + (2 * (3 - 4)))", 18, "unexpected token ')'"},
      {"x == 1 and", 11, "unexpected end of expression"},
      {"[é, $]", 5, "unexpected character '$'"},  // columns count characters, not bytes
  };
  for (const SyntaxCase& c : cases) {
    SCOPED_TRACE(c.text);
    try {
      Expression::parse(c.text);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::BadInput);
      EXPECT_EQ(e.where().column, c.column);
      EXPECT_NE(e.message().find(c.message), std::string::npos) << e.message();
    }
  }
}

TEST(ExprErrors, DeepNestingIsAnErrorNotACrash) {
  std::string deep = std::string(5000, '(') + "1" + std::string(5000, ')');
  EXPECT_THROW(Expression::parse(deep), Error);
  EXPECT_THROW(Expression::parse(std::string(5000, '-') + "1"), Error);
  EXPECT_EQ(Expression::parse(std::string(100, '(') + "1" + std::string(100, ')')).evaluate().as_int(), 1);
  std::string chain = "x";
  for (int k = 0; k < 5000; ++k) chain += "[0]";
  EXPECT_THROW(Expression::parse(chain), Error);
  std::string nested = std::string(100, '[') + "7" + std::string(100, ']');
  for (int k = 0; k < 100; ++k) nested += "[-1]";
  EXPECT_EQ(Expression::parse(nested).evaluate().as_int(), 7);
}

TEST(ExprErrors, LocationMapsThroughTheFile) {
  try {
    Expression::parse("1 + (2", SourceLocation{"spec.yaml", 12, 5});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.where().file, "spec.yaml");
    EXPECT_EQ(e.where().line, 12);
    EXPECT_EQ(e.where().column, 11);
    EXPECT_NE(std::string(e.what()).find("spec.yaml:12:11"), std::string::npos) << e.what();
    EXPECT_EQ(e.exit_status(), 2);
  }
}

TEST(ExprErrors, UnknownNamesListTheKnownOnes) {
  Scope scope;
  scope.slots = {{"a", 0}, {"b", 1}};
  scope.constants = {{"n", Value(4)}};
  struct {
    const char* text;
    int column;
    const char* name;
  } cases[] = {
      {"a + bogus", 5, "'bogus'"},
      {"[i + q for i in range(3)]", 6, "'q'"},
      {"[i for i in range(3)] + [i]", 26, "'i'"},  // the loop variable does not leak
      {"min(a, b, c)", 11, "'c'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    Expression e = Expression::parse(c.text, SourceLocation{"k.yaml", 3, 1});
    try {
      e.compile(scope);
      ADD_FAILURE() << "no error";
    } catch (const Error& err) {
      EXPECT_EQ(err.kind(), Error::Kind::BadInput);
      EXPECT_EQ(err.where().line, 3);
      EXPECT_EQ(err.where().column, c.column);
      EXPECT_NE(err.message().find(std::string("unknown name ") + c.name), std::string::npos) << err.message();
      EXPECT_NE(err.message().find("known names: a, b, n"), std::string::npos) << err.message();
    }
  }
}

TEST(ExprErrors, EvalErrorsPointAtTheOperator) {
  Scope scope;
  scope.slots = {{"x", 0}, {"z", 1}, {"s", 2}, {"L", 3}};
  std::vector<Value> slots = {Value(7), Value(0), Value("abc"), Value(ValueList{Value(1), Value(2), Value(3)})};
  struct {
    const char* text;
    int column;
    const char* message;
  } cases[] = {
      {"x + 1 / z", 7, "division by zero"},
      {"x // z", 3, "division or modulo by zero"},
      {"x % z == 0", 3, "modulo by zero"},
      {"1 < s", 3, "'<' not supported between instances of 'int' and 'str'"},
      {"x > 1 > s", 7, "'>' not supported"},
      {"len(x)", 1, "object of type 'int' has no len()"},
      {"x if z else 1 % z", 15, "modulo by zero"},
      {"s + x", 3, "unsupported operand type(s) for +: 'str' and 'int'"},
      {"x in s", 3, "'in <string>' requires string as left operand, not int"},
      {"(-x) ** 0.5", 6, "complex"},
      {"x ** 99", 3, "overflow"},
      {"range(x, 1, z)", 1, "must not be zero"},
      {"x + L[3]", 6, "list index out of range"},
      {"L[-4]", 2, "list index out of range"},
      {"s[x]", 2, "string index out of range"},
      {"s[-x]", 2, "string index out of range"},
      {"[L, L][1][x]", 10, "list index out of range"},
      {"range(x)[x]", 9, "list index out of range"},
      {"L[1.5]", 2, "list indices must be integers or slices, not float"},
      {"L[s]", 2, "list indices must be integers or slices, not str"},
      {"L[L]", 2, "list indices must be integers or slices, not list"},
      {"s[x / 2]", 2, "string indices must be integers, not 'float'"},
      {"L[::z]", 2, "slice step cannot be zero"},
      {"L[1.5::z]", 2, "slice step cannot be zero"},  // Python reads the step first
      {"L[x:1.5]", 2, "slice indices must be integers or None or have an __index__ method"},
      {"s[:s]", 2, "slice indices must be integers or None or have an __index__ method"},
      {"x[0]", 2, "'int' object is not subscriptable"},
      {"x[::z]", 2, "'int' object is not subscriptable"},
      {"(x / 2)[0]", 8, "'float' object is not subscriptable"},
      {"(x > 1)[0]", 8, "'bool' object is not subscriptable"},
      {"L[0][0]", 5, "'int' object is not subscriptable"},
      {"x[1 // z]", 5, "division or modulo by zero"},  // the index is evaluated first
      {"1 + sum(x)", 5, "'int' object is not iterable"},
      {"sum(L, s)", 1, "sum() can't sum strings [use ''.join(seq) instead]"},
      {"sum([s])", 1, "unsupported operand type(s) for +: 'int' and 'str'"},
      {"sum([x, 2 ** 62, 2 ** 62, 2 ** 62])", 1, "integer overflow"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    CompiledExpr e = Expression::parse(c.text, SourceLocation{"f.yaml", 4, 10}).compile(scope);
    EXPECT_FALSE(e.test(slots));
    try {
      e.eval(slots);
      ADD_FAILURE() << "no error";
    } catch (const EvalError& err) {
      EXPECT_EQ(err.where().line, 4);
      EXPECT_EQ(err.where().column, 10 + c.column - 1);
      EXPECT_NE(err.message().find(c.message), std::string::npos) << err.message();
    }
  }
}

TEST(ExprErrors, EvaluateRethrowsAsBadInput) {
  Expression e = Expression::parse("1 + 1 // 0", SourceLocation{"t1.json", 7, 20});
  try {
    e.evaluate();
    FAIL();
  } catch (const EvalError&) {
    FAIL() << "evaluate() must rethrow a plain Error";
  } catch (const Error& err) {
    EXPECT_EQ(err.kind(), Error::Kind::BadInput);
    EXPECT_EQ(err.where().column, 26);  // the // operator
  }
}

TEST(Expr, NamesInOrderOfFirstAppearance) {
  Expression e = Expression::parse("a * b + len([i * a for i in range(c)]) + min(d, 2) + b");
  EXPECT_EQ(e.names(), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(Expression::parse("[i for i in i]").names(), (std::vector<std::string>{"i"}));
  EXPECT_TRUE(Expression::parse("max(2, 3) + True").names().empty());
  EXPECT_EQ(Expression::parse("x  +  1").text(), "x  +  1");
}

TEST(Expr, SlotsUsedAndFolding) {
  Scope scope;
  scope.slots = {{"a", 3}, {"b", 1}, {"c", 0}};
  scope.constants = {{"n", Value(4)}};
  CompiledExpr e = Expression::parse("b + a * b + n").compile(scope);
  EXPECT_EQ(e.slots_used(), (std::vector<int>{1, 3}));
  EXPECT_FALSE(e.is_constant());
  std::vector<Value> slots = {Value(0), Value(2), Value(0), Value(5)};
  EXPECT_EQ(e.eval(slots).as_int(), 2 + 10 + 4);

  CompiledExpr k = Expression::parse("[2**i for i in range(n)]").compile(scope);
  EXPECT_TRUE(k.is_constant());
  EXPECT_EQ(k.eval({}).str(), "[1, 2, 4, 8]");
  EXPECT_EQ(Expression::parse("[i * a for i in range(3)]").compile(scope).eval(slots).str(), "[0, 5, 10]");
  EXPECT_EQ(Expression::parse("[[i * j + b for j in range(i)] for i in range(3)]").compile(scope).eval(slots).str(),
            "[[], [2], [2, 4]]");
  // A comprehension variable shadows a parameter of the same name only inside it.
  Scope shadow;
  shadow.slots = {{"i", 0}};
  EXPECT_EQ(Expression::parse("[i for i in range(2)] + [i]").compile(shadow).eval(std::vector<Value>{Value(5)}).str(),
            "[0, 1, 5]");
  // A failing constant subtree is not folded away: the error comes at evaluation.
  CompiledExpr lazy = Expression::parse("a > 0 or 1 // 0").compile(scope);
  EXPECT_TRUE(lazy.test(slots));
  slots[3] = Value(0);
  EXPECT_FALSE(lazy.test(slots));
  EXPECT_THROW(lazy.eval(slots), EvalError);
}

// Folding is not observable through CompiledExpr, so this reads the compiled tree.
TEST(Expr, ConstantSubscriptsFold) {
  Scope scope;
  scope.slots = {{"x", 0}};
  scope.constants = {{"ProblemSize", Value(ValueList{Value(1024), Value(512)})}};
  auto compiled = [&](const char* text) {
    Program p;
    p.root = parse_tree(text, {});
    resolve_and_fold(p, scope);
    emit_bytecode(p);
    return p;
  };
  Program whole = compiled("[1, 2, 3][1] + sum(ProblemSize[::-1][:1])");
  EXPECT_EQ(whole.root.kind, NodeKind::Const);
  EXPECT_EQ(whole.root.value.repr(), "514");

  Program part = compiled("ProblemSize[0] % x + [1, 2, 3][1]");
  ASSERT_EQ(part.root.kind, NodeKind::Binary);
  EXPECT_EQ(part.root.kids[0].kids[0].kind, NodeKind::Const);
  EXPECT_EQ(part.root.kids[0].kids[0].value.repr(), "1024");
  EXPECT_EQ(part.root.kids[1].value.repr(), "2");
  EXPECT_TRUE(part.fast);  // only scalars remain, so the VM runs it

  Program by_slot = compiled("[1, 2, 3][x]");  // the list folds; the subscript waits for x
  ASSERT_EQ(by_slot.root.kind, NodeKind::Index);
  EXPECT_EQ(by_slot.root.kids[0].kind, NodeKind::Const);
  EXPECT_EQ(by_slot.root.kids[0].value.repr(), "[1, 2, 3]");
  EXPECT_FALSE(by_slot.fast);
  CompiledExpr e = Expression::parse("[1, 2, 3][x]").compile(scope);
  EXPECT_EQ(e.eval(std::vector<Value>{Value(-1)}).as_int(), 3);
  EXPECT_EQ(e.eval(std::vector<Value>{Value(true)}).as_int(), 2);

  Program slice = compiled("ProblemSize[x:][0]");
  ASSERT_EQ(slice.root.kind, NodeKind::Index);
  EXPECT_EQ(slice.root.kids[0].kind, NodeKind::Slice);
  EXPECT_EQ(slice.root.kids[0].parts, kSliceStart);
  EXPECT_EQ(slice.root.kids[0].kids[0].value.repr(), "[1024, 512]");

  // A constant subscript that fails is kept and fails only when evaluated.
  CompiledExpr lazy = Expression::parse("x > 0 or [1][5]", SourceLocation{"s.yaml", 2, 1}).compile(scope);
  EXPECT_TRUE(lazy.test(std::vector<Value>{Value(1)}));
  try {
    lazy.eval(std::vector<Value>{Value(0)});
    ADD_FAILURE() << "no error";
  } catch (const EvalError& err) {
    EXPECT_EQ(err.where().column, 13);
    EXPECT_EQ(err.message(), "list index out of range");
  }
}

TEST(Expr, TestIsFalseOnErrorsAndHandlesEveryType) {
  Scope scope;
  scope.slots = {{"x", 0}, {"z", 1}, {"s", 2}, {"L", 3}};
  std::vector<Value> slots = {Value(7), Value(0), Value("abc"), Value(ValueList{Value(1), Value(7)})};
  auto test = [&](const char* text) { return Expression::parse(text).compile(scope).test(slots); };
  EXPECT_FALSE(test("x / z > 1"));
  EXPECT_FALSE(test("x % z == 0 or True"));
  EXPECT_TRUE(test("z == 0 or x % z == 0"));
  EXPECT_TRUE(test("s == 'abc' and x > 3"));
  EXPECT_TRUE(test("s < 'abd' <= 'abd'"));
  EXPECT_TRUE(test("s + 'x' == 'abcx'"));
  EXPECT_TRUE(test("s in ['x', 'abc']"));
  EXPECT_TRUE(test("s not in ['x', 'y']"));
  EXPECT_TRUE(test("x in L and len(L) == 2"));
  EXPECT_TRUE(test("L == [1, 7.0]"));
  EXPECT_FALSE(test("s < 1"));
  EXPECT_FALSE(test("s * 2 == 'abc'"));
  EXPECT_TRUE(test("x in [1, 7] and 7 in L"));
  EXPECT_TRUE(test("1 <= x < 8 and max(x, z, 3) == 7 and round(x / 2) == 4 and abs(-x) == x"));

  CompiledExpr e = Expression::parse("x * 2 + len(s)").compile(scope);
  EXPECT_FALSE(e.test(std::span<const Value>(slots).first(2)));  // too few values
  EXPECT_THROW(e.eval(std::span<const Value>(slots).first(2)), Error);
  CompiledExpr empty;
  EXPECT_FALSE(empty.test(slots));
  EXPECT_TRUE(empty.slots_used().empty());
  EXPECT_THROW(empty.eval(slots), Error);
  CompiledExpr copy = e;
  e = CompiledExpr();
  EXPECT_EQ(copy.eval(slots).as_int(), 17);
}

// The VM and the general evaluator must agree on every value and every error.
TEST(Expr, VmAgreesWithGeneralEvaluator) {
  const char* exprs[] = {
      "a // b + a % b",   "a / b - c",          "a ** b",          "(a + 0.5) // b",   "(a - 0.5) % b",
      "-a ** c",          "1 <= a < b <= c",    "a and b or c",    "not a or b // c",  "a if b > c else b",
      "max(a, b, c)",     "min(a, b) * 1.5",    "abs(a - b)",      "round(a / b)",     "round(a * 1.25, b)",
      "int(a / b)",       "float(a) == a",      "a in [1, 2, 3.0]", "a not in [0, 'x']", "(a > b) + (b > c)",
      "a * b == c * 2.0", "(a ** 2 - 3) / (b - c)", "a % b % c", "round(a * 25, -1)",
      "a % 3 == 1",       "a // 2 < 1.5",       "1 < a <= 3",      "a - 2 ** 3",       "b ** 2 >= 4.0",
      "a // 0",           "b % -2",             "a == 'x'",        "a < 'x'",          "-a ** -1",
      "[a, b, c][a % 3]", "[a, b, c][c:a]",     "'abcd'[a::c]",    "sum([a, b, c], a)", "[1, 2, 3][a] * b",
  };
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> dist(-4, 4);
  for (const char* text : exprs) {
    Expression parsed = Expression::parse(text);
    Scope slots_scope;
    slots_scope.slots = {{"a", 0}, {"b", 1}, {"c", 2}};
    CompiledExpr fast = parsed.compile(slots_scope);
    for (int trial = 0; trial < 60; ++trial) {
      std::vector<Value> v = {Value(dist(rng)), Value(dist(rng)), Value(dist(rng))};
      if (trial % 3 == 0) v[1] = Value(dist(rng) * 0.5);
      if (trial % 5 == 0) v[2] = Value(dist(rng) > 0);
      Scope folded;
      folded.constants = {{"a", v[0]}, {"b", v[1]}, {"c", v[2]}};
      SCOPED_TRACE(std::string(text) + " with " + Value(ValueList(v)).str());
      std::string want, got;
      try { want = parsed.compile(folded).eval({}).repr(); } catch (const EvalError& e) { want = e.message(); }
      try { got = fast.eval(v).repr(); } catch (const EvalError& e) { got = e.message(); }
      EXPECT_EQ(got, want);
    }
  }
}

}  // namespace
}  // namespace ktune::expr
