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
// that the tail of a batch still balances. What the strategy expects after
// the batch (upcoming(): its next proposal and the spares it would have
// measured meanwhile) is shared out among the workers at once, round-robin
// in the strategy's order, so that every worker compiles its share from
// then on: while this batch is measured, while the strategy proposes (the
// spares are measured beside it) and for the next batch, whose
// configurations go first to the worker that compiled them. A worker left
// with nothing takes another's promised chunk rather than idle (its
// compiles are then made twice at worst). A worker that is lost (retire())
// gives back what it held, for the others to take. Not thread-safe: the pool
// calls it under its own lock.
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
  // limit). `min_ahead`: a worker is promised chunks of the batch until it
  // holds this many configurations to compile ahead, its shares of what
  // comes next included.
  explicit Dispatch(size_t workers, size_t max_chunk = 0, size_t min_ahead = kMinAhead);
  // Chunks promised up to 32 configurations: one chunk of 16 was measured
  // too short on the BAT GEMM on two H200 (docs/benchmarks.md, "Two GPUs of
  // one host"); 32 is not measured yet.
  static constexpr size_t kMinAhead = 32;

  // What the strategy expects to propose after the batch that comes next
  // (ConfigEvaluator::compile_ahead), shared out among the live workers at
  // once (ahead() says each one's part); empty: nothing (the run ends).
  void upcoming(std::span<const std::vector<Value>> next);
  // Starts a batch: its configurations are handed out by take(). What was
  // shared to a worker by the upcoming() before the last begin() and is in
  // this batch goes to that worker first, in guided chunks.
  void begin(std::span<const std::vector<Value>> batch);
  // What the worker is to compile ahead now: the chunks of this batch
  // promised to it, then its shares of what the strategy expects next.
  std::vector<std::vector<Value>> ahead(size_t worker) const;

  struct Work {
    std::vector<size_t> now;                 // indices into the batch; empty: nothing left for this worker
    // To compile while `now` is measured: ahead(worker) (what it was given
    // before and is not in it is dropped).
    std::vector<std::vector<Value>> ahead;
  };
  Work take(size_t worker);

  // The worker is lost: `unreported` (indices of the chunk it was measuring
  // whose results never came) and every chunk promised to it go back to be
  // handed out, before the rest and in batch order; its shares of what comes
  // next go to the live workers with the least. It takes nothing more, and
  // chunks are sized for the workers left. REQUIRES: worker < workers.
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
  void give_to_least(std::vector<std::vector<std::vector<Value>>>& shares, std::vector<std::vector<Value>> configs);

  size_t workers_;
  size_t max_chunk_;
  size_t min_ahead_;
  std::vector<std::vector<Value>> batch_;
  std::deque<size_t> pending_;                          // batch indices neither handed out nor promised
  std::vector<std::deque<std::vector<size_t>>> promised_;  // per worker: the chunks it takes next, in order
  // Per worker, of upcoming() in the strategy's order: `carried_` from the
  // one before this batch (routes it), `shared_` from the one since.
  std::vector<std::vector<std::vector<Value>>> carried_;
  std::vector<std::vector<std::vector<Value>>> shared_;
  std::vector<bool> retired_;                            // per worker: lost
  size_t retired_count_ = 0;
};

}  // namespace ktune
