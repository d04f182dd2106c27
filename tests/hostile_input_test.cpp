// Hostile input: whatever a spec, an expression or a results file says, ktune
// answers with bad input (exit 2, file:line:col) or with the work done, in
// bounded time and memory; never a crash, a hang, a blow-up, an internal error
// or garbage stored as data. Each case is one that once did otherwise, or that
// the fuzz targets (fuzz/) found; inputs are large enough that a parser that is
// not linear, or a limit that does not hold, would make the test run for
// minutes or exhaust memory.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "search/expr.h"
#include "search/space.h"
#include "test_util.h"

namespace ktune {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

struct Ran {
  int status = -1;
  std::string out;  // stdout and stderr
};

Ran ktune_cli(const std::string& args) {
  const std::string cmd = std::string(KTUNE_BINARY) + " " + args + " 2>&1";
  Ran r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string write(const TempDir& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir.file(name), std::ios::binary) << text;
  return dir.file(name);
}

std::string repeat(const std::string& s, size_t n, const std::string& sep) {
  std::string out;
  out.reserve((s.size() + sep.size()) * n);
  for (size_t i = 0; i < n; ++i) out.append(i ? sep : "").append(s);
  return out;
}

// A YAML spec over p and q with `restriction` (written in double quotes) as
// its one restriction, on line 7.
std::string spec_with_restriction(const std::string& restriction) {
  return "kernel: {name: k, source: k.cu}\n"
         "problem_size: [1024]\n"
         "tune_params:\n"
         "  p: [0, 1, 2, 4]\n"
         "  q: [1, 2]\n"
         "restrictions:\n"
         "  - \"" + restriction + "\"\n";
}

// Exit 2, and the message names the file, the line and a column.
void expect_bad_input_at(const Ran& r, const std::string& file, int line, const std::string& part) {
  EXPECT_EQ(r.status, 2) << r.out.substr(0, 2000);
  const std::string at = file + ":" + std::to_string(line) + ":";
  const size_t p = r.out.find(at);
  ASSERT_NE(p, std::string::npos) << r.out.substr(0, 2000);
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(r.out[p + at.size()]))) << r.out.substr(0, 2000);
  EXPECT_NE(r.out.find(part), std::string::npos) << r.out.substr(0, 2000);
  EXPECT_EQ(r.out.find("internal error"), std::string::npos) << r.out.substr(0, 2000);
}

// ---------------------------------------------------------------- expressions

TEST(HostileExpressions, DeepRightAssociativePowerIsRefusedNotACrash) {
  TempDir dir;
  const std::string spec = write(dir, "pow.yaml", spec_with_restriction(repeat("1", 20000, "**") + " > p"));
  expect_bad_input_at(ktune_cli("space " + spec), spec, 7, "nested too deeply");
}

TEST(HostileExpressions, UnaryChainsAreRefusedAtOnce) {
  TempDir dir;
  const std::string nots = write(dir, "not.yaml", spec_with_restriction(repeat("not", 20000, " ") + " p > 0"));
  expect_bad_input_at(ktune_cli("space " + nots), nots, 7, "nested too deeply");
  const std::string minus = write(dir, "neg.yaml", spec_with_restriction(std::string(20000, '-') + "p > 0"));
  expect_bad_input_at(ktune_cli("space " + minus), minus, 7, "nested too deeply");
  const std::string brackets =
      write(dir, "paren.yaml", spec_with_restriction(std::string(20000, '(') + "p" + std::string(20000, ')') + " > 0"));
  expect_bad_input_at(ktune_cli("space " + brackets), brackets, 7, "nested too deeply");
  const std::string subscripts = write(dir, "sub.yaml", spec_with_restriction("[p]" + repeat("[0]", 20000, "") + " > 0"));
  expect_bad_input_at(ktune_cli("space " + subscripts), subscripts, 7, "nested too deeply");
}

