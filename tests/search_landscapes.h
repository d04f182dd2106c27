// Synthetic search spaces and objective landscapes shared by the strategy,
// cost-layer and comparison tests and the strategy benchmark.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "search/compare.h"
#include "search/strategy/cost.h"
#include "search/space/space.h"

namespace ktune::testing_landscapes {

inline Parameter int_param(const std::string& name, std::vector<int> values) {
  Parameter p;
  p.name = name;
  for (int v : values) p.values.emplace_back(v);
  p.type = ValueType::Int;
  return p;
}

inline Parameter str_param(const std::string& name, std::vector<std::string> values) {
  Parameter p;
  p.name = name;
  for (auto& v : values) p.values.emplace_back(v);
  p.type = ValueType::String;
  return p;
}

inline std::vector<int> range(int n) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

// a 0..6, b 0..5, c in {1,2,4,8}, s in {p,q,r}, restricted to a + b <= 9:
// 7*6 pairs minus the 3 with a+b > 9 = 39 pairs, times 12 = 468 points.
inline SearchSpace bowl_space() {
  return SearchSpace({int_param("a", range(7)), int_param("b", range(6)), int_param("c", {1, 2, 4, 8}),
                      str_param("s", {"p", "q", "r"})},
                     {expr::Expression::parse("a + b <= 9")});
}

// A separable bowl with a unique optimum 1.0 at a=4, b=2, c=2, s=q; positive,
// time-like (lower is better).
inline double bowl(const SearchSpace& space, const Config& c) {
  const std::vector<Value> v = space.values(c);
  const double a = v[0].as_float(), b = v[1].as_float(), lc = std::log2(v[2].as_float());
  const double s = v[3].as_string() == "q" ? 0.0 : (v[3].as_string() == "p" ? 1.5 : 2.5);
  return 1.0 + (a - 4) * (a - 4) + (b - 2) * (b - 2) + 2 * (lc - 1) * (lc - 1) + s;
}

// Deterministic pseudo-random failure of about `percent` % of the configurations.
inline bool fails(const Config& c, int percent) {
  uint64_t h = 1469598103934665603ull;
  for (uint32_t x : c) h = (h ^ (x + 7)) * 1099511628211ull;
  h ^= h >> 29;
  return static_cast<int>(h % 100) < percent;
}

// Every valid configuration with f's value, fail_percent % failed (never the
// optimum), and a recorded cost of 0.5 to 0.56 s.
inline ExhaustiveTable table_of(const SearchSpace& space, double (*f)(const SearchSpace&, const Config&),
                                int fail_percent = 0) {
  ExhaustiveTable t;
  double best = std::numeric_limits<double>::infinity();
  for (uint64_t i = 0; i < space.count_valid(); ++i) best = std::min(best, f(space, space.at(i)));
  for (uint64_t i = 0; i < space.count_valid(); ++i) {
    Config c = space.at(i);
    const double v = f(space, c);
    const bool failed = v != best && fails(c, fail_percent);
    t.emplace(std::move(c), TableEntry{failed ? std::nullopt : std::optional<double>(v), 0.5 + 0.01 * (i % 7)});
  }
  return t;
}

inline CostLayer::Evaluate replay(const ExhaustiveTable& table) {
  return [&table](std::span<const Config> cs) {
    std::vector<EvalOutcome> out;
    for (const Config& c : cs) {
      const TableEntry& e = table.at(c);
      out.push_back({e.objective, e.cost_s});
    }
    return out;
  };
}

// A rugged ~10,000-point space for benchmarks: 6 parameters, one restriction.
inline SearchSpace large_space() {
  return SearchSpace({int_param("bx", {16, 32, 64, 128, 256, 512, 1024}), int_param("by", {1, 2, 4, 8, 16, 32}),
                      int_param("tx", {1, 2, 3, 4, 6, 8}), int_param("ty", {1, 2, 4, 8}),
                      str_param("alg", {"a", "b", "c"}), int_param("u", {0, 1, 2, 3, 4})},
                     {expr::Expression::parse("bx * by <= 1024")});
}

inline double rugged(const SearchSpace& space, const Config& c) {
  const std::vector<Value> v = space.values(c);
  const double bx = std::log2(v[0].as_float()), by = std::log2(v[1].as_float());
  const double tx = v[2].as_float(), ty = v[3].as_float(), u = v[5].as_float();
  const double alg = v[4].as_string() == "b" ? 0.0 : 0.3;
  return 1.0 + 0.2 * (bx - 7) * (bx - 7) + 0.3 * (by - 1) * (by - 1) + 0.1 * (tx - 4) * (tx - 4) +
         0.2 * std::abs(ty - 2) + alg + 0.05 * std::sin(3 * u + tx) + 0.1 * (static_cast<int>(bx + u) % 3);
}

// A needle like the A100 convolution's (benchmark hub, convolution_milo): a
// 2,560-point space whose optimum 1.0 is one configuration, with block shape
// (bx, by) = (11, 3); everything else lies in one smooth basin around (5, 1),
// whose best is 1.3 (0.77 of the optimum), and the needle's Hamming
// neighbours are no better than 0.65 of it. Climbing one parameter at a time
// ends in the basin; changing the two shape parameters of the basin's best
// together reaches the needle.
inline SearchSpace needle_space() {
  return SearchSpace({int_param("bx", range(16)), int_param("by", range(5)), int_param("tx", range(4)),
                      int_param("ty", range(4)), int_param("ro", range(2))},
                     {});
}

inline double needle(const SearchSpace& space, const Config& c) {
  const std::vector<Value> v = space.values(c);
  const double bx = v[0].as_float(), by = v[1].as_float(), tx = v[2].as_float(), ty = v[3].as_float();
  const double ro = v[4].as_float();
  if (bx == 11 && by == 3 && tx == 2 && ty == 1 && ro == 0) return 1.0;
  return 1.3 + 0.03 * (std::abs(bx - 5) + std::abs(by - 1)) + 0.05 * std::abs(tx - 2) + 0.05 * std::abs(ty - 1) +
         0.1 * ro;
}

// A thread limit like the dedispersion kernel's (benchmark hub,
// dedispersion_milo, whose optimum on AMD's W6600 is the block 32 x 32):
// widths bx 1 to 32 (powers of two), heights by 32 to 256 in steps of 32,
// bx * by <= 1024, 31 points. More threads are faster and, at 1,024, a wider
// block is: the optimum 1.0 is the corner (32, 32). Every other block of
// 1,024 threads, (16, 64) at 1.05 or (8, 128) at 1.1, is a local optimum of
// one-parameter changes: a wider block alone breaks the limit, a lower one
// alone loses threads.
inline SearchSpace corner_space() {
  return SearchSpace({int_param("bx", {1, 2, 4, 8, 16, 32}), int_param("by", {32, 64, 96, 128, 160, 192, 224, 256})},
                     {expr::Expression::parse("bx * by <= 1024")});
}

inline double corner(const SearchSpace& space, const Config& c) {
  const std::vector<Value> v = space.values(c);
  const double bx = v[0].as_float(), by = v[1].as_float();
  return 1.0 + 0.1 * (10 - std::log2(bx * by)) + 0.05 * (5 - std::log2(bx));
}

// A deceptive switch like the A100 convolution's (read_only pays only with
// shared memory): 1,024 points; with s = 0 every configuration is fair (2.0
// to 3.5), with s = 1 half are slow (6.0 and up, r = 0) and half hold a
// bowl whose best is 1.0 at (a, b, t) = (5, 2, 2). On average s = 1 is
// slower; what the best results share is s = 1 with r = 1.
inline SearchSpace switch_space() {
  return SearchSpace({int_param("a", range(8)), int_param("b", range(8)), int_param("t", range(4)),
                      int_param("s", range(2)), int_param("r", range(2))},
                     {});
}

inline double deceptive_switch(const SearchSpace& space, const Config& c) {
  const std::vector<Value> v = space.values(c);
  const double a = v[0].as_float(), b = v[1].as_float(), t = v[2].as_float(), sw = v[3].as_float(),
               r = v[4].as_float();
  if (sw == 0) return 2.0 + 0.1 * std::abs(a - 3) + 0.1 * std::abs(b - 4) + 0.2 * std::abs(t - 1) + 0.1 * r;
  if (r == 1) return 1.0 + 0.1 * std::abs(a - 5) + 0.1 * std::abs(b - 2) + 0.1 * std::abs(t - 2);
  return 6.0 + 0.1 * std::abs(a - b) + 0.2 * t;
}

// A trap like Kernel Tuner's pnpoly on the RTX 3090 (benchmark hub): 4,224
// points, longer tiles t faster under every method u, u = 2 the best method
// for every tile but the longest and level at 0.87 of the optimum from t = 6,
// where u = 0 is the slowest until the longest tile, t = 10, and the optimum
// there. Block size b (32 values) and a minor switch m move a time by up to
// 3% each. No single change from the best of u = 2 is faster; 3% of the
// space is at 0.9 or more, so random search gets there in about 33 draws,
// where models and climbs fed by each other's results keep polishing b and
// m around 0.87.
inline SearchSpace trap_space() {
  return SearchSpace({int_param("u", range(3)), int_param("t", range(11)), int_param("b", range(32)),
                      int_param("m", range(4))},
                     {});
}

inline double trap(const SearchSpace& space, const Config& c) {
  const std::vector<Value> v = space.values(c);
  const double u = v[0].as_float(), t = v[1].as_float(), b = v[2].as_float(), m = v[3].as_float();
  double fraction = u == 2 ? std::min(0.87, 0.3 + 0.1 * t) : u == 1 ? std::min(0.8, 0.3 + 0.05 * t)
                                                                      : (t < 10 ? 0.3 + 0.04 * t : 1.0);
  fraction *= (1 - 0.03 * std::abs(b - 5) / 26) * (1 - 0.01 * m);
  return 1 / fraction;
}

// Powers of two like Kernel Tuner's convolution on AMD's W6600 (benchmark
// hub, convolution_milo): 2,560 points, block widths bx 16 to 256 in steps
// of 16, heights by 1 to 16, tiles tx and ty 1 to 4 and a switch s. A block
// width that is no power of two (48, 80, ...) or a tile of 3 makes a
// configuration thirty times slower. With s = 1 the best is 1.2 (0.83 of the
// optimum) at (32, 8, 2, 2); with s = 0 the optimum 1.0 at (128, 1, 1, 4),
// its region narrower (tall tiles of flat blocks).
inline SearchSpace powers_space() {
  std::vector<int> widths;
  for (int w = 16; w <= 256; w += 16) widths.push_back(w);
  return SearchSpace({int_param("bx", widths), int_param("by", {1, 2, 4, 8, 16}), int_param("tx", {1, 2, 3, 4}),
                      int_param("ty", {1, 2, 3, 4}), int_param("s", range(2))},
                     {});
}

inline double powers(const SearchSpace& space, const Config& c) {
  const std::vector<Value> v = space.values(c);
  const auto power = [](int64_t x) { return (x & (x - 1)) == 0; };
  const double lbx = std::log2(v[0].as_float()), lby = std::log2(v[1].as_float()), tx = v[2].as_float(),
               ty = v[3].as_float();
  const double t = v[4].as_int() == 1
                       ? 1.2 + 0.03 * (std::abs(lbx - 5) + std::abs(lby - 3) + std::abs(tx - 2) + std::abs(ty - 2))
                       : 1.0 + 0.15 * lby + 0.1 * (tx - 1) + 0.1 * (4 - ty) + 0.03 * std::abs(lbx - 7);
  return t * (power(v[0].as_int()) ? 1 : 30) * (tx == 3 || ty == 3 ? 30 : 1);
}

// A plateau like the dedispersion kernel's on AMD's W6600 (benchmark hub,
// dedispersion_milo): four parameters of 8 values and a switch, 8,192
// points, every one at 0.90 to 0.98 of the optimum by a pseudo-random amount
// (nothing for a model or a climb to follow), the optimum 1.0 where each of
// the four is at an end of its list, (7, 0, 0, 7), with either switch value:
// the W6600's best block is the widest and lowest, with the shortest tiles.
inline SearchSpace plateau_space() {
  return SearchSpace({int_param("a", range(8)), int_param("b", range(8)), int_param("c", range(8)),
                      int_param("d", range(8)), int_param("s", range(2))},
                     {});
}

inline double plateau(const SearchSpace&, const Config& c) {
  if (c[0] == 7 && c[1] == 0 && c[2] == 0 && c[3] == 7) return 1.0;
  uint64_t h = 0x9E3779B97F4A7C15ULL;
  for (uint32_t v : c) h = (h ^ v) * 0x100000001B3ULL + 0x632BE59BD9B4E019ULL;
  h ^= h >> 29;
  return 1 / (0.90 + 0.08 * double(h % 1000) / 999);
}

}  // namespace ktune::testing_landscapes
