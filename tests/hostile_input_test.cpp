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

#include <zlib.h>

#include "search/expr/expr.h"
#include "search/space/space.h"
#include "tuner/spec/spec.h"
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

// Parsing takes about a hundred bytes a byte of text: one expression is at
// most 2 MiB, and a spec's text at most 4 MiB, so a spec stays within a few
// hundred megabytes whatever it holds.
TEST(HostileExpressions, TextIsBounded) {
  try {
    expr::Expression::parse("[" + repeat("1", 1'200'000, ",") + "]", SourceLocation{"e.yaml", 4, 9});
    ADD_FAILURE() << "a 2.4 MB expression was parsed";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_status(), 2);
    EXPECT_EQ(e.where().str(), "e.yaml:4:9");
    EXPECT_NE(e.message().find("expression too long"), std::string::npos) << e.what();
  }
  TempDir dir;
  std::string text = std::string("kernel: {name: k, source: k.cu}\nproblem_size: [1024]\ntune_params:\n  p: [1, 2]\n");
  for (int i = 0; i < 3; ++i)
    text.append("c").append(std::to_string(i)).append(": '").append(std::string(1'500'000, 'x')).append("'\n");
  const std::string spec = write(dir, "text.yaml", text);
  expect_bad_input_at(ktune_cli("space " + spec), spec, 7, "more than 4 MiB of text");
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


// ---------------------------------------------------------------- spec documents

const char* const kHead = "kernel: {name: k, source: k.cu}\nproblem_size: [1024]\ntune_params:\n  p: [1, 2]\n";

TEST(HostileSpecs, YamlAliasBombIsCappedNotExpanded) {
  TempDir dir;
  // 10^10 values once expanded; yaml-cpp shares the aliased nodes, ktune's
  // reading of them is what must stop.
  std::string text = std::string(kHead) + "a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n";
  for (int i = 1; i < 10; ++i) {
    const std::string name = std::to_string(i), previous = std::string("*a").append(std::to_string(i - 1));
    text.append("a").append(name).append(": &a").append(name).append(" [").append(repeat(previous, 10, ", ")).append("]\n");
  }
  const std::string spec = write(dir, "bomb.yaml", text);
  expect_bad_input_at(ktune_cli("space " + spec), spec, 5, "more than 500000 values (aliases counted each time");
  // A long string used many times: the text, not the count of values, is what grows.
  std::string strings = std::string(kHead) + "s: &s '" + std::string(1 << 20, 'x') + "'\nt: [";
  strings.append(repeat("*s", 100, ", ")).append("]\n");
  const std::string spec2 = write(dir, "strings.yaml", strings);
  expect_bad_input_at(ktune_cli("space " + spec2), spec2, 5, "MiB of text");
}

TEST(HostileSpecs, SecondYamlDocumentIsRefusedAtItsMarker) {
  TempDir dir;
  const std::string spec = write(dir, "multi.yaml", std::string(kHead) + "---\nrestrictions: [p > 5]\n");
  const Ran r = ktune_cli("space " + spec);
  expect_bad_input_at(r, spec, 5, "a second YAML document");
  EXPECT_NE(r.out.find(spec + ":5:1:"), std::string::npos) << r.out;
  // One document, explicitly opened and closed, is fine.
  const std::string one = write(dir, "one.yaml", "---\n" + std::string(kHead) + "...\n");
  EXPECT_EQ(ktune_cli("space " + one).status, 0);
}

TEST(HostileSpecs, DeepNestingIsRefusedInYamlAndJson) {
  TempDir dir;
  for (int depth : {100, 100000}) {
    const std::string yaml = write(dir, "deep.yaml", std::string(kHead) + "x: " + std::string(depth, '[') +
                                                         std::string(depth, ']') + "\n");
    expect_bad_input_at(ktune_cli("space " + yaml), yaml, 5, "levels deep");
    const std::string json = write(dir, "deep.json", "{\"General\": " + std::string(depth, '[') +
                                                         std::string(depth, ']') + "}\n");
    expect_bad_input_at(ktune_cli("space " + json), json, 1, "levels deep");
  }
}

