// CompilePlan: one consumer's compiles (a GPU's evaluator) in the order its
// strategy ranks them, in a CompilePool it may share.
//
// A batch is queued at priorities 0, 1, ... in the order given (the
// strategy's ranking: the position in its proposal), and what the strategy
// expects to propose after it (Strategy::upcoming) behind it, so that a slot
// that frees up near the end of a batch compiles the next one instead of
// idling, and the GPU finds it compiled. A request already queued ahead that
// the next batch contains is moved up, not submitted again; one that the
// strategy no longer names (its plan changed, or the run ended) is dropped
// from the queue before it is compiled. Used by one thread.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tuner/compile/pool.h"

namespace ktune {

class CompilePlan {
 public:
  // A request and what identifies it across calls: its configuration's
  // config_key (search/expr/value.h), or any text unique among the requests.
  struct Keyed {
    std::string config_key;
    CompileRequest request;
  };

  explicit CompilePlan(CompilePool& pool) : pool_(&pool) {}
  ~CompilePlan() { drop(); }
  CompilePlan(const CompilePlan&) = delete;
  CompilePlan& operator=(const CompilePlan&) = delete;

  // Queues `batch` (priority: its position) and then `next` behind it;
  // returns the batch's tickets, in order, for the caller to take (and
  // cancel). Of what was queued ahead before, what `batch` takes is moved up
  // and what neither names is dropped.
  std::vector<CompilePool::Ticket> submit(std::vector<Keyed> batch, std::vector<Keyed> next);
  // Drops every request held ahead (the run ended).
  void drop();
  // Whether the request held ahead under `config_key` has compiled (false when none is held).
  bool ready(const std::string& config_key) const;

  // Requests queued ahead so far, and of them those a batch took over and
  // those dropped (never compiled, or, when already compiling, their result unused).
  std::uint64_t queued_ahead() const { return queued_ahead_; }
  std::uint64_t taken_over() const { return taken_over_; }
  std::uint64_t dropped() const { return dropped_; }

 private:
  CompilePool* pool_;
  std::vector<std::pair<std::string, CompilePool::Ticket>> ahead_;
  std::uint64_t queued_ahead_ = 0, taken_over_ = 0, dropped_ = 0;
};

}  // namespace ktune
