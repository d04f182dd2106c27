// Value: Python str()/repr(), equality across numeric types, hashing.
// Expected strings were produced by python3 (3.11) on this machine.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <unordered_set>

#include "search/expr/value.h"

namespace ktune {
namespace {

TEST(Value, FloatReprMatchesPython) {
  const struct {
    double d;
    const char* repr;
  } cases[] = {
      {0.1, "0.1"},
      {1.0 / 3, "0.3333333333333333"},
      {1e+16, "1e+16"},
      {1e-05, "1e-05"},
      {123456789.0, "123456789.0"},
      {2.45, "2.45"},
      {-0.0, "-0.0"},
      {0.0, "0.0"},
      {1000000000000000.0, "1000000000000000.0"},
      {0.0001, "0.0001"},
      {0.0001234, "0.0001234"},
      {1.5e+300, "1.5e+300"},
      {5e-324, "5e-324"},
      {1.7976931348623157e+308, "1.7976931348623157e+308"},
      {9007199254740992.0, "9007199254740992.0"},
      {100.0, "100.0"},
      {1e+22, "1e+22"},
      {1.2345678901234568e+17, "1.2345678901234568e+17"},
      {0.1 + 0.2, "0.30000000000000004"},
      {-2.5, "-2.5"},
      {1e-07, "1e-07"},
      {12345.678, "12345.678"},
      {9999999999999998.0, "9999999999999998.0"},
      {2.0 / 3, "0.6666666666666666"},
      {1e-06, "1e-06"},
      {1.0, "1.0"},
      {3e-10, "3e-10"},
      {4.35, "4.35"},
      {0.5, "0.5"},
      {1e+100, "1e+100"},
      {-1e-100, "-1e-100"},
      {std::numeric_limits<double>::infinity(), "inf"},
      {-std::numeric_limits<double>::infinity(), "-inf"},
      {std::nan(""), "nan"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(python_float_repr(c.d), c.repr);
    EXPECT_EQ(Value(c.d).str(), c.repr);
    EXPECT_EQ(Value(c.d).repr(), c.repr);
  }
}

TEST(Value, StrAndReprMatchPython) {
  EXPECT_EQ(Value(3).str(), "3");
  EXPECT_EQ(Value(int64_t{-9223372036854775807 - 1}).str(), "-9223372036854775808");
  EXPECT_EQ(Value(true).str(), "True");
  EXPECT_EQ(Value(false).repr(), "False");
  EXPECT_EQ(Value("abc").str(), "abc");
  EXPECT_EQ(Value("abc").repr(), "'abc'");
  ValueList l = {Value(1), Value(2.5), Value("a"), Value(true), Value(ValueList{}),
                 Value("it's"), Value("q\""), Value("a\nb")};
  EXPECT_EQ(Value(l).str(), R"([1, 2.5, 'a', True, [], "it's", 'q"', 'a\nb'])");
  EXPECT_EQ(Value(l).repr(), Value(l).str());
  EXPECT_EQ(Value(ValueList{Value("a\\b"), Value("\t"), Value("\x01")}).str(), R"(['a\\b', '\t', '\x01'])");
}

TEST(Value, TypesAndAccessors) {
  EXPECT_EQ(Value().type(), ValueType::Int);
  EXPECT_EQ(Value(2.0).type(), ValueType::Float);
  EXPECT_EQ(Value("x").type(), ValueType::String);
  EXPECT_EQ(Value(ValueList{}).type(), ValueType::List);
  EXPECT_STREQ(type_name(ValueType::Bool), "bool");
  EXPECT_STREQ(type_name(ValueType::String), "str");
  EXPECT_STREQ(type_name(ValueType::List), "list");
  EXPECT_TRUE(Value(true).is_number());
  EXPECT_FALSE(Value("1").is_number());
  EXPECT_EQ(Value(true).as_int(), 1);
  EXPECT_EQ(Value(3).as_float(), 3.0);
  EXPECT_EQ(Value(false).as_float(), 0.0);
}

TEST(Value, Truthiness) {
  EXPECT_FALSE(Value(0).truthy());
  EXPECT_TRUE(Value(-1).truthy());
  EXPECT_FALSE(Value(0.0).truthy());
  EXPECT_FALSE(Value(-0.0).truthy());
  EXPECT_TRUE(Value(std::nan("")).truthy());
  EXPECT_FALSE(Value("").truthy());
  EXPECT_TRUE(Value("0").truthy());
  EXPECT_FALSE(Value(ValueList{}).truthy());
  EXPECT_TRUE(Value(ValueList{Value(0)}).truthy());
}

TEST(Value, PythonEquality) {
  EXPECT_EQ(Value(1), Value(1.0));
  EXPECT_EQ(Value(1), Value(true));
  EXPECT_EQ(Value(0.0), Value(false));
  EXPECT_EQ(Value(0.0), Value(-0.0));
  EXPECT_NE(Value(2), Value(true));
  EXPECT_NE(Value(1), Value("1"));
  EXPECT_NE(Value(std::nan("")), Value(std::nan("")));
  // Exact int/float comparison: 2**53 + 1 is not the float 2**53.
  EXPECT_NE(Value(int64_t{9007199254740993}), Value(9007199254740992.0));
  EXPECT_EQ(Value(int64_t{9007199254740992}), Value(9007199254740992.0));
  EXPECT_NE(Value(int64_t{9223372036854775807}), Value(9223372036854775808.0));
  EXPECT_EQ(Value(ValueList{Value(1), Value("a")}), Value(ValueList{Value(1.0), Value("a")}));
  EXPECT_NE(Value(ValueList{Value(1)}), Value(ValueList{Value(1), Value(2)}));
  EXPECT_NE(Value(ValueList{}), Value(0));
}

TEST(Value, HashConsistentWithEquality) {
  EXPECT_EQ(Value(1).hash(), Value(1.0).hash());
  EXPECT_EQ(Value(1).hash(), Value(true).hash());
  EXPECT_EQ(Value(0.0).hash(), Value(-0.0).hash());
  EXPECT_EQ(Value(-5).hash(), Value(-5.0).hash());
  EXPECT_EQ(Value(ValueList{Value(1), Value(2)}).hash(), Value(ValueList{Value(1.0), Value(true + 1)}).hash());
  struct H {
    size_t operator()(const Value& v) const { return v.hash(); }
  };
  std::unordered_set<Value, H> set = {Value(1), Value(2.5), Value("a")};
  EXPECT_EQ(set.count(Value(1.0)), 1u);
  EXPECT_EQ(set.count(Value(true)), 1u);
  EXPECT_EQ(set.count(Value(2.5)), 1u);
  EXPECT_EQ(set.count(Value(2)), 0u);
  EXPECT_EQ(set.count(Value("a")), 1u);
}

}  // namespace
}  // namespace ktune
