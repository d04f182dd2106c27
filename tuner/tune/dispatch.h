// Dispatch: which configurations of a batch each worker of a pool (the GPUs
// of one process, the ranks of an MPI job) evaluates next, and which it
// compiles ahead meanwhile.
//
// A worker that takes a chunk is also promised the chunk it will take after
// it, which it compiles ahead while it measures, as one GPU compiles the next
// batch behind the current one (CompilePlan). Without that promise a worker
// compiles each chunk only when it takes it, and on a GPU-bound space the
// GPUs wait for compiles at every chunk. Chunks follow guided
// self-scheduling (half of what is left, over the workers, at least one), so
// that the tail of a batch still balances. When the batch has nothing left
// to promise, the promise comes from what the strategy expects next
// (upcoming(), the evaluator's compile_ahead), and those configurations go to
// that worker in the next batch. A worker left with nothing takes another's
// promised chunk rather than idle (its compiles are then made twice at
// worst). Not thread-safe: the pool calls it under its own lock.
#pragma once

#include <cstddef>
#include <deque>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "search/expr/value.h"

namespace ktune {

class Dispatch {
 public:
  // `max_chunk`: the most configurations a worker takes at a time (0: no limit).
  explicit Dispatch(size_t workers, size_t max_chunk = 0);

  // What the strategy expects to propose after the batch that comes next
  // (ConfigEvaluator::compile_ahead); empty: nothing (the run ends).
  void upcoming(std::span<const std::vector<Value>> next);
  // Starts a batch: its configurations are handed out by take(). What was
  // promised to a worker from upcoming() and is in this batch is its first.
  void begin(std::span<const std::vector<Value>> batch);

  struct Work {
    std::vector<size_t> now;                 // indices into the batch; empty: nothing left for this worker
    std::vector<std::vector<Value>> ahead;  // to compile while `now` is measured
  };
  Work take(size_t worker);

 private:
  std::vector<size_t> chunk_from(std::deque<size_t>& from) const;

  size_t workers_;
  size_t max_chunk_;
  std::vector<std::vector<Value>> batch_;
  std::deque<size_t> pending_;                      // batch indices neither handed out nor promised
  std::vector<std::vector<size_t>> promised_;       // per worker: batch indices it takes next
  std::vector<std::vector<Value>> upcoming_;        // of the next batch, not promised yet
  std::deque<size_t> upcoming_left_;                // indices into upcoming_
  std::vector<std::unordered_set<std::string>> carried_;  // per worker: keys promised from upcoming_
};

}  // namespace ktune
