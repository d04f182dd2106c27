// Cost of the expression language per call: parse, compile, eval and test on
// restrictions of the kind BAT and Kernel Tuner specs use. test() is the hot
// path of search-space construction (called once per candidate configuration).
#include <benchmark/benchmark.h>

#include <vector>

#include "search/expr/expr.h"

namespace {

using ktune::Value;
using ktune::expr::CompiledExpr;
using ktune::expr::Expression;
using ktune::expr::Scope;

const char* const kExprs[] = {
    "BLOCK_SIZE_X * BLOCK_SIZE_Y >= 32 and (TILE_X % 2 == 0 or TILE_Y == 1)",
    "KWG % KWI == 0",
    "BLOCKS_PER_SM == 0 or (X * 4 * BLOCKS_PER_SM <= MAX_SHARED_MEMORY)",
    "(MDIMC * NDIMC) // MDIMA",
    "32 <= BLOCK_SIZE_X * BLOCK_SIZE_Y <= 1024",
    "ALG == 'alg_2' or TILE_X in [1, 2, 4]",
    "len([i for i in range(TILE_X) if i % 2 == 0]) >= 1",  // general (tree) path
};

const char* const kNames[] = {"BLOCK_SIZE_X", "BLOCK_SIZE_Y", "TILE_X", "TILE_Y", "KWG", "KWI", "BLOCKS_PER_SM",
                              "X", "MDIMC", "NDIMC", "MDIMA", "ALG"};

Scope scope() {
  Scope s;
  for (int k = 0; k < static_cast<int>(std::size(kNames)); ++k) s.slots[kNames[k]] = k;
  s.constants["MAX_SHARED_MEMORY"] = Value(49152);
  return s;
}

const std::vector<Value>& slot_values() {
  static const std::vector<Value> v = {Value(32), Value(4), Value(3), Value(1), Value(64), Value(4),
                                       Value(2),  Value(1024), Value(16), Value(8), Value(32), Value("alg_1")};
  return v;
}

void BM_Parse(benchmark::State& state) {
  const char* text = kExprs[state.range(0)];
  for (auto _ : state) benchmark::DoNotOptimize(Expression::parse(text));
  state.SetLabel(text);
}

void BM_Compile(benchmark::State& state) {
  const char* text = kExprs[state.range(0)];
  Expression e = Expression::parse(text);
  Scope s = scope();
  for (auto _ : state) benchmark::DoNotOptimize(e.compile(s));
  state.SetLabel(text);
}

void BM_Eval(benchmark::State& state) {
  const char* text = kExprs[state.range(0)];
  CompiledExpr c = Expression::parse(text).compile(scope());
  const std::vector<Value>& v = slot_values();
  for (auto _ : state) benchmark::DoNotOptimize(c.eval(v));
  state.SetLabel(text);
}

void BM_Test(benchmark::State& state) {
  const char* text = kExprs[state.range(0)];
  CompiledExpr c = Expression::parse(text).compile(scope());
  const std::vector<Value>& v = slot_values();
  for (auto _ : state) benchmark::DoNotOptimize(c.test(v));
  state.SetLabel(text);
}

BENCHMARK(BM_Parse)->DenseRange(0, std::size(kExprs) - 1);
BENCHMARK(BM_Compile)->DenseRange(0, std::size(kExprs) - 1);
BENCHMARK(BM_Eval)->DenseRange(0, std::size(kExprs) - 1);
BENCHMARK(BM_Test)->DenseRange(0, std::size(kExprs) - 1);

}  // namespace

BENCHMARK_MAIN();