// A left-associative chain is a tree as deep as it is long: refused past the
// depth limit, as Python's compiler refuses one, with the operator's column.
TEST(HostileExpressions, LongLeftAssociativeChainIsRefusedQuickly) {
  TempDir dir;
  const std::string spec = write(dir, "plus.yaml", spec_with_restriction(repeat("p", 100000, " + ") + " > 0"));
  const Ran r = ktune_cli("space " + spec);
  expect_bad_input_at(r, spec, 7, "nested too deeply");
  // The 1000th '+' is where the tree passes 1000 levels: column 6 + 4 * 1000 - 2.
  EXPECT_NE(r.out.find(spec + ":7:4004:"), std::string::npos) << r.out.substr(0, 500);
  const expr::Expression ok = expr::Expression::parse(repeat("p", 900, " + "));
  expr::Scope scope;
  scope.slots["p"] = 0;
  EXPECT_EQ(ok.compile(scope).eval(std::vector<Value>{Value(2)}).as_int(), 1800);
}

// Wide is not deep: long lists, `and` chains, comparison chains and names
// parse in linear time and evaluate.
TEST(HostileExpressions, WideExpressionsParseInLinearTime) {
  TempDir dir;
  std::string list = "p in [";
  for (int i = 0; i < 200000; ++i) list.append(i ? "," : "").append(std::to_string(i * 2));
  const std::string in_list = write(dir, "list.yaml", spec_with_restriction(list + "]"));
  Ran r = ktune_cli("space " + in_list);
  EXPECT_EQ(r.status, 0) << r.out.substr(0, 1000);
  EXPECT_NE(r.out.find("valid:       6 "), std::string::npos) << r.out.substr(0, 1000);  // p 0, 2, 4; q 1, 2

  const std::string ands = write(dir, "and.yaml", spec_with_restriction(repeat("p >= 0", 20000, " and ")));
  r = ktune_cli("space " + ands);
  EXPECT_EQ(r.status, 0) << r.out.substr(0, 1000);
  EXPECT_NE(r.out.find("valid:       8 "), std::string::npos) << r.out.substr(0, 1000);

  std::string names;
  for (int i = 0; i < 100000; ++i) names.append(i ? " or " : "").append("n").append(std::to_string(i));
  const expr::Expression many = expr::Expression::parse(names);
  EXPECT_EQ(many.names().size(), 100000u);
  EXPECT_EQ(many.names()[99999], "n99999");

  const expr::Expression chain = expr::Expression::parse("0 <= " + repeat("1", 100000, " <= "));
  EXPECT_TRUE(chain.evaluate().as_bool());
  const expr::Expression text = expr::Expression::parse("len('" + std::string(1'000'000, 'x') + "')");
  EXPECT_EQ(text.evaluate().as_int(), 1'000'000);
}

