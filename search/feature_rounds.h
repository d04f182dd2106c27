// portfolio's members' compile features, asked for in rounds (portfolio.cpp).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "search/strategy/strategy.h"

namespace ktune::strategy_detail {

// The lists taken in turn (the first of each, then the second of each, ...),
// each configuration once, at most `n`.
std::vector<Config> in_turn(const std::vector<std::vector<Config>>& lists,
                            size_t n = std::numeric_limits<size_t>::max());

// Compile features asked for by members proposing at the same time, sent as
// one request. On a GPU host each request is a round of the compile pool that
// lasts as long as its slowest compile; members asking one after another
// would make a batch of 8 wait for up to three such rounds (the benchmark
// hub's convolution: 0.5 to 8 s a compile). While a round is open (run()),
// each member proposes on its own thread and its requests wait until every
// member still proposing has asked or finished; the calling thread then sends
// them together, so the feature source is only ever called from the thread
// that called propose() (an MPI rank's may talk to the other ranks). Outside
// a round a request goes straight to the source.
class FeatureRounds {
 public:
  explicit FeatureRounds(FeatureSource source) : source_(std::move(source)) {}
  // The features of `cs` for `member`, each configuration asked of the
  // source once per run (again while its answer is pending: not known yet),
  // in the order asked (a member asks best first).
  std::vector<StaticFeatures> ask(size_t member, std::span<const Config> cs);
  // Runs each of `jobs` on its own thread and serves their requests in
  // rounds until all have finished; a job's exception is rethrown here.
  void run(std::vector<std::function<void()>> jobs);

 private:
  // Every member still proposing is waiting: one request for all (each
  // configuration once), the answers known before any member wakes. The
  // members' lists are taken in turn (the first of each, then the second
  // of each, ...), in member order: the compiles start in that order, so
  // each member's best candidates compile first (and, on a GPU run, are
  // measured first while the proposal waits for the rest), whichever
  // member's thread asked first.
  void serve();
  // The source's answers for `configs` (distinct, none known), kept.
  void fetch(const std::vector<Config>& configs);

  FeatureSource source_;
  std::mutex mutex_;
  std::condition_variable wake_caller_, wake_members_;
  size_t running_ = 0;  // jobs of the open round not yet finished
  size_t waiting_ = 0;  // of them, those whose request waits
  size_t round_ = 0;
  std::vector<std::vector<Config>> pending_;  // the open round's requests, per member
  std::unordered_map<Config, StaticFeatures, ConfigHash> known_;
  std::exception_ptr failure_;  // the last round's
};

}  // namespace ktune::strategy_detail
