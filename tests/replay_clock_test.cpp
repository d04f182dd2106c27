// The replay clock on recordings with known costs: compile processes, the
// overlap of compiling with measuring, short lists charged where asked.
#include "search/strategy/replay_clock.h"

#include <gtest/gtest.h>

#include <vector>

#include "search/strategy/straggler.h"

namespace ktune {
namespace {

std::vector<std::pair<Config, ReplayCost>> batch_of(std::initializer_list<uint32_t> ids, ReplayCost cost) {
  std::vector<std::pair<Config, ReplayCost>> out;
  for (uint32_t i : ids) out.emplace_back(Config{i}, cost);
  return out;
}

// Reports every result of a batch; returns the finish times in report order.
std::vector<double> run_batch(ReplayClock& clock, const std::vector<std::pair<Config, ReplayCost>>& batch) {
  std::vector<double> at;
  for (const ReplayClock::Finish& f : clock.measure(batch)) {
    clock.reached(f);
    at.push_back(f.at);
  }
  return at;
}

TEST(ReplayClock, CompilesSpreadOverTheProcesses) {
  ReplayClock one({1, 1, false}), four({4, 1, false});
  const auto batch = batch_of({0, 1, 2, 3, 4, 5, 6, 7}, {2.0, 0.0});
  run_batch(one, batch);
  run_batch(four, batch);
  EXPECT_DOUBLE_EQ(one.now(), 16.0);  // eight compiles of 2 s, one after another
  EXPECT_DOUBLE_EQ(four.now(), 4.0);  // two rounds of four
  EXPECT_DOUBLE_EQ(four.compile_s(), 16.0);
  EXPECT_EQ(four.compiles(), 8u);
}

TEST(ReplayClock, TheGpuMeasuresWhileTheRestCompile) {
  // One process: compile 1 s, measure 0.5 s. The GPU takes each as its
  // compile ends, while the next compiles: 1.5, 2.5, 3.5, not 1.5, 3, 4.5.
  ReplayClock clock({1, 1, false});
  EXPECT_EQ(run_batch(clock, batch_of({0, 1, 2}, {1.0, 0.5})), (std::vector<double>{1.5, 2.5, 3.5}));
  EXPECT_DOUBLE_EQ(clock.gpu_busy_s(), 1.5);
  // GPU-bound: compiles of 0.1 s on two processes, 1 s measurements back to back.
  ReplayClock gpu_bound({2, 1, false});
  EXPECT_EQ(run_batch(gpu_bound, batch_of({0, 1, 2}, {0.1, 1.0})), (std::vector<double>{1.1, 2.1, 3.1}));
}

TEST(ReplayClock, ResultsComeInTheOrderTheirCompilesEnd) {
  ReplayClock clock({2, 1, false});
  std::vector<std::pair<Config, ReplayCost>> batch = {{Config{0}, {3.0, 0.5}}, {Config{1}, {1.0, 0.5}}};
  std::vector<ReplayClock::Finish> f = clock.measure(batch);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].index, 1u);  // compiled first, measured first
  EXPECT_DOUBLE_EQ(f[0].at, 1.5);
  EXPECT_EQ(f[1].index, 0u);
  EXPECT_DOUBLE_EQ(f[1].at, 3.5);
}

TEST(ReplayClock, AShortListIsWaitedForAndNotCompiledAgain) {
  ReplayClock clock({2, 1, false});
  const std::vector<std::pair<Config, double>> shortlist = {{Config{0}, 1.0}, {Config{1}, 1.0}, {Config{2}, 1.0}};
  clock.features(shortlist);
  EXPECT_DOUBLE_EQ(clock.now(), 2.0);  // three compiles on two processes: the strategy waits for all
  EXPECT_DOUBLE_EQ(clock.gpu_busy_s(), 0.0);
  // Two of them measured: compiled already, so only the GPU's time.
  EXPECT_EQ(run_batch(clock, batch_of({0, 2}, {1.0, 0.25})), (std::vector<double>{2.25, 2.5}));
  EXPECT_EQ(clock.compiles(), 3u);
}

