// SearchSpace against a naive full-product enumerator on many random small
// spaces, plus sizing, sampling, neighbours, keys and error cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "search/space/space.h"

namespace ktune {
namespace {

using Constants = std::map<std::string, Value, std::less<>>;

Parameter param(std::string name, std::vector<Value> values) {
  Parameter p;
  p.name = std::move(name);
  p.values = std::move(values);
  p.type = p.values.empty() ? ValueType::Int : p.values.front().type();
  return p;
}

std::vector<expr::Expression> parse_all(const std::vector<std::string>& texts) {
  std::vector<expr::Expression> out;
  for (const auto& t : texts) out.push_back(expr::Expression::parse(t));
  return out;
}

// "p3": built by appending, which sidesteps a GCC 12 -Wrestrict false positive.
std::string name_of(const char* prefix, size_t i) {
  std::string s = prefix;
  s += std::to_string(i);
  return s;
}

std::vector<Value> ints(int from, int to) {
  std::vector<Value> v;
  for (int i = from; i < to; ++i) v.emplace_back(i);
  return v;
}

// The reference: every point of the Cartesian product, tested with every
// restriction (compiled the same way, so this checks the enumeration, not the
// expression language).
struct BruteForce {
  std::vector<Parameter> params;
  std::vector<expr::CompiledExpr> checks;