TEST(HostileSpecs, HugeJsonIsRefusedAndLocatedInLinearTime) {
  TempDir dir;
  // Locations for 600,000 values, each found from the start of the text, were quadratic.
  const std::string json = write(dir, "big.json", "{\"General\": {\"x\": [" + repeat("1", 600000, ",") + "]}}\n");
  expect_bad_input_at(ktune_cli("space " + json), json, 1, "more than 500000 values");
  // Many keys in one object: duplicates are found through a set, not a scan.
  std::string keys = "{\"General\": {";
  for (int i = 0; i < 100000; ++i) keys.append(i ? ", " : "").append("\"k" + std::to_string(i) + "\": 1");
  keys += ", \"k5\": 2}}\n";
  const std::string dup = write(dir, "keys.json", keys);
  expect_bad_input_at(ktune_cli("space " + dup), dup, 1, "duplicate key \"k5\"");
}

// Each constant was evaluated with a copy of every constant before it, and
// each unknown T1 key cost a scan of its map: quadratic in their number.
TEST(HostileSpecs, ManyConstantsAndKeysLoadInLinearTime) {
  TempDir dir;
  std::string constants = std::string(kHead) + "constants:\n  c0: 1\n";
  for (int i = 1; i < 100000; ++i)
    constants.append("  c").append(std::to_string(i)).append(": c").append(std::to_string(i - 1)).append(" + 1\n");
  constants += "restrictions: [p < c99999]\n";
  Ran r = ktune_cli("space " + write(dir, "constants.yaml", constants));
  EXPECT_EQ(r.status, 0) << r.out.substr(0, 500);
  EXPECT_NE(r.out.find("valid:       2 "), std::string::npos) << r.out.substr(0, 500);
  std::string keys = "{\"General\": {";
  for (int i = 0; i < 100000; ++i) keys.append(i ? ", " : "").append("\"x").append(std::to_string(i)).append("\": 1");
  keys += R"(}, "ConfigurationSpace": {"TuningParameters": [{"Name": "p", "Type": "int", "Values": [1, 2]}]}})";
  r = ktune_cli("space " + write(dir, "keys.json", keys));
  EXPECT_EQ(r.status, 0) << r.out.substr(0, 500);
  EXPECT_NE(r.out.find("valid:       2 "), std::string::npos) << r.out.substr(r.out.size() - 500);
}

// Found by fuzzing: on some damaged text yaml-cpp's parser yields empty
// documents without end, and reading them all (YAML::LoadAll) never returned
// while its memory grew.
TEST(HostileSpecs, DamagedYamlWithEndlessEmptyDocumentsIsAnswered) {
  TempDir dir;
  const std::string alone = write(dir, "comma.yaml", ",\n");
  expect_bad_input_at(ktune_cli("space " + alone), alone, 1, "a spec must be a YAML map of keys, not null");
  const std::string after = write(dir, "after.yaml", std::string(kHead) + "---\n,\n");
  expect_bad_input_at(ktune_cli("space " + after), after, 5, "a second YAML document starts here");
}

// Found by fuzzing: a byte that is no UTF-8 character, in a YAML spec or
// made by an expression's \x escape, reached the spec's hash (JSON) and
// escaped as an internal error. YAML text must be UTF-8, and '\xb1' is the
// character U+00B1, as in Python.
TEST(HostileSpecs, TextThatIsNotUtf8IsRefusedAndEscapesMakeCharacters) {
  TempDir dir;
  const std::string raw = write(dir, "raw.yaml", std::string(kHead) + "  alg: [a, \"b\xb1\"]\n");
  expect_bad_input_at(ktune_cli("space " + raw), raw, 5, "not UTF-8 text");
  EXPECT_NE(ktune_cli("space " + raw).out.find(raw + ":5:14:"), std::string::npos);
  const std::string escaped = write(dir, "escaped.yaml", std::string(kHead) + "  alg: \"['a', '\\xb1', 'x\\xff']\"\n");
  const Ran r = ktune_cli("space " + escaped + " --json");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("\"\xc2\xb1\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"x\xc3\xbf\""), std::string::npos) << r.out;
  EXPECT_EQ(expr::Expression::parse("len('\\xb1x')").evaluate().as_int(), 2);
  EXPECT_EQ(expr::Expression::parse("'\\xb1'").evaluate().as_string(), "\xc2\xb1");
  EXPECT_THROW(parse_constant_overrides({"n=\xff"}), Error);
  // A NUL made yaml-cpp read on in another encoding, producing such a byte
  // itself: control characters are no YAML text.
  const char tail[] = "restrictions:\n  - p_\0x >= 1\n";
  const std::string nul = write(dir, "nul.yaml", std::string(kHead) + std::string(tail, sizeof tail - 1));
  expect_bad_input_at(ktune_cli("space " + nul), nul, 6, "a control character (U+0000) is not YAML text");
  EXPECT_NE(ktune_cli("space " + nul).out.find(nul + ":6:7:"), std::string::npos);
}

