// Dispatch: chunks of a batch for the workers of a pool, each with the chunk
// the worker takes next to compile ahead, also across batches.
#include "tuner/tune/dispatch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace ktune {
namespace {

std::vector<std::vector<Value>> configs(int from, int n) {
  std::vector<std::vector<Value>> out;
  for (int i = from; i < from + n; ++i) out.push_back({Value(int64_t(i))});
  return out;
}

std::vector<std::vector<Value>> values_at(const std::vector<std::vector<Value>>& batch,
                                          const std::vector<size_t>& indices) {
  std::vector<std::vector<Value>> out;
  for (size_t i : indices) out.push_back(batch.at(i));
  return out;
}

// Two workers: guided chunks (half of what is left over the workers), each
// worker's next chunk is the one it was told to compile ahead, and every
// configuration goes out once.
TEST(Dispatch, AWorkerTakesTheChunkItCompiledAhead) {
  Dispatch d(2, 0, 0);  // one chunk ahead, no minimum
  const auto batch = configs(0, 40);
  d.begin(batch);
  Dispatch::Work a = d.take(0);
  EXPECT_EQ(a.now.size(), 10u);  // 40 / (2 x 2)
  EXPECT_EQ(a.ahead.size(), 8u);  // 30 left: 30 / 4, rounded up
  Dispatch::Work b = d.take(1);
  EXPECT_EQ(b.now.size(), 6u);  // 22 left
  std::multiset<size_t> handed(a.now.begin(), a.now.end());
  handed.insert(b.now.begin(), b.now.end());
  std::vector<std::vector<Value>> promised_a = a.ahead, promised_b = b.ahead;
  for (int turn = 0; turn < 20; ++turn) {
    for (size_t w : {size_t(1), size_t(0)}) {  // worker 1 first: promises hold whatever the order
      Dispatch::Work next = d.take(w);
      if (next.now.empty()) continue;
      std::vector<std::vector<Value>>& promised = w == 0 ? promised_a : promised_b;
      EXPECT_EQ(values_at(batch, next.now), promised) << "worker " << w;
      promised = next.ahead;
      handed.insert(next.now.begin(), next.now.end());
    }
  }
  EXPECT_EQ(handed.size(), batch.size());
  for (size_t i = 0; i < batch.size(); ++i) EXPECT_EQ(handed.count(i), 1u) << i;
  EXPECT_TRUE(d.take(0).now.empty());
}

// With nothing left of the batch to promise, a worker compiles ahead part of
// what the strategy expects next, and takes exactly that first in the next
// batch, even when another worker asks first.
TEST(Dispatch, APromiseFromTheNextBatchCarriesOver) {
  Dispatch d(2, 0, 0);  // no minimum ahead
  d.upcoming(configs(100, 8));  // the strategy's next proposal
  d.begin(configs(0, 2));
  Dispatch::Work a = d.take(0);  // 1 of 2; the other one promised to worker 0
  ASSERT_EQ(a.now.size(), 1u);
  ASSERT_EQ(a.ahead.size(), 1u);
  Dispatch::Work b = d.take(1);  // nothing left but worker 0's promise: taken rather than idle
  ASSERT_EQ(b.now.size(), 1u);
  EXPECT_EQ(configs(0, 2).at(b.now[0]), a.ahead[0]);
  EXPECT_EQ(b.ahead, configs(100, 2));  // 8 upcoming: 8 / 4
  Dispatch::Work a2 = d.take(0);
  EXPECT_TRUE(a2.now.empty());  // worker 1 took its promise; nothing left

  // The next batch, shuffled, with one of the promised configurations missing.
  std::vector<std::vector<Value>> next = configs(100, 8);
  std::reverse(next.begin(), next.end());
  next.erase(next.begin() + 7);  // 100 is gone: the strategy changed its mind
  d.upcoming({});
  d.begin(next);
  Dispatch::Work first = d.take(0);  // worker 0 was promised nothing: a fresh chunk, not worker 1's
  for (size_t i : first.now) EXPECT_NE(next[i], configs(101, 1)[0]);
  Dispatch::Work carried = d.take(1);
  EXPECT_EQ(values_at(next, carried.now), configs(101, 1));
}

// Alone, a worker is promised every next chunk, and a limit caps the chunks.
TEST(Dispatch, OneWorkerAndAChunkLimit) {
  Dispatch d(1, 3, 0);
  const auto batch = configs(0, 10);
  d.begin(batch);
  std::vector<size_t> sizes;
  std::vector<std::vector<Value>> promised;
  for (Dispatch::Work w = d.take(0); !w.now.empty(); w = d.take(0)) {
    if (!sizes.empty()) {
      EXPECT_EQ(values_at(batch, w.now), promised);
    }
    sizes.push_back(w.now.size());
    promised = w.ahead;
  }
  EXPECT_EQ(sizes, (std::vector<size_t>{3, 3, 2, 1, 1}));  // half of what is left (10, 7, 4, 2, 1), at most 3
  EXPECT_TRUE(promised.empty());                         // nothing upcoming
}

// A worker is promised chunks up to the minimum while the batch has them,
// then the strategy's next batch makes it up; everything promised so far is
// in each ahead (what a GPU is not given again it drops), and what came from
// the next batch goes to that worker first there.
TEST(Dispatch, ChunksAndTheNextBatchMakeUpTheMinimumAhead) {
  Dispatch d(2, 0, 6);
  d.upcoming(configs(100, 8));
  const auto batch = configs(0, 8);
  d.begin(batch);
  Dispatch::Work a = d.take(0);
  EXPECT_EQ(values_at(batch, a.now), configs(0, 2));  // 8 / 4
  // Promised: 2-3 (6 left: 2), 4 (4 left: 1), 5 (3 left: 1), 6 (2 left: 1): 5 configurations, then 7 (1 left) makes 6.
  EXPECT_EQ(a.ahead, configs(2, 6));
  Dispatch::Work b = d.take(1);  // nothing pending: worker 0's last promised chunk, and the next batch ahead
  EXPECT_EQ(values_at(batch, b.now), configs(7, 1));
  EXPECT_EQ(b.ahead, configs(100, 6));  // 2 (8 / 4) made up to 6
  Dispatch::Work a2 = d.take(0);
  EXPECT_EQ(values_at(batch, a2.now), configs(2, 2));
  std::vector<std::vector<Value>> expect = configs(4, 3);  // still promised: 4, 5, 6
  for (const auto& c : configs(106, 2)) expect.push_back(c);  // made up from what 100-105 left
  EXPECT_EQ(a2.ahead, expect);

  d.upcoming({});
  std::vector<std::vector<Value>> next = configs(100, 8);
  std::reverse(next.begin(), next.end());
  d.begin(next);
  Dispatch::Work a3 = d.take(0);
  EXPECT_EQ(values_at(next, a3.now), (std::vector<std::vector<Value>>{configs(107, 1)[0], configs(106, 1)[0]}));
  Dispatch::Work b2 = d.take(1);
  std::vector<std::vector<Value>> b_first = configs(100, 6);
  std::reverse(b_first.begin(), b_first.end());
  EXPECT_EQ(values_at(next, b2.now), b_first);
}

// A worker that is lost gives back the part of its chunk never reported and
// every chunk promised to it; the others take them, each once, and what it
// was promised of the next batch is anybody's again.
TEST(Dispatch, ALostWorkersChunksGoToTheOthers) {
  Dispatch d(3, 0, 8);
  d.upcoming(configs(100, 8));
  const auto batch = configs(0, 40);
  d.begin(batch);
  Dispatch::Work lost = d.take(0);
  ASSERT_EQ(lost.now.size(), 7u);  // 40 / (2 x 3)
  ASSERT_GE(lost.ahead.size(), 8u);  // promised chunks of this batch
  std::multiset<size_t> handed(lost.now.begin(), lost.now.begin() + 3);  // reported before it was lost
  Dispatch::Work b = d.take(1);
  handed.insert(b.now.begin(), b.now.end());
  d.retire(0, std::vector<size_t>(lost.now.begin() + 3, lost.now.end()));
  EXPECT_EQ(d.live_workers(), 2u);
  EXPECT_TRUE(d.has_work());
  EXPECT_TRUE(d.take(0).now.empty());  // it takes nothing more
  // What it gave back comes first, in batch order.
  Dispatch::Work c = d.take(2);
  EXPECT_EQ(c.now.front(), lost.now[3]);
  handed.insert(c.now.begin(), c.now.end());
  for (int turn = 0; turn < 40 && d.has_work(); ++turn)
    for (size_t w : {size_t(1), size_t(2)}) {
      Dispatch::Work next = d.take(w);
      handed.insert(next.now.begin(), next.now.end());
    }
  EXPECT_FALSE(d.has_work());
  ASSERT_EQ(handed.size(), batch.size());
  for (size_t i = 0; i < batch.size(); ++i) EXPECT_EQ(handed.count(i), 1u) << i;

  // The next batch: whatever worker 0 was promised of it goes to the others.
  d.upcoming({});
  d.begin(configs(100, 8));
  std::multiset<size_t> next_handed;
  for (int turn = 0; turn < 20; ++turn)
    for (size_t w : {size_t(0), size_t(1), size_t(2)}) {
      Dispatch::Work next = d.take(w);
      if (w == 0) {
        EXPECT_TRUE(next.now.empty());
      }
      next_handed.insert(next.now.begin(), next.now.end());
    }
  ASSERT_EQ(next_handed.size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(next_handed.count(i), 1u) << i;
}

// The configurations of the next batch that a lost worker was to compile
// ahead may be promised to another.
TEST(Dispatch, ALostWorkersShareOfTheNextBatchIsPromisedAgain) {
  Dispatch d(2, 0, 4);
  d.upcoming(configs(100, 4));
  d.begin(configs(0, 1));
  Dispatch::Work a = d.take(0);  // the one configuration, and the whole next batch ahead
  ASSERT_EQ(a.ahead, configs(100, 4));
  d.retire(0, a.now);
  Dispatch::Work b = d.take(1);
  EXPECT_EQ(b.now, std::vector<size_t>{0});
  EXPECT_EQ(b.ahead, configs(100, 4));
}

}  // namespace
}  // namespace ktune