Error evaluate_error(const std::string& text) {
  try {
    expr::Expression::parse(text, SourceLocation{"e.yaml", 3, 5}).evaluate();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error from " << text.substr(0, 200);
  return Error::failed("none");
}

// Every evaluation is bounded in memory and work: sizes are refused as they
// are asked for, not after the memory is gone.
TEST(HostileExpressions, EvaluationIsBoundedInSizeAndWork) {
  struct Case {
    std::string text;
    std::string part;
  };
  const Case cases[] = {
      {"range(10**12)", "range() too large"},
      {"[0] * 10**7", "repetition result too large"},
      {"'ab' * 10**7", "repetition result too large"},
      {"list(range(10**6)) + list(range(10**6))", "list too large"},
      {"[len([x for y in range(10**6)]) for x in range(10**6)]", "too much work"},
      {"[[x in L for x in L] for L in [list(range(10**5))]]", "too much work"},
      {"[[L] * 1000 == [L + []] * 1000 for L in [list(range(10**5))]]", "too much work"},
      {"sum([list(range(1000))] * 2000, [])", "list too large"},
  };
  for (const Case& c : cases) {
    const std::string& text = c.text;
    const Error e = evaluate_error(text);
    EXPECT_EQ(e.exit_status(), 2) << text;
    EXPECT_EQ(e.where().file, "e.yaml") << text;
    EXPECT_EQ(e.where().line, 3) << text;
    EXPECT_GE(e.where().column, 5) << text;
    EXPECT_NE(e.message().find(c.part), std::string::npos) << text << ": " << e.what();
  }
  // An empty sequence repeated any number of times is empty, at once.
  EXPECT_TRUE(expr::Expression::parse("[] * 10**18").evaluate().as_list().empty());
  EXPECT_EQ(expr::Expression::parse("'' * 10**18").evaluate().as_string(), "");
}

TEST(HostileExpressions, ConstantsDoublingAListOrAStringAreRefusedEarly) {
  TempDir dir;
  for (const std::string& seed : {std::string("'[1]'"), std::string("\"'ab'\"")}) {
    std::string text = "kernel: {name: k, source: k.cu}\nproblem_size: [1024]\nconstants:\n  c0: " + seed + "\n";
    for (int i = 1; i <= 40; ++i)
      text += "  c" + std::to_string(i) + ": c" + std::to_string(i - 1) + " + c" + std::to_string(i - 1) + "\n";
    text += "tune_params:\n  p: [1, 2]\n";
    const std::string spec = write(dir, "double.yaml", text);
    const Ran r = ktune_cli("space " + spec);
    // 2**20 elements pass the limit at c20 (line 24); 2 * 2**19 bytes at c19.
    expect_bad_input_at(r, spec, seed[0] == '\'' ? 24 : 23, "too large");
  }
}

// ---------------------------------------------------------------- restrictions

// A restriction that raises for some configurations excludes them, as a
// division by zero in Kernel Tuner's restriction would; ktune says so once,
// with how often and the first configuration.
TEST(HostileRestrictions, OnesThatRaiseAreCountedAndNoted) {
  TempDir dir;
  const std::string spec = write(dir, "raise.yaml", spec_with_restriction("q / p > 0"));
  Ran r = ktune_cli("space " + spec);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("valid:       6 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: restriction 'q / p > 0' (" + spec + ":7:6) raised an error in 2 of its 8 evaluations"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("First: p=0, q=1: division by zero"), std::string::npos) << r.out;

  for (const char* always : {"1/0 > p", "p in 5", "2**70 > p"}) {
    const std::string s = write(dir, "always.yaml", spec_with_restriction(always));
    r = ktune_cli("space " + s);
    EXPECT_EQ(r.status, 1) << always << ": " << r.out;  // no valid configuration: failed work (q is free)
    EXPECT_NE(r.out.find("note: restriction '" + std::string(always) + "' (" + s + ":7:6) raised an error in 4 of its 4"),
              std::string::npos)
        << r.out;
  }
}

TEST(HostileRestrictions, ThatCannotGiveABoolAreRefused) {
  TempDir dir;
  const std::pair<std::string, std::string> cases[] = {
      {"  - \"'abc'\"\n", "gives a str"},     {"  - [1, 2]\n", "must be"},
      {"  - \"[1, 2]\"\n", "gives a list"},   {"  - 5\n", "gives an int"},
      {"  - \"p % 32\"\n", "gives an int"},   {"  - \"p * 1.5\"\n", "gives an int or a float"},
      {"  - \"p and q\"\n", "gives an int"},  {"  - \"p if q > 1 else 'x'\"\n", "gives an int or a str"},
  };
  for (const auto& [line, part] : cases) {
    const std::string spec = write(dir, "nonbool.yaml",
                                   "kernel: {name: k, source: k.cu}\nproblem_size: [1024]\ntune_params:\n"
                                   "  p: [0, 1, 2, 4]\n  q: [1, 2]\nrestrictions:\n" + line);
    expect_bad_input_at(ktune_cli("space " + spec), spec, 7, part);
  }
  // A bool parameter is a condition; so is any comparison.
  const std::string ok = write(dir, "ok.yaml",
                               "kernel: {name: k, source: k.cu}\nproblem_size: [1024]\ntune_params:\n"
                               "  p: [0, 1, 2, 4]\n  b: [true, false]\nrestrictions:\n  - b\n  - p > 0 or not b\n");
  const Ran r = ktune_cli("space " + ok);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("valid:       3 "), std::string::npos) << r.out;
}

TEST(HostileRestrictions, OneThatNamesNoParameterAndRaisesIsTheSpecsError) {
  TempDir dir;
  const std::string spec = write(dir, "const.yaml", spec_with_restriction("1 // 0 == 0"));
  const Ran r = ktune_cli("space " + spec);
  expect_bad_input_at(r, spec, 7, "names no parameter and cannot be evaluated: integer division or modulo by zero");
  EXPECT_NE(r.out.find(spec + ":7:8:"), std::string::npos) << r.out;  // at the '//'
}

}  // namespace
}  // namespace ktune