// A long plain scalar once went through std::regex, which recurses per
// character: 300,000 digits overflowed the stack.
TEST(HostileSpecs, LongPlainScalarsAreReadWithoutRecursion) {
  TempDir dir;
  const std::string digits = write(dir, "digits.yaml", std::string(kHead) + "constants:\n  c: " + std::string(300000, '1') + "\n");
  expect_bad_input_at(ktune_cli("space " + digits), digits, 6, "integer literal too large");
  const std::string exps = write(dir, "exps.yaml", std::string(kHead) + "constants:\n  c: 1." + std::string(300000, '5') + "e1x\n");
  expect_bad_input_at(ktune_cli("space " + exps), exps, 6, "");
  // The YAML core schema's numbers still read as numbers.
  const std::string ok = write(dir, "ok.yaml", std::string(kHead) +
                                                   "constants:\n  a: -12\n  b: +1.5E-3\n  c: .5\n  d: 7.\n  e: 1e3\n"
                                                   "restrictions:\n  - a == -12 and b == 0.0015 and c == 0.5 and d == 7.0"
                                                   " and e == 1000.0 and p > 0\n");
  const Ran r = ktune_cli("space " + ok);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("valid:       2 "), std::string::npos) << r.out;
}

// T1 fields set to null are located like any other value of the wrong kind
// (a null once had no location, and shifted every later one).
TEST(HostileSpecs, NullFieldsOfT1ArgumentsAreLocated) {
  TempDir dir;
  const std::string t1 = write(dir, "null.json", R"({
  "ConfigurationSpace": {"TuningParameters": [{"Name": "bs", "Type": "int", "Values": [32, 64]}]},
  "KernelSpecification": {"Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu",
    "GlobalSize": {"X": "1024"}, "LocalSize": {"X": "bs"},
    "Arguments": [{"Name": "a", "Type": null, "MemoryType": "Vector", "Size": 10, "FillType": "Constant"},
                  {"Name": "b", "Type": "float", "MemoryType": "Vector", "Size": null, "FillType": "Constant"}]}
})");
  expect_bad_input_at(ktune_cli("space " + t1), t1, 5, "Type must be a string, not null");
  const std::string t2 = write(dir, "null2.json", R"({
  "ConfigurationSpace": {"TuningParameters": [{"Name": "bs", "Type": "int", "Values": [32, 64]}]},
  "KernelSpecification": {"Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu",
    "GlobalSize": {"X": "1024"}, "LocalSize": {"X": "bs"},
    "Arguments": [{"Name": null, "Type": "float", "MemoryType": "Vector", "Size": 10, "FillType": "Constant"},
                  {"Name": "b", "Type": "float", "MemoryType": "Vector", "Size": null, "FillType": "Constant"}]}
})");
  const Ran r = ktune_cli("space " + t2);
  expect_bad_input_at(r, t2, 5, "Name must be a string, not null");
  EXPECT_NE(r.out.find(t2 + ":5:28:"), std::string::npos) << r.out;
}

