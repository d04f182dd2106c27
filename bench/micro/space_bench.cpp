// SearchSpace performance: BAT's hotspot space (the T1 file
// batbench/benchmarks/hotspot/hotspot-CAFF.json: 13 parameters, 22.2 million
// Cartesian points, 5 conditions), sizing a 10^12-point space, sampling and
// neighbours.
#include <benchmark/benchmark.h>

#include <random>

#include "search/space/space.h"

namespace {

using ktune::Config;
using ktune::NeighbourKind;
using ktune::Parameter;
using ktune::SearchSpace;
using ktune::expr::Expression;

Parameter from_t1(const char* name, const char* values) {
  Parameter p;
  p.name = name;
  p.values = Expression::parse(values).evaluate().as_list();
  p.type = ktune::ValueType::Int;
  return p;
}

// Parameters and conditions exactly as BAT's hotspot T1 file declares them.
SearchSpace hotspot() {
  std::vector<Parameter> params{
      from_t1("BLOCK_SIZE_X", "[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))"),
      from_t1("BLOCK_SIZE_Y", "[2**i for i in range(0, 6)]"),
      from_t1("BLOCK_SIZE_Z", "[1]"),
      from_t1("TILE_SIZE_X", "[i for i in range(1, 11)]"),
      from_t1("TILE_SIZE_Y", "[i for i in range(1, 11)]"),
      from_t1("TEMPORAL_TILING_FACTOR", "[i for i in range(1, 11)]"),
      from_t1("MAX_TFACTOR", "[10]"),
      from_t1("LOOP_UNROLL_FACTOR_T", "[i for i in range(1, 10+1)]"),
      from_t1("SH_POWER", "[0, 1]"),
      from_t1("BLOCKS_PER_SM", "[0, 1, 2, 3, 4]"),
      from_t1("MAX_THREADS", "[1024]"),
      from_t1("MAX_SHARED_MEMORY_BLOCK", "[49152]"),
      from_t1("MAX_SHARED_MEMORY", "[102400]"),
  };
  std::vector<Expression> conditions;
  for (const char* c : {
           "BLOCK_SIZE_X*BLOCK_SIZE_Y>= 32",
           "TEMPORAL_TILING_FACTOR % LOOP_UNROLL_FACTOR_T == 0",
           "BLOCK_SIZE_X*BLOCK_SIZE_Y <= MAX_THREADS",
           "(BLOCK_SIZE_X*TILE_SIZE_X+ TEMPORAL_TILING_FACTOR * 2) * (BLOCK_SIZE_Y*TILE_SIZE_Y+ "
           "TEMPORAL_TILING_FACTOR * 2) * (2+SH_POWER) * 4 <= MAX_SHARED_MEMORY_BLOCK",
           "BLOCKS_PER_SM == 0 or (((BLOCK_SIZE_X * TILE_SIZE_X + TEMPORAL_TILING_FACTOR * 2) * "
           "(BLOCK_SIZE_Y*TILE_SIZE_Y +  TEMPORAL_TILING_FACTOR * 2) * (2+SH_POWER) * 4) * BLOCKS_PER_SM "
           "<= MAX_SHARED_MEMORY)",
       })
    conditions.push_back(Expression::parse(c));
  return SearchSpace(std::move(params), std::move(conditions));
}

// 12 parameters of 10 values: 10^12 points.
SearchSpace tera() {
  std::vector<Parameter> params;
  for (int i = 0; i < 12; ++i) {
    Parameter p;
    p.name = "p";
    p.name += std::to_string(i);
    for (int v = 1; v <= 10; ++v) p.values.emplace_back(v * 32);
    params.push_back(std::move(p));
  }
  std::vector<Expression> restrictions;
  for (const char* r : {"p0 * p1 <= 32768", "p2 % p3 == 0 or p4 > 128", "p5 + p6 + p7 + p8 < 1000"})
    restrictions.push_back(Expression::parse(r));
  return SearchSpace(std::move(params), std::move(restrictions));
}

void BM_HotspotConstructAndCount(benchmark::State& state) {
  uint64_t valid = 0;
  std::string cartesian;
  for (auto _ : state) {
    SearchSpace space = hotspot();
    valid = space.count_valid();
    cartesian = space.cartesian_size();
  }
  state.counters["valid"] = static_cast<double>(valid);
  state.SetLabel("cartesian " + cartesian);
}
BENCHMARK(BM_HotspotConstructAndCount)->Unit(benchmark::kMillisecond);

void BM_HotspotMaterialise(benchmark::State& state) {
  for (auto _ : state) {
    SearchSpace space = hotspot();
    benchmark::DoNotOptimize(space.at(0));  // materialises; the count then comes free
  }
}
BENCHMARK(BM_HotspotMaterialise)->Unit(benchmark::kMillisecond);

void BM_TeraSpaceSizing(benchmark::State& state) {
  std::string size;
  for (auto _ : state) {
    SearchSpace space = tera();
    size = space.cartesian_size();
    benchmark::DoNotOptimize(size);
  }
  state.SetLabel("cartesian " + size);
}
BENCHMARK(BM_TeraSpaceSizing)->Unit(benchmark::kMicrosecond);

void BM_HotspotSampleUnique(benchmark::State& state) {
  SearchSpace space = hotspot();
  space.at(0);  // materialise outside the timing
  std::mt19937_64 rng(1);
  for (auto _ : state) benchmark::DoNotOptimize(space.sample(static_cast<size_t>(state.range(0)), rng));
}
BENCHMARK(BM_HotspotSampleUnique)->Arg(100)->Arg(10000)->Unit(benchmark::kMicrosecond);

void BM_TeraSampleRejection(benchmark::State& state) {
  SearchSpace space = tera();
  std::mt19937_64 rng(2);
  for (auto _ : state) benchmark::DoNotOptimize(space.sample(static_cast<size_t>(state.range(0)), rng));
}
BENCHMARK(BM_TeraSampleRejection)->Arg(100)->Unit(benchmark::kMicrosecond);

void BM_HotspotNeighbours(benchmark::State& state) {
  SearchSpace space = hotspot();
  std::mt19937_64 rng(3);
  const auto starts = space.sample(256, rng);
  const NeighbourKind kind = state.range(0) == 0   ? NeighbourKind::Hamming
                            : state.range(0) == 1 ? NeighbourKind::Adjacent
                                                  : NeighbourKind::HammingRepaired;
  size_t i = 0, found = 0;
  for (auto _ : state) {
    found += space.neighbours(starts[i++ % starts.size()], kind).size();
  }
  state.counters["per_call"] = static_cast<double>(found) / static_cast<double>(state.iterations());
  state.SetLabel(state.range(0) == 0 ? "Hamming" : state.range(0) == 1 ? "Adjacent" : "Repaired");
}
BENCHMARK(BM_HotspotNeighbours)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