  BruteForce(const std::vector<Parameter>& ps, const std::vector<std::string>& restrictions,
             const Constants& constants)
      : params(ps) {
    expr::Scope scope;
    for (size_t i = 0; i < ps.size(); ++i) scope.slots[ps[i].name] = static_cast<int>(i);
    scope.constants = constants;
    for (const auto& r : restrictions) checks.push_back(expr::Expression::parse(r).compile(scope));
  }
  bool valid(const Config& c) const {
    std::vector<Value> slots;
    for (size_t p = 0; p < c.size(); ++p) slots.push_back(params[p].values[c[p]]);
    for (const auto& check : checks)
      if (check.truth(slots) != expr::CompiledExpr::Truth::True) return false;
    return true;
  }
  std::vector<Config> all() const {  // the whole product, lexicographic
    std::vector<Config> out{Config(params.size(), 0)};
    for (size_t p = params.size(); p-- > 0;) {
      std::vector<Config> next;
      for (uint32_t j = 0; j < params[p].values.size(); ++j)
        for (Config c : out) {
          c[p] = j;
          next.push_back(c);
        }
      out = std::move(next);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  std::vector<Config> valid_set() const {
    std::vector<Config> out;
    for (const Config& c : all())
      if (valid(c)) out.push_back(c);
    return out;
  }
  std::vector<Config> neighbours(const Config& c, NeighbourKind kind) const {
    std::vector<Config> out;
    for (size_t p = 0; p < c.size(); ++p)
      for (uint32_t j = 0; j < params[p].values.size(); ++j) {
        const bool near = kind == NeighbourKind::Adjacent ? (j + 1 == c[p] || j == c[p] + 1) : j != c[p];
        Config n = c;
        n[p] = j;
        if (near && valid(n)) out.push_back(n);
        // Repaired: the nearest valid values of one other parameter, every
        // parameter reaching one at that distance.
        if (kind == NeighbourKind::HammingRepaired && j != c[p] && !valid(n) && valid(c)) {
          for (int64_t d = 1; d < 64; ++d) {
            bool found = false;
            for (size_t q = 0; q < c.size(); ++q)
              for (const int64_t w : {int64_t{c[q]} - d, int64_t{c[q]} + d}) {
                if (q == p || w < 0 || w >= int64_t(params[q].values.size())) continue;
                Config r = n;
                r[q] = uint32_t(w);
                if (valid(r)) out.push_back(r), found = true;
              }
            if (found) break;
          }
        }
      }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
};

// Random small spaces: mixed value types, restrictions with % // / and/or,
// type errors and divisions by zero included.
struct RandomSpace {
  std::vector<Parameter> params;
  std::vector<std::string> restrictions;
  Constants constants{{"N", Value(12)}, {"M", Value(2.5)}};
};

std::vector<Value> random_values(std::mt19937_64& rng) {
  static const std::vector<std::vector<Value>> pools = {
      {-3, -1, 0, 1, 2, 3, 4, 6, 8},
      {0.0, 0.5, 1.5, 2.45, -1.0, 4.0},
      {true, false},
      {"a", "b", "alg_2", "x"},
      {0, 1, 2, 0.5, "a", true},
  };
  std::vector<Value> pool = pools[rng() % pools.size()];
  // Mixed pool: drop True (== 1) so values stay distinct.
  if (pool.size() == 6 && pool.back().is_bool()) pool.pop_back();
  std::shuffle(pool.begin(), pool.end(), rng);
  pool.resize(1 + rng() % std::min<size_t>(4, pool.size()));
  return pool;
}

std::string random_restriction(std::mt19937_64& rng, size_t np) {
  static const std::vector<std::string> shapes = {
      "{a} % {b} == 0",           "{a} // {b} >= 1",       "{a} * {b} <= {k}",
      "{a} + {b} > {k} or {c} == {k}", "not {a} < {b}",    "{a} / {b} < {k}",
      "{a} == 'a' or {b} != 'b'", "{a} <= {b} <= {c}",     "{a} in [0, 1, 'a', 2.45]",
      "{a} - {b} != {k} and {c} % 2 == 1", "N % {a} == 0", "{a} * M > {k}",
      "{a} if {b} else {c}",     "{a} ** 2 < N",          "1 < 2",
      "{a} % 0 == 1 or {b}",     "1 // 0 == 0 or {a} == {b}",
  };
  std::string s = shapes[rng() % shapes.size()];
  static const char* ks[] = {"0", "1", "2", "3", "-1", "4", "1.5"};
  auto fill = [&](const std::string& hole, const std::string& with) {
    for (size_t at; (at = s.find(hole)) != std::string::npos;) s.replace(at, hole.size(), with);
  };
  fill("{a}", "p" + std::to_string(rng() % np));
  fill("{b}", "p" + std::to_string(rng() % np));
  fill("{c}", "p" + std::to_string(rng() % np));
  fill("{k}", ks[rng() % 7]);
  return s;
}

RandomSpace random_space(std::mt19937_64& rng) {
  RandomSpace rs;
  const size_t np = 1 + rng() % 5;
  for (size_t i = 0; i < np; ++i) rs.params.push_back(param(name_of("p", i), random_values(rng)));
  const size_t nr = rng() % 5;
  for (size_t i = 0; i < nr; ++i) rs.restrictions.push_back(random_restriction(rng, np));
  return rs;
}

TEST(SearchSpace, MatchesBruteForceOnRandomSpaces) {
  std::mt19937_64 rng(20240601);
  int nonempty = 0, with_free = 0, refused = 0;
  for (int round = 0; round < 600; ++round) {
    RandomSpace rs = random_space(rng);
    SCOPED_TRACE("round " + std::to_string(round));
    std::optional<SearchSpace> built;
    try {
      built.emplace(rs.params, parse_all(rs.restrictions), rs.constants);
    } catch (const Error& e) {
      // Refused only for a restriction that can never give a bool (`p0 if p1
      // else p2` over ints, say).
      ASSERT_NE(e.message().find("must give True or False"), std::string::npos) << e.what();
      ++refused;
      continue;
    }
    const SearchSpace& space = *built;
    BruteForce brute(rs.params, rs.restrictions, rs.constants);
    const std::vector<Config> expected = brute.valid_set();
    ASSERT_EQ(space.count_valid(), expected.size());
    nonempty += !expected.empty();
    std::vector<Config> got;
    for (uint64_t i = 0; i < space.size(); ++i) {
      got.push_back(space.at(i));
      ASSERT_EQ(space.index_of(got.back()), std::optional<uint64_t>(i));
    }
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got, expected);
    const std::set<Config> valid(expected.begin(), expected.end());
    const std::vector<Config> every = brute.all();
    for (const Config& c : every) {
      ASSERT_EQ(space.is_valid(c), valid.count(c) == 1);
      if (!valid.count(c)) {
        ASSERT_FALSE(space.index_of(c).has_value());
      }
    }
    for (int k = 0; k < 8; ++k) {
      const Config& c = every[rng() % every.size()];
      for (NeighbourKind kind : {NeighbourKind::Hamming, NeighbourKind::Adjacent, NeighbourKind::HammingRepaired}) {
        auto n = space.neighbours(c, kind);
        std::sort(n.begin(), n.end());
        ASSERT_EQ(n, brute.neighbours(c, kind));
      }
    }
    with_free += std::any_of(rs.params.begin(), rs.params.end(), [&](const Parameter& p) {
      return std::none_of(rs.restrictions.begin(), rs.restrictions.end(),
                          [&](const std::string& r) { return r.find(p.name) != std::string::npos; });
    });
  }
  EXPECT_GT(nonempty, 200);  // the generator must not make only empty spaces
  EXPECT_GT(with_free, 100);
  EXPECT_LT(refused, 100);
}

TEST(SearchSpace, FreeParametersMultiplyAndMapByMixedRadix) {
  SearchSpace space({param("a", ints(0, 3)), param("b", ints(0, 4)), param("c", {"x", "y", "z", "w", "v"})},
                    parse_all({"a < 2"}));
  EXPECT_EQ(space.count_valid(), 2u * 4u * 5u);
  std::set<Config> seen;
  for (uint64_t i = 0; i < space.size(); ++i) {
    const Config c = space.at(i);
    EXPECT_LT(c[0], 2u);
    EXPECT_TRUE(seen.insert(c).second);
    EXPECT_EQ(space.index_of(c), std::optional<uint64_t>(i));
  }
  EXPECT_THROW(space.at(space.size()), Error);
}

TEST(SearchSpace, DivisionByZeroMakesConfigurationInvalid) {
  SearchSpace space({param("a", ints(0, 4)), param("b", ints(0, 4))}, parse_all({"a % b == 0"}));
  // b == 0 is never valid; for b in 1..3: a in 0..3 divisible by b: 4 + 2 + 2.
  EXPECT_EQ(space.count_valid(), 8u);
  EXPECT_FALSE(space.is_valid({0, 0}));
  EXPECT_TRUE(space.is_valid({2, 2}));
}

TEST(SearchSpace, ConstantRestrictions) {
  auto params = [] { return std::vector<Parameter>{param("a", ints(0, 10)), param("b", ints(0, 10))}; };
  Constants constants{{"N", Value(12)}};
  EXPECT_EQ(SearchSpace(params(), parse_all({"1 < 2", "N == 12"}), constants).count_valid(), 100u);
  // One that names no parameter and raises is the spec's error, not a configuration's.
  EXPECT_THROW(SearchSpace(params(), parse_all({"a < b", "1 // 0 == 0"}), constants), Error);
  for (const char* r : {"N > 100", "False"}) {
    SearchSpace empty(params(), parse_all({"a < b", r}), constants);
    EXPECT_EQ(empty.count_valid(), 0u) << r;
    EXPECT_EQ(empty.cartesian_size(), "100");
    std::mt19937_64 rng(1);
    EXPECT_TRUE(empty.sample(5, rng).empty());
    EXPECT_FALSE(empty.is_valid({0, 1}));
    EXPECT_TRUE(empty.neighbours({0, 1}, NeighbourKind::Hamming).empty());
    EXPECT_THROW(empty.at(0), Error);
  }
}

TEST(SearchSpace, NoParametersAndNoRestrictions) {
  SearchSpace none({}, {});
  EXPECT_EQ(none.cartesian_size(), "1");
  EXPECT_EQ(none.count_valid(), 1u);
  EXPECT_EQ(none.at(0), Config{});
  SearchSpace plain({param("a", ints(0, 7))}, {});
  EXPECT_EQ(plain.count_valid(), 7u);
  EXPECT_EQ(plain.at(3), Config{3});
}

TEST(SearchSpace, CartesianSizeIsExactAndInstant) {
  std::vector<Parameter> twelve;
  for (int i = 0; i < 12; ++i) twelve.push_back(param(name_of("p", i), ints(0, 10)));
  SearchSpace tera(twelve, parse_all({"p0 + p1 < 18", "p2 % 3 == 0 or p3 == 1"}));
  EXPECT_EQ(tera.cartesian_size(), "1000000000000");
  EXPECT_DOUBLE_EQ(tera.cartesian_size_approx(), 1e12);

  std::vector<Parameter> big = twelve;
  for (int i = 12; i < 21; ++i) big.push_back(param(name_of("p", i), ints(0, 10)));
  EXPECT_EQ(SearchSpace(big, {}).cartesian_size(), "1000000000000000000000");

  std::vector<Parameter> binary;
  for (int i = 0; i < 70; ++i) binary.push_back(param(name_of("b", i), {false, true}));
  SearchSpace two70(binary, {});
  EXPECT_EQ(two70.cartesian_size(), "1180591620717411303424");  // 2^70
  EXPECT_THROW(two70.count_valid(), Error);                      // beyond 2^64
  std::mt19937_64 rng(3);
  const auto picks = two70.sample(20, rng);  // rejection, every draw accepted
  EXPECT_EQ(std::set<Config>(picks.begin(), picks.end()).size(), 20u);
}

TEST(SearchSpace, IndexedSamplingIsUniformAndUnique) {
  SearchSpace space({param("a", ints(0, 6)), param("b", ints(0, 6)), param("c", {"x", "y"})},
                    parse_all({"a <= b"}));
  ASSERT_EQ(space.count_valid(), 42u);
  std::mt19937_64 rng(7);
  const auto draws = space.sample(42000, rng, /*unique=*/false);
  std::map<Config, int> hist;
  for (const Config& c : draws) {
    ASSERT_TRUE(space.is_valid(c));
    ++hist[c];
  }
  ASSERT_EQ(hist.size(), 42u);
  double chi2 = 0;
  for (const auto& [c, n] : hist) chi2 += (n - 1000.0) * (n - 1000.0) / 1000.0;
  EXPECT_LT(chi2, 80.0);  // 41 degrees of freedom: p < 1e-4 beyond ~80

  const auto some = space.sample(10, rng);
  EXPECT_EQ(std::set<Config>(some.begin(), some.end()).size(), 10u);
  const auto all = space.sample(1000, rng);
  EXPECT_EQ(std::set<Config>(all.begin(), all.end()).size(), 42u);
  EXPECT_EQ(all.size(), 42u);
}

TEST(SearchSpace, RejectionSamplingOfAHugeSpaceIsUniform) {
  // 10^8 restricted points: too many to enumerate for sampling, so rejection.
  std::vector<Parameter> params{param("a", ints(0, 10)), param("b", ints(0, 10))};
  for (const char* n : {"c", "d", "e", "f", "g", "h"}) params.push_back(param(n, ints(0, 10)));
  SearchSpace space(params, parse_all({"a + b < 10", "c + d + e + f + g + h >= 0"}));
  std::mt19937_64 rng(11);
  const auto draws = space.sample(11000, rng, /*unique=*/false);
  std::vector<int> by_a(10, 0);
  for (const Config& c : draws) {
    ASSERT_TRUE(space.is_valid(c));
    ++by_a[c[0]];
  }
  // P(a = k) = (10 - k) / 55.
  double chi2 = 0;
  for (int k = 0; k < 10; ++k) {
    const double expect = 11000.0 * (10 - k) / 55.0;
    chi2 += (by_a[k] - expect) * (by_a[k] - expect) / expect;
  }
  EXPECT_LT(chi2, 35.0);  // 9 degrees of freedom
  const auto unique = space.sample(500, rng);
  EXPECT_EQ(std::set<Config>(unique.begin(), unique.end()).size(), 500u);
}

TEST(SearchSpace, HopelessRejectionFailsClearlyUntilCounted) {
  std::vector<Parameter> params;
  std::vector<std::string> restrictions;
  for (int i = 0; i < 9; ++i) {
    params.push_back(param(name_of("p", i), ints(0, 10)));
    restrictions.push_back(name_of("p", i) + " == 9");
  }
  SearchSpace space(params, parse_all(restrictions));
  std::mt19937_64 rng(1);  // one valid point in 10^9: a lucky draw is a 0.4% chance
  try {
    space.sample(1, rng);
    FAIL() << "expected Error::failed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::Failed);
    EXPECT_NE(e.message().find("too small a fraction"), std::string::npos) << e.message();
  }
  // Pruning makes the count cheap; once known, sampling goes by index.
  EXPECT_EQ(space.count_valid(), 1u);
  EXPECT_EQ(space.sample(3, rng), std::vector<Config>{Config(9, 9)});
}

TEST(SearchSpace, AdjacentAndHammingNeighbours) {
  SearchSpace space({param("x", {1, 2, 4, 8}), param("y", {1, 2, 4, 8})}, parse_all({"x * y <= 16"}));
  const Config c{2, 1};  // x = 4, y = 2
  EXPECT_EQ(space.neighbours(c, NeighbourKind::Adjacent), (std::vector<Config>{{1, 1}, {3, 1}, {2, 0}, {2, 2}}));
  // Hamming: x in {1, 2, 8} (8*2 = 16 ok), y in {1, 4} (4*8 = 32 no).
  EXPECT_EQ(space.neighbours(c, NeighbourKind::Hamming),
            (std::vector<Config>{{0, 1}, {1, 1}, {3, 1}, {2, 0}, {2, 2}}));
  EXPECT_THROW(space.neighbours({0}, NeighbourKind::Hamming), Error);
}

TEST(SearchSpace, RepairedNeighboursMoveASecondParameterOnlyAsFarAsTheRestrictionsNeed) {
  // A thread block under a limit of 1024: x = 32 from (16, 64) alone is 2048.
  SearchSpace space({param("x", {1, 2, 4, 8, 16, 32}), param("y", {32, 64, 128}), param("t", {1, 2})},
                    parse_all({"x * y <= 1024", "t == 1 or x >= 4"}));
  const Config c{4, 1, 0};  // x = 16, y = 64, t = 1
  auto n = space.neighbours(c, NeighbourKind::HammingRepaired);
  std::sort(n.begin(), n.end());
  // Hamming: x in {1, 2, 4, 8}, y = 32, t = 2; repaired: x = 32 with y 64 -> 32 (nearest;
  // t cannot make it valid); y = 128 with x 16 -> 8 (nearest; 4, 2 and 1 are further).
  EXPECT_EQ(n, (std::vector<Config>{{0, 1, 0}, {1, 1, 0}, {2, 1, 0}, {3, 1, 0}, {3, 2, 0}, {4, 0, 0}, {4, 1, 1}, {5, 0, 0}}));
  // Both parameters reach a valid one at the same distance: both are neighbours.
  SearchSpace tie({param("a", {0, 1, 2}), param("b", {0, 1, 2}), param("c", {0, 1, 2})}, parse_all({"a + b + c <= 3"}));
  auto m = tie.neighbours({1, 1, 1}, NeighbourKind::HammingRepaired);
  std::sort(m.begin(), m.end());
  // a = 2 alone sums to 4: b or c one lower, (2, 0, 1) and (2, 1, 0); likewise for b and c.
  EXPECT_EQ(m, (std::vector<Config>{{0, 1, 1}, {0, 1, 2}, {0, 2, 1}, {1, 0, 1}, {1, 0, 2}, {1, 1, 0}, {1, 2, 0},
                                    {2, 0, 1}, {2, 1, 0}}));
  // Two changes repaired by each other are one neighbour: a 1 -> 2 takes b along, and b a.
  SearchSpace equal({param("a", {0, 1, 2}), param("b", {0, 1, 2})}, parse_all({"a == b"}));
  EXPECT_EQ(equal.neighbours({1, 1}, NeighbourKind::HammingRepaired), (std::vector<Config>{{0, 0}, {2, 2}}));
  // From an invalid configuration nothing is repaired: its Hamming neighbours.
  EXPECT_EQ(space.neighbours({5, 2, 0}, NeighbourKind::HammingRepaired), space.neighbours({5, 2, 0}, NeighbourKind::Hamming));
}

TEST(SearchSpace, KeysValuesAndConfigOf) {
  SearchSpace space({param("block_size_x", {64, 128}), param("alg", {"alg_1", "alg_2"}),
                     param("use_shared", {false, true}), param("f", {2.45, 1.0, 1e-06})},
                    {});
  EXPECT_EQ(space.config_key({1, 1, 1, 0}), "128,alg_2,True,2.45");
  EXPECT_EQ(space.config_key({0, 0, 0, 1}), "64,alg_1,False,1.0");
  EXPECT_EQ(space.config_key({0, 0, 0, 2}), "64,alg_1,False,1e-06");
  const std::vector<Value> vals = space.values({1, 1, 1, 0});
  ASSERT_EQ(vals.size(), 4u);
  EXPECT_EQ(vals[0].as_int(), 128);
  EXPECT_EQ(vals[1].as_string(), "alg_2");
  EXPECT_EQ(space.config_of(vals), std::optional<Config>(Config{1, 1, 1, 0}));
  EXPECT_FALSE(space.config_of({128, "alg_3", true, 2.45}).has_value());
  EXPECT_FALSE(space.config_of({128}).has_value());
  EXPECT_EQ(space.parameter_index("alg"), 1);
  EXPECT_EQ(space.parameter_index("nope"), -1);
  EXPECT_THROW(space.config_key({0, 0, 0, 3}), Error);
}

TEST(SearchSpace, BadInputIsReported) {
  auto kind_of = [](auto&& build) {
    try {
      build();
    } catch (const Error& e) {
      return e.exit_status();
    }
    return 0;
  };
  EXPECT_EQ(kind_of([] { SearchSpace({param("a", {1}), param("a", {2})}, {}); }), 2);
  EXPECT_EQ(kind_of([] { SearchSpace({param("a", {})}, {}); }), 2);
  EXPECT_EQ(kind_of([] { SearchSpace({param("a", {1, 2, 1})}, {}); }), 2);
  EXPECT_EQ(kind_of([] { SearchSpace({param("a", {1})}, parse_all({"a < b"})); }), 2);
  EXPECT_EQ(kind_of([] { SearchSpace({param("N", {1})}, {}, Constants{{"N", Value(3)}}); }), 2);
}

TEST(SearchSpace, ConstMethodsAreThreadSafe) {
  std::vector<Parameter> params;
  for (int i = 0; i < 5; ++i) params.push_back(param(name_of("p", i), ints(1, 9)));
  SearchSpace space(params, parse_all({"p0 * p1 <= 24", "p2 % p3 == 0 or p4 > 5"}));
  const uint64_t n = BruteForce(params, {"p0 * p1 <= 24", "p2 % p3 == 0 or p4 > 5"}, {}).valid_set().size();
  std::vector<std::thread> threads;
  std::vector<int> ok(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      bool good = space.count_valid() == n;
      for (int k = 0; k < 200; ++k) {
        const uint64_t i = rng() % n;
        good = good && space.index_of(space.at(i)) == std::optional<uint64_t>(i);
      }
      for (const Config& c : space.sample(50, rng)) good = good && space.is_valid(c);
      ok[t] = good;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(std::count(ok.begin(), ok.end(), 1), 8);
}

}  // namespace
}  // namespace ktune