TEST(HostileSpecs, NonFiniteNumbersAndEndlessDurationsAreRefused) {
  TempDir dir;
  const std::string output = "arguments:\n  - {name: c, type: float*, size: 4, output: true}\n";
  const std::pair<std::string, std::string> cases[] = {
      {"verify: {reference: first_valid, atol: .nan}\n" + output, "verify.atol must be a finite number"},
      {"verify: {reference: first_valid, rtol: .inf}\n" + output, "verify.rtol must be a finite number"},
      {"strategy: {name: random_sample, time_limit: \"1e300h\"}\n", "not a duration of at most 365 days"},
      {"strategy: {name: random_sample, time_limit: 1e300}\n", "at most 365 days"},
      {"strategy: {name: random_sample, time_limit: .inf}\n", "at most 365 days"},
  };
  for (const auto& [extra, part] : cases) {
    const std::string spec = write(dir, "x.yaml", std::string(kHead) + extra);
    expect_bad_input_at(ktune_cli("space " + spec), spec, 5, part);
  }
  const std::string nan = write(dir, "nan.yaml", "kernel: {name: k, source: k.cu}\nproblem_size: [1024]\n"
                                                 "tune_params:\n  p: [1, .nan]\n");
  expect_bad_input_at(ktune_cli("space " + nan), nan, 4, "nan is not a finite number");
  const std::string inf = write(dir, "inf.yaml", "kernel: {name: k, source: k.cu}\nproblem_size: [1024]\n"
                                                 "tune_params:\n  p: \"[1, float('inf')]\"\n");
  expect_bad_input_at(ktune_cli("space " + inf), inf, 4, "inf is not a finite number");
  const std::string t1 = write(dir, "nan.json", R"({"ConfigurationSpace": {"TuningParameters": [
    {"Name": "f", "Type": "float", "Values": "[1.0, float('nan')]"}]}})");
  expect_bad_input_at(ktune_cli("space " + t1), t1, 2, "nan is not a finite number");
  const std::string plain = write(dir, "plain.yaml", kHead);
  write(dir, "k.cu", "extern \"C\" __global__ void k() {}\n");
  const Ran cli = ktune_cli("tune " + plain + " --time-limit 1e300h");
  EXPECT_EQ(cli.status, 2) << cli.out;
  EXPECT_NE(cli.out.find("--time-limit: '1e300h' is not a duration of at most 365 days"), std::string::npos) << cli.out;
}

// ---------------------------------------------------------------- results files

// A Kernel Tuner cache: records on lines 9 to 11.
const char* const kCache = R"({
"device_name": "NVIDIA H100 80GB HBM3",
"kernel_name": "vector_add",
"problem_size": 1048576,
"tune_params_keys": ["block_size_x", "tile"],
"tune_params": {"block_size_x": [128, 256], "tile": [1, 2]},
"objective": "time",
"cache": {
"128,1": {"block_size_x": 128, "tile": 1, "time": 0.5, "times": [0.5, 0.5, 0.5], "compile_time": 200.0, "timestamp": "2024-01-01T00:00:00Z"},
"256,2": {"block_size_x": 256, "tile": 2, "time": 0.25, "times": [0.25, 0.25], "timestamp": "2024-01-01T00:00:01Z"},
"128,2": {"block_size_x": 128, "tile": 2, "time": "InvalidConfig", "__error__": "InvalidConfig"}
}
}
)";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

struct BadRecord {
  std::string from, to;  // the edit to kCache
  int line, column;      // where the refusal points
  std::string part;      // of its message
};