TEST(ReplayClock, WhatComesNextCompilesBehindTheBatch) {
  // The next batch's compiles run while the GPU measures this one, so it
  // starts measuring at once.
  ReplayClock with({1, 1, false}), without({1, 1, false});
  const auto first = batch_of({0, 1}, {1.0, 2.0});
  const auto second = batch_of({2, 3}, {1.0, 2.0});
  with.ahead({{Config{2}, 1.0}, {Config{3}, 1.0}});
  run_batch(with, first);    // compiles end at 1, 2 (batch), 3, 4 (ahead); GPU 1-3, 3-5
  run_batch(with, second);   // GPU 5-7, 7-9
  run_batch(without, first);
  run_batch(without, second);  // handed over at 5: compiles end 6, 7; GPU 6-8, 8-10
  EXPECT_DOUBLE_EQ(with.now(), 9.0);
  EXPECT_DOUBLE_EQ(without.now(), 10.0);
}

TEST(ReplayClock, WhatComesNextWaitsBehindALaterShortList) {
  // Two processes. The hint's compiles take a process only when it would
  // otherwise idle: a short list asked later still goes first.
  ReplayClock clock({2, 1, false});
  clock.ahead({{Config{10}, 2.0}, {Config{11}, 2.0}});
  clock.features(std::vector<std::pair<Config, double>>{{Config{20}, 1.0}});
  EXPECT_DOUBLE_EQ(clock.now(), 1.0);  // 20 on one process (0-1); 10 took the idle other (0-2)
  clock.features(std::vector<std::pair<Config, double>>{{Config{21}, 1.0}});
  EXPECT_DOUBLE_EQ(clock.now(), 2.0);  // asked at 1: 21 (1-2) before the hint's 11
  EXPECT_EQ(clock.compiles(), 3u);
  EXPECT_EQ(run_batch(clock, batch_of({11}, {2.0, 0.5})), (std::vector<double>{4.5}));  // 11 compiles 2-4
}

TEST(ReplayClock, WhatCompiledWhileTheStrategyProposedIsMeasuredMeanwhile) {
  // A short list of three compiles (1, 2 and 4 s) on three processes: the
  // proposal waits until 4. Meanwhile the GPU measures those compiled by
  // then, as each compile ends, each at its own time.
  ReplayClock clock({3, 1, false});
  clock.features(std::vector<std::pair<Config, double>>{{Config{0}, 1.0}, {Config{1}, 2.0}, {Config{2}, 4.0}});
  EXPECT_DOUBLE_EQ(clock.now(), 4.0);
  std::vector<double> reported_at, now_at;
  clock.fill(batch_of({2, 1, 0, 7}, {0.0, 0.5}), 0.0, [&](const ReplayClock::Finish& f) {
    reported_at.push_back(f.at);
    now_at.push_back(clock.now());
    return true;
  });
  // 0 at 1-1.5, 1 at 2-2.5; 2 compiled only at 4, when the proposal ended;
  // 7 never compiled.
  EXPECT_EQ(reported_at, (std::vector<double>{1.5, 2.5}));
  EXPECT_EQ(now_at, reported_at);
  EXPECT_DOUBLE_EQ(clock.now(), 4.0);
  EXPECT_DOUBLE_EQ(clock.gpu_busy_s(), 1.0);
  // One that starts before the proposal ends and finishes after it moves the clock on.
  ReplayClock late({1, 1, false});
  late.features(std::vector<std::pair<Config, double>>{{Config{0}, 1.0}, {Config{1}, 1.0}});  // ends 1 and 2
  late.fill(batch_of({0}, {0.0, 3.0}), 0.0, [](const ReplayClock::Finish&) { return true; });
  EXPECT_DOUBLE_EQ(late.now(), 4.0);  // measured 1-4
}

TEST(ReplayClock, AShortListStopsWaitingAtTheDeadline) {
  ReplayClock clock({1, 1, false});
  clock.features(std::vector<std::pair<Config, double>>{{Config{0}, 5.0}}, 2.0);
  EXPECT_DOUBLE_EQ(clock.now(), 2.0);
}

