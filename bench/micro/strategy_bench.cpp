// Proposal overhead of every strategy: the CPU time a strategy spends per
// evaluation (propose + observe), on a ~10,000-point synthetic space whose
// "evaluation" is a free table lookup. Targets: < 5 ms per proposal for all
// strategies, < 50 ms for bayes_opt with 500 observations.
//
//   build/bench/strategy_bench                 every strategy, 200 evaluations
//   build/bench/strategy_bench --benchmark_filter=Bayes500
#include <benchmark/benchmark.h>

#include <ctime>

#include "search/strategy/cost.h"
#include "search/registry.h"
#include "search/strategy/strategy.h"
#include "tests/search_landscapes.h"

namespace ktune {
namespace {

using namespace testing_landscapes;

const SearchSpace& space() {
  static const SearchSpace s = large_space();
  return s;
}
const ExhaustiveTable& table() {
  static const ExhaustiveTable t = table_of(space(), rugged, 15);
  return t;
}

// Compile features as a free lookup (what a replay gives): model_rank's
// second, feature-aware ranking of its short list is part of the figure.
std::vector<StaticFeatures> features(std::span<const Config> configs) {
  std::vector<StaticFeatures> out;
  for (const Config& c : configs) {
    StaticFeatures& f = out.emplace_back();
    f.compiled = true;
    f.registers = 32 + 8 * static_cast<int>(c[0] % 8);
    f.occupancy = 1.0 / (1 + c[0] % 4);
    f.shared_bytes = 4096 * static_cast<int>(c[1] % 4);
  }
  return out;
}

// Full run of `evals` evaluations; reports the mean time per evaluation.
void BM_Strategy(benchmark::State& state, std::string name, bool with_features) {
  const uint64_t evals = static_cast<uint64_t>(state.range(0));
  double cpu_s = 0;
  for (auto _ : state) {
    const std::clock_t start = std::clock();
    StrategyContext ctx{&space(), 7, {}, with_features ? FeatureSource(features) : FeatureSource(), evals, {}};
    std::unique_ptr<Strategy> s = make_strategy(name, ctx);
    CostLayer layer(space(), Budget{evals, 0}, replay(table()), false);
    RunResult r = layer.run(*s);
    benchmark::DoNotOptimize(r.best_score);
    cpu_s += static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
    state.counters["fevals"] = static_cast<double>(r.fevals);
  }
  // CPU rather than wall time: the figure must not depend on the machine's load.
  state.counters["cpu_ms_per_eval"] = cpu_s * 1e3 / (static_cast<double>(evals) * static_cast<double>(state.iterations()));
}

// One proposal of `batch` configurations by bayes_opt / model_rank after `n`
// observations already heard.
void BM_ProposalAfter(benchmark::State& state, std::string name, bool with_features, size_t batch) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  StrategyContext ctx{&space(), 7, {}, with_features ? FeatureSource(features) : FeatureSource(), 0, {}};
  std::unique_ptr<Strategy> s = make_strategy(name, ctx);
  std::mt19937_64 rng(3);
  std::vector<Observation> heard;
  for (const Config& c : space().sample(n, rng, true)) heard.push_back({c, table().at(c).objective});
  s->observe(heard);
  for (auto _ : state) {
    std::vector<Config> proposed = s->propose(batch);
    benchmark::DoNotOptimize(proposed);
    // Tell it the results so the next proposal works on more observations, like a run.
    std::vector<Observation> r;
    for (const Config& c : proposed) r.push_back({c, table().at(c).objective});
    s->observe(r);
  }
}

void register_all() {
  for (const StrategyInfo& info : strategy_catalog())
    benchmark::RegisterBenchmark(("Strategy/" + info.name).c_str(), BM_Strategy, info.name, false)
        ->Arg(200)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  for (const char* name : {"model_rank", "auto", "portfolio"})  // the ones that use compile features
    benchmark::RegisterBenchmark((std::string("Strategy/") + name + "+features").c_str(), BM_Strategy, name, true)
        ->Arg(200)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  for (const char* name : {"bayes_opt", "model_rank", "vnd", "tpe", "forest"})
    benchmark::RegisterBenchmark((std::string("ProposalAfter/") + name).c_str(), BM_ProposalAfter, name, false, 1)
        ->Arg(100)
        ->Arg(500)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(20);
  for (const char* name : {"model_rank", "portfolio"})
    benchmark::RegisterBenchmark((std::string("ProposalAfter/") + name + "+features").c_str(), BM_ProposalAfter, name,
                                 true, 1)
        ->Arg(100)
        ->Arg(500)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(20);
  // A GPU run's batch: 8 configurations per proposal, each ranked by a refit
  // model (the kriging believer), so the time per configuration is what counts.
  // The default's members propose a batch on threads of their own: the CPU
  // time counted is the process's, theirs included.
  for (const char* name : {"model_rank", "tpe", "forest", "portfolio"})
    benchmark::RegisterBenchmark((std::string("ProposalAfter/") + name + "+features,batch8").c_str(), BM_ProposalAfter,
                                 name, true, 8)
        ->Arg(100)
        ->Arg(500)
        ->Unit(benchmark::kMillisecond)
        ->MeasureProcessCPUTime()
        ->Iterations(20);
}

}  // namespace
}  // namespace ktune

int main(int argc, char** argv) {
  ktune::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