// Every bad value is refused where it was written, and nothing of the file
// is imported; the same file read by a replay is refused alike.
TEST(HostileImports, BadKernelTunerRecordsAreRefusedWithTheirPlace) {
  TempDir dir;
  const std::string db = dir.file("t.db");
  const std::string good = write(dir, "good.json", kCache);
  Ran r = ktune_cli("import " + good + " --db " + dir.file("good.db"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("3 of 3 records imported"), std::string::npos) << r.out;

  const std::string t10 = R"("time": 0.25,)";
  const BadRecord cases[] = {
      {t10, R"("time": -1.0,)", 10, 51, "time = -1.0 is not a time"},
      {t10, R"("time": 1e999,)", 10, 55, "number overflow parsing '1e999'"},
      {t10, R"("time": "abc",)", 10, 51, "time \"abc\" is neither a number nor one of Kernel Tuner's failures"},
      {t10, R"("time": [1],)", 10, 51, "time [1] is neither"},
      {t10, R"("time": {},)", 10, 51, "time {} is neither"},
      {t10, R"("time": true,)", 10, 51, "time true is neither"},
      {t10, R"("time": null,)", 10, 51, "time null is neither"},
      {t10, R"("time": "",)", 10, 51, "time \"\" is neither"},
      {t10, "", 10, 10, "record \"256,2\" has no time and names no failure"},
      {R"("times": [0.25, 0.25])", R"("times": [0.25, "x"])", 10, 66, "times[1] must be a number, not \"x\""},
      {R"("times": [0.25, 0.25])", R"("times": [0.25, -3])", 10, 66, "times[1] = -3 is not a time"},
      {R"("times": [0.25, 0.25])", R"("times": "many")", 10, 66, "times must be a list of numbers"},
      {R"("compile_time": 200.0)", R"("compile_time": -200.0)", 9, 98, "compile_time = -200.0 is not a time"},
      {R"("timestamp": "2024-01-01T00:00:01Z")", R"("timestamp": null)", 10, 93, "timestamp must be a string, not null"},
      {R"("timestamp": "2024-01-01T00:00:01Z")", R"("timestamp": 5)", 10, 93, "timestamp must be a string, not 5"},
      {R"("device_name": "NVIDIA H100 80GB HBM3")", R"("device_name": null)", 2, 16, "device_name must be a string, not null"},
      {R"("kernel_name": "vector_add")", R"("kernel_name": 7)", 3, 16, "kernel_name must be a string, not 7"},
      {R"("kernel_name": "vector_add",)", R"("kernel_name": "vector_add", "kernel_name": "other",)", 3, 30,
       "duplicate key \"kernel_name\""},
      {R"("tile": 2, "time": 0.25)", R"("tile": 2, "tile": 1, "time": 0.25)", 10, 43, "duplicate key \"tile\""},
      {R"("256,2": {"block_size_x": 256, "tile": 2)", R"("256,2": {"block_size_x": 256, "tile": 1)", 10, 10,
       "its parameter values make the key \"256,1\"; a record and its key must name the same configuration"},
      {R"("tile": 2, "time": 0.25)", R"("tile": null, "time": 0.25)", 10, 40, "tile = null is not a number, bool or string"},
      {R"("tile": 2, "time": 0.25)", R"("tile": 1e999, "time": 0.25)", 10, 44, "number overflow"},
      {R"("problem_size": 1048576)", R"("problem_size": true)", 4, 17,
       "problem_size must be an int, a list of ints, \"callable\" or a parameter's name"},
      {R"("problem_size": 1048576)", R"("problem_size": 18446744073709551615)", 4, 17,
       "problem_size extent 18446744073709551615 is not a positive integer below 2^63"},
      {R"("problem_size": 1048576)", R"("problem_size": [1e30])", 4, 18, "problem_size extent 1e+30 is not a positive"},
      {R"("problem_size": 1048576)", R"("problem_size": -5)", 4, 17, "problem_size extent -5 is not a positive"},
      {R"("objective": "time")", R"("objective": 5)", 7, 14, "objective must be a name or a list of names"},
      {R"(["block_size_x", "tile"])", R"([1, 2])", 5, 21, "tune_params_keys must be a list of names"},
      {R"(["block_size_x", "tile"])", R"(["tile", "tile"])", 5, 21, "tune_params_keys names \"tile\" twice"},
      {R"("tile": [1, 2]})", R"("tile": 2})", 6, 53, "tune_params \"tile\" must be a list of values"},
  };
  for (const BadRecord& c : cases) {
    SCOPED_TRACE(c.to);
    const std::string bad = write(dir, "bad.json", replaced(kCache, c.from, c.to));
    r = ktune_cli("import " + bad + " --db " + db);
    expect_bad_input_at(r, bad, c.line, c.part);
    EXPECT_NE(r.out.find(bad + ":" + std::to_string(c.line) + ":" + std::to_string(c.column) + ":"), std::string::npos)
        << r.out;
    const Ran rows = ktune_cli("results --db " + db);
    EXPECT_NE(rows.out.find("0 rows"), std::string::npos) << rows.out;  // nothing of a refused file
  }
  // A replay reads the file through the same checks.
  const std::string spec = write(dir, "s.yaml", "kernel: {name: vector_add, source: k.cu}\nproblem_size: [1048576]\n"
                                                "tune_params:\n  block_size_x: [128, 256]\n  tile: [1, 2]\n");
  const std::string bad = write(dir, "bad.json", replaced(kCache, t10, R"("time": -1.0,)"));
  expect_bad_input_at(ktune_cli("tune " + spec + " --simulate " + bad + " --db " + db), bad, 10, "is not a time");
}

TEST(HostileImports, OnlyAFileCutShortIsRepairedAsInterrupted) {
  TempDir dir;
  std::string cut = kCache;
  cut = cut.substr(0, cut.find("\"128,2\""));  // killed after the second record
  const std::string interrupted = write(dir, "interrupted.json", cut);
  Ran r = ktune_cli("import " + interrupted + " --db " + dir.file("a.db"));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("2 of 2 records imported"), std::string::npos) << r.out;
  // The same damage in the middle is the file's error, not an interruption.
  const std::string damaged = write(dir, "damaged.json", replaced(kCache, R"("time": 0.25,)", R"("time": 0.25,,)"));
  r = ktune_cli("import " + damaged + " --db " + dir.file("b.db"));
  expect_bad_input_at(r, damaged, 10, "invalid JSON");
  // A bad last record of an interrupted file is still refused, not dropped.
  const std::string last_bad = write(dir, "last.json", replaced(cut, R"("time": 0.25,)", R"("time": -0.25,)"));
  expect_bad_input_at(ktune_cli("import " + last_bad + " --db " + dir.file("c.db")), last_bad, 10, "is not a time");
}