// The straggler rule (search/strategy/straggler.h): a short list stops
// waiting at the rule's patience after the compiles before it ended, and
// answers the rest as pending; they go on compiling, and a measurement of
// one waits for that compile, not for another.
TEST(ReplayClock, AShortListStopsWaitingForItsStragglers) {
  ReplayClock clock({4, 1, false});
  const std::vector<std::pair<Config, double>> shortlist = {
      {Config{0}, 1.0}, {Config{1}, 1.0}, {Config{2}, 1.0}, {Config{3}, 1000.0}};
  const std::vector<bool> pending = clock.features(shortlist);
  EXPECT_EQ(pending, (std::vector<bool>{false, false, false, true}));
  const double patience = StragglerRule::patience({1.0, 1.0, 1.0}, 4, 4);
  ASSERT_LT(patience, 1000.0);
  EXPECT_DOUBLE_EQ(clock.now(), patience);
  EXPECT_EQ(run_batch(clock, batch_of({3}, {1000.0, 0.5})), (std::vector<double>{1000.5}));
  EXPECT_EQ(clock.compiles(), 4u);
}

// Compiles that wait for a process are not stragglers: with more compiles
// than processes the rule's patience grows with the waves.
TEST(ReplayClock, AShortListInWavesIsNotCutShort) {
  ReplayClock clock({2, 1, false});
  std::vector<std::pair<Config, double>> shortlist;
  for (uint32_t i = 0; i < 8; ++i) shortlist.emplace_back(Config{i}, 1.0);
  EXPECT_EQ(clock.features(shortlist), std::vector<bool>(8, false));
  EXPECT_DOUBLE_EQ(clock.now(), 4.0);
}

TEST(ReplayClock, RacingCutsTheSamplingOfWhatIsFarBehindTheBest) {
  // 10 samples recorded over 1 s of a 1.2 s GPU time.
  ReplayCost slow{0.0, 1.2, {3.0, 1.0, 10, false}};
  EXPECT_DOUBLE_EQ(raced_gpu_s(slow, 0.0), 1.2);   // no best yet
  EXPECT_DOUBLE_EQ(raced_gpu_s(slow, 1.0), 0.3);   // 3 x the best: one sample of ten
  EXPECT_DOUBLE_EQ(raced_gpu_s(slow, 2.4), 0.5);   // 1.25 x: three samples
  EXPECT_DOUBLE_EQ(raced_gpu_s(slow, 2.9), 1.2);   // near the best: every sample
  slow.sampling.raced = true;                      // the recording raced it already
  EXPECT_DOUBLE_EQ(raced_gpu_s(slow, 1.0), 1.2);
  // On the clock: the best reported so far is what a later configuration races against.
  ReplayClock clock({1, 1, false, true});
  std::vector<std::pair<Config, ReplayCost>> batch = {{Config{0}, {0.0, 1.0, {1.0, 1.0, 10, false}}},
                                                      {Config{1}, {0.0, 1.0, {5.0, 1.0, 10, false}}}};
  EXPECT_EQ(run_batch(clock, {batch[0]}), (std::vector<double>{1.0}));
  EXPECT_EQ(run_batch(clock, {batch[1]}), (std::vector<double>{1.1}));  // 5 x the best: one sample
}

TEST(ReplayClock, SeveralGpusShareTheBatch) {
  ReplayClock clock({8, 2, false});
  EXPECT_EQ(run_batch(clock, batch_of({0, 1, 2, 3}, {0.0, 1.0})), (std::vector<double>{1.0, 1.0, 2.0, 2.0}));
}

TEST(ReplayClock, TheStrategysOwnTimeCountsWhenAsked) {
  ReplayClock off({1, 1, false}), on({1, 1, true});
  volatile double sink = 0;
  for (int i = 0; i < 2000000; ++i) sink = sink + 1e-9 * i;  // real time passes outside the clock
  run_batch(off, batch_of({0}, {0.0, 1.0}));
  run_batch(on, batch_of({0}, {0.0, 1.0}));
  EXPECT_DOUBLE_EQ(off.now(), 1.0);
  EXPECT_GT(on.strategy_s(), 0.0);
  EXPECT_GE(on.now(), 1.0 + on.strategy_s());
}

}  // namespace
}  // namespace ktune
