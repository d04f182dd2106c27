// Dispatch: chunks of a batch for the workers of a pool, each with the chunk
// the worker takes next to compile ahead, also across batches.
#include "tuner/tune/dispatch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

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

// What the strategy expects next is shared out at once, round-robin in its
// order; each worker compiles its share from then on (while this batch is
// measured too) and takes exactly that first in the next batch, even when
// another worker asks first.
TEST(Dispatch, TheNextBatchIsSharedOutAtOnceAndCarriesOver) {
  Dispatch d(2, 0, 0);  // no minimum ahead
  d.upcoming(configs(100, 8));  // the strategy's next proposal
  const std::vector<std::vector<Value>> even = {configs(100, 1)[0], configs(102, 1)[0], configs(104, 1)[0],
                                                configs(106, 1)[0]};
  const std::vector<std::vector<Value>> odd = {configs(101, 1)[0], configs(103, 1)[0], configs(105, 1)[0],
                                               configs(107, 1)[0]};
  EXPECT_EQ(d.ahead(0), even);  // before the batch begins: a GPU queues it at once
  EXPECT_EQ(d.ahead(1), odd);
  d.begin(configs(0, 2));
  Dispatch::Work a = d.take(0);  // 1 of 2; the other one promised to worker 0
  ASSERT_EQ(a.now.size(), 1u);
  std::vector<std::vector<Value>> a_ahead = values_at(configs(0, 2), {1 - a.now[0]});
  a_ahead.insert(a_ahead.end(), even.begin(), even.end());
  EXPECT_EQ(a.ahead, a_ahead);
  Dispatch::Work b = d.take(1);  // nothing left but worker 0's promise: taken rather than idle
  ASSERT_EQ(b.now.size(), 1u);
  EXPECT_EQ(configs(0, 2).at(b.now[0]), a.ahead[0]);
  EXPECT_EQ(b.ahead, odd);
  Dispatch::Work a2 = d.take(0);
  EXPECT_TRUE(a2.now.empty());  // worker 1 took its promise; nothing left

  // The next batch, shuffled, with one of the shared configurations missing.
  std::vector<std::vector<Value>> next = configs(100, 8);
  std::reverse(next.begin(), next.end());
  next.erase(next.begin() + 7);  // 100 is gone: the strategy changed its mind
  d.upcoming({});
  EXPECT_EQ(d.ahead(0), even);  // the shares made before this batch still route it
  d.begin(next);
  auto in = [](const std::vector<std::vector<Value>>& set, const std::vector<Value>& c) {
    return std::find(set.begin(), set.end(), c) != set.end();
  };
  Dispatch::Work first = d.take(1);  // worker 1 asks first: its own share
  ASSERT_FALSE(first.now.empty());
  for (size_t i : first.now) EXPECT_TRUE(in(odd, next[i]));
  Dispatch::Work second = d.take(0);
  ASSERT_FALSE(second.now.empty());
  for (size_t i : second.now) EXPECT_TRUE(in(even, next[i]));
  std::multiset<size_t> handed(first.now.begin(), first.now.end());
  handed.insert(second.now.begin(), second.now.end());
  for (int turn = 0; turn < 10; ++turn)
    for (size_t w : {size_t(0), size_t(1)}) {
      Dispatch::Work more = d.take(w);
      handed.insert(more.now.begin(), more.now.end());
    }
  ASSERT_EQ(handed.size(), next.size());
  for (size_t i = 0; i < next.size(); ++i) EXPECT_EQ(handed.count(i), 1u) << i;
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
// its share of what comes next counting; everything promised is in each
// ahead (what a GPU is not given again it drops), and the next batch comes
// to each worker first from its share, in guided chunks another may take.
TEST(Dispatch, ChunksAndTheNextBatchMakeUpTheMinimumAhead) {
  Dispatch d(2, 0, 6);
  d.upcoming(configs(100, 4));
  const auto batch = configs(0, 8);
  d.begin(batch);
  Dispatch::Work a = d.take(0);
  EXPECT_EQ(values_at(batch, a.now), configs(0, 2));  // 8 / 4
  // Promised: 2-3 (6 left: 2), 4 (4 left: 1), 5 (3 left: 1): 4, with 100 and 102 shared, make 6.
  std::vector<std::vector<Value>> expect = configs(2, 4);
  expect.push_back(configs(100, 1)[0]);
  expect.push_back(configs(102, 1)[0]);
  EXPECT_EQ(a.ahead, expect);
  Dispatch::Work b = d.take(1);
  EXPECT_EQ(values_at(batch, b.now), configs(6, 1));  // 2 left: 1
  expect = configs(7, 1);
  expect.push_back(configs(101, 1)[0]);
  expect.push_back(configs(103, 1)[0]);
  EXPECT_EQ(b.ahead, expect);

  d.upcoming({});
  const std::vector<std::vector<Value>> next = configs(100, 4);
  d.begin(next);
  Dispatch::Work a2 = d.take(0);
  EXPECT_EQ(values_at(next, a2.now), configs(100, 1));  // its own, a guided chunk of 1 (4 / 4)
  Dispatch::Work a3 = d.take(0);
  EXPECT_EQ(values_at(next, a3.now), configs(102, 1));
  Dispatch::Work a4 = d.take(0);  // its own are taken: worker 1's last, rather than idle
  EXPECT_EQ(values_at(next, a4.now), configs(103, 1));
  Dispatch::Work b2 = d.take(1);
  EXPECT_EQ(values_at(next, b2.now), configs(101, 1));
  EXPECT_TRUE(d.take(1).now.empty());
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

// The share of what comes next of a lost worker goes to the others, to
// compile ahead from their next take.
TEST(Dispatch, ALostWorkersShareOfTheNextBatchGoesToTheOthers) {
  Dispatch d(2, 0, 4);
  d.upcoming(configs(100, 4));
  d.begin(configs(0, 1));
  Dispatch::Work a = d.take(0);  // the one configuration, and its half of the next batch ahead
  ASSERT_EQ(a.ahead, (std::vector<std::vector<Value>>{configs(100, 1)[0], configs(102, 1)[0]}));
  d.retire(0, a.now);
  Dispatch::Work b = d.take(1);
  EXPECT_EQ(b.now, std::vector<size_t>{0});
  std::multiset<std::string> ahead, expect;
  for (const auto& c : b.ahead) ahead.insert(config_key(c));
  for (const auto& c : configs(100, 4)) expect.insert(config_key(c));
  EXPECT_EQ(ahead, expect);
}

}  // namespace
}  // namespace ktune