TEST(HostileImports, LargeCacheIsReadInLinearTime) {
  TempDir dir;
  // 200,000 records: ordered_json's insertion looked up each key among the
  // ones before it, and a duplicate among them is still found.
  std::string text = R"({"device_name": "d", "kernel_name": "k", "tune_params_keys": ["x"], "cache": {)";
  for (int i = 0; i < 200000; ++i)
    text.append(i ? ",\n\"" : "\n\"").append(std::to_string(i)).append("\": {\"x\": ").append(std::to_string(i)).append(", \"time\": 1.5}");
  const std::string ok = write(dir, "big.json", text + "}}\n");
  Ran r = ktune_cli("import " + ok + " --db " + dir.file("a.db"));
  EXPECT_EQ(r.status, 0) << r.out.substr(0, 500);
  EXPECT_NE(r.out.find("200000 of 200000 records imported"), std::string::npos) << r.out.substr(0, 500);
  const std::string dup = write(dir, "dup.json", text + ",\n\"17\": {\"x\": 17, \"time\": 1.0}}}\n");
  expect_bad_input_at(ktune_cli("import " + dup + " --db " + dir.file("b.db")), dup, 200002, "duplicate key \"17\"");
  const std::string deep = write(dir, "deep.json", "{\"cache\": " + std::string(100000, '[') + "}");
  expect_bad_input_at(ktune_cli("import " + deep + " --db " + dir.file("c.db")), deep, 1, "levels deep");
}

