// Dispatch: which configurations of a batch each worker of a pool (the GPUs
// of one process, the ranks of an MPI job) evaluates next, and which it
// compiles ahead meanwhile.
//
// A worker that takes a chunk is also promised the chunks it will take after
// it (at least one, and at least `min_ahead` configurations while the batch
// has them), which it compiles ahead while it measures, as one GPU compiles the next
// batch behind the current one (CompilePlan). Without that promise a worker
// compiles each chunk only when it takes it, and on a GPU-bound space the
// GPUs wait for compiles at every chunk. Chunks follow guided
// self-scheduling (half of what is left, over the workers, at least one), so
// that the tail of a batch still balances. Where the batch has too little
// left to promise (its tail's chunks are small, and a chunk measures in less
// time than the next one compiles), what the strategy expects next
// (upcoming(), the evaluator's compile_ahead) makes up at least `min_ahead`
// configurations, and those go to that worker first in the next batch. A
// worker left with nothing takes another's promised chunk rather than idle
// (its compiles are then made twice at worst). A worker that is lost
// (retire()) gives back what it held, for the others to take. Not
// thread-safe: the pool calls it under its own lock.
#pragma once

#include <cstddef>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include "search/expr/value.h"

namespace ktune {

class Dispatch {
 public:
  // `max_chunk`: the most configurations a worker takes at a time (0: no
  // limit). `min_ahead`: what a worker is given to compile ahead is made up
  // to this many from the strategy's next batch where this one has too few.
  explicit Dispatch(size_t workers, size_t max_chunk = 0, size_t min_ahead = kMinAhead);
  // Chunks promised up to 32 configurations: one chunk of 16 was measured
  // too short on the BAT GEMM on two H200 (docs/benchmarks.md, "Two GPUs of
  // one host"); 32 is not measured yet.
  static constexpr size_t kMinAhead = 32;

  // What the strategy expects to propose after the batch that comes next
  // (ConfigEvaluator::compile_ahead); empty: nothing (the run ends).
  void upcoming(std::span<const std::vector<Value>> next);
  // Starts a batch: its configurations are handed out by take(). What was
  // promised to a worker from upcoming() and is in this batch is its first.
  void begin(std::span<const std::vector<Value>> batch);

  struct Work {
    std::vector<size_t> now;                 // indices into the batch; empty: nothing left for this worker
    // To compile while `now` is measured: every configuration promised to
    // the worker (what it was given before and has not taken is dropped).
    std::vector<std::vector<Value>> ahead;
  };
  Work take(size_t worker);

  // The worker is lost: `unreported` (indices of the chunk it was measuring
  // whose results never came) and every chunk promised to it go back to be
  // handed out, before the rest and in batch order; what it was promised of
  // the next batch is anybody's again. It takes nothing more, and chunks are
  // sized for the workers left. REQUIRES: worker < workers.
  void retire(size_t worker, std::span<const size_t> unreported);
  // Whether take() would still hand out something of this batch to a worker.
  bool has_work() const;
  size_t live_workers() const { return workers_ - retired_count_; }

  // Guided self-scheduling's chunk when `left` configurations remain for
  // `workers`: half of left / workers, rounded up, at least one (before
  // max_chunk). A batch's first chunks are so large that a worker freeing
  // up early still finds work.
  static size_t guided_chunk(size_t left, size_t workers);

 private:
  size_t guided(size_t left) const;  // a chunk's size when `left` remain
  std::vector<size_t> chunk_from(std::deque<size_t>& from) const;
  void carry(size_t worker, size_t n);  // up to n more of upcoming_ promised to `worker`

  size_t workers_;
  size_t max_chunk_;
  size_t min_ahead_;
  std::vector<std::vector<Value>> batch_;
  std::deque<size_t> pending_;                          // batch indices neither handed out nor promised
  std::vector<std::deque<std::vector<size_t>>> promised_;  // per worker: the chunks it takes next, in order
  std::vector<std::vector<Value>> upcoming_;            // of the next batch
  std::deque<size_t> upcoming_left_;                    // indices into upcoming_ not promised yet
  std::vector<std::vector<std::vector<Value>>> carried_;  // per worker: promised from upcoming_, in order
  std::vector<bool> retired_;                            // per worker: lost
  size_t retired_count_ = 0;
};

}  // namespace ktune