// Found by fuzzing: a damaged gzip stream was refused without its file's
// location. A gzip bomb stops at 256 MiB of text instead of taking the memory.
TEST(HostileImports, GzipFilesAreBoundedAndLocated) {
  TempDir dir;
  auto gzip = [](const std::string& text) {
    std::string out(compressBound(static_cast<uLong>(text.size())) + 64, '\0');
    z_stream z{};
    EXPECT_EQ(deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    z.avail_in = static_cast<uInt>(text.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
  };
  std::string damaged_gz = gzip(kCache);
  damaged_gz[damaged_gz.size() - 8] ^= 0x55;  // its CRC no longer matches
  const std::string damaged = write(dir, "damaged.json.gz", damaged_gz);
  Ran r = ktune_cli("import " + damaged + " --db " + dir.file("a.db"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(damaged + ": not a readable gzip file (incorrect data check)"), std::string::npos) << r.out;
  // One member of 16 MiB of spaces, repeated: gzip readers concatenate members.
  const std::string member = gzip(std::string(16 << 20, ' '));
  std::string bomb;
  for (int i = 0; i < 20; ++i) bomb += member;  // 320 MiB once expanded, from a few hundred KiB
  const std::string path = write(dir, "bomb.json.gz", bomb);
  r = ktune_cli("import " + path + " --db " + dir.file("b.db"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(path + ": decompresses to more than 256 MiB"), std::string::npos) << r.out;
}

// T4: results[i] refused where it was written.
TEST(HostileImports, BadT4ResultsAreRefusedWithTheirPlace) {
  TempDir dir;
  const std::string t4 = R"({"schema_version": "1.0.0",
 "metadata": {"timeunit": "milliseconds", "device_name": "NVIDIA H100 80GB HBM3", "kernel_name": "gemm", "problem_size": [4096, 4096]},
 "results": [
  {"configuration": {"bx": 64}, "times": {"compilation_time": 410.0, "runtimes": [1.2, 1.3]}, "invalidity": "correct", "correctness": 1,
   "measurements": [{"name": "time", "value": 1.25, "unit": "ms"}], "timestamp": "2024-01-01T00:00:00Z"},
  {"configuration": {"bx": 128}, "times": {"runtimes": []}, "invalidity": "compile", "correctness": 1, "measurements": []}
 ]}
)";
  Ran r = ktune_cli("import " + write(dir, "good.json", t4) + " --db " + dir.file("good.db"));
  ASSERT_EQ(r.status, 0) << r.out;
  const BadRecord cases[] = {
      {R"("value": 1.25)", R"("value": -1.25)", 5, 20, "results[0]: measurements[0] (time) = -1.25 is not a time"},
      {R"("runtimes": [1.2, 1.3])", R"("runtimes": [1.2, null])", 4, 42, "times.runtimes[1] must be a number"},
      {R"("compilation_time": 410.0)", R"("compilation_time": "slow")", 4, 42, "times.compilation_time must be a number"},
      {R"("invalidity": "correct")", R"("invalidity": 5)", 4, 109, "unknown invalidity 5"},
      {R"("timeunit": "milliseconds")", R"("timeunit": null)", 2, 27, "metadata.timeunit must be a string, not null"},
      {R"([4096, 4096])", R"([18446744073709551615])", 2, 122, "extent 18446744073709551615 is not a positive integer"},
      {R"("device_name": "NVIDIA H100 80GB HBM3")", R"("device_name": ["x"])", 2, 58, "metadata.device_name must be a string"},
      {R"("timestamp": "2024-01-01T00:00:00Z")", R"("timestamp": 1)", 5, 82, "results[0].timestamp must be a string"},
      {R"([{"name": "time", "value": 1.25, "unit": "ms"}])", "[]", 4, 3, "results[0] is correct but has no time measurement"},
      {R"({"bx": 64})", R"({"bx": 64, "bx": 65})", 4, 32, "duplicate key \"bx\""},
      // Names come from every result: the first lacks the second's.
      {R"({"bx": 128})", R"({"by": 128})", 4, 21, "results[0]: configuration has no value for by"},
  };
  for (const BadRecord& c : cases) {
    SCOPED_TRACE(c.to);
    const std::string bad = write(dir, "bad.json", replaced(t4, c.from, c.to));
    r = ktune_cli("import " + bad + " --db " + dir.file("t.db"));
    expect_bad_input_at(r, bad, c.line, c.part);
    EXPECT_NE(r.out.find(bad + ":" + std::to_string(c.line) + ":" + std::to_string(c.column) + ":"), std::string::npos)
        << r.out;
  }
}

}  // namespace
}  // namespace ktune
