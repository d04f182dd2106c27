#include "search/feature_rounds.h"

#include <future>
#include <string>

#include "ktune/error.h"
#include "search/strategy/support.h"

namespace ktune::strategy_detail {

std::vector<Config> in_turn(const std::vector<std::vector<Config>>& lists, size_t n) {
  std::vector<Config> out;
  ConfigSet seen;
  for (size_t k = 0, more = 1; more && out.size() < n; ++k) {
    more = 0;
    for (const std::vector<Config>& list : lists)
      if (k < list.size()) {
        more = 1;
        if (out.size() < n && seen.insert(list[k]).second) out.push_back(list[k]);
      }
  }
  return out;
}

std::vector<StaticFeatures> FeatureRounds::ask(size_t member, std::span<const Config> cs) {
  std::unique_lock lock(mutex_);
  std::vector<Config> missing;
  ConfigSet seen;
  for (const Config& c : cs)
    if (auto it = known_.find(c); (it == known_.end() || it->second.pending) && seen.insert(c).second)
      missing.push_back(c);
  if (!missing.empty() && running_ == 0) {
    fetch(missing);  // no member thread to hold up
  } else if (!missing.empty()) {
    const size_t round = round_;
    if (pending_.size() <= member) pending_.resize(member + 1);
    pending_[member].insert(pending_[member].end(), missing.begin(), missing.end());
    ++waiting_;
    wake_caller_.notify_one();
    wake_members_.wait(lock, [&] { return round_ != round; });
    if (failure_) std::rethrow_exception(failure_);
  }
  std::vector<StaticFeatures> out;
  for (const Config& c : cs) out.push_back(known_.at(c));
  return out;
}

void FeatureRounds::run(std::vector<std::function<void()>> jobs) {
  {
    std::lock_guard lock(mutex_);
    running_ = jobs.size();
  }
  std::vector<std::future<void>> done;
  std::exception_ptr unstarted;
  for (size_t i = 0; i < jobs.size() && !unstarted; ++i) {
    try {
      done.push_back(std::async(std::launch::async, [this, job = std::move(jobs[i])] {
        struct Finish {
          FeatureRounds* r;
          ~Finish() {
            std::lock_guard lock(r->mutex_);
            --r->running_;
            r->wake_caller_.notify_one();
          }
        } finish{this};
        job();
      }));
    } catch (...) {  // no thread for it or those after it: the started ones still get their rounds
      unstarted = std::current_exception();
      std::lock_guard lock(mutex_);
      running_ -= jobs.size() - i;
    }
  }
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_caller_.wait(lock, [&] { return running_ == 0 || waiting_ == running_; });
    if (running_ == 0) break;
    serve();
  }
  lock.unlock();
  for (auto& d : done) d.get();
  if (unstarted) std::rethrow_exception(unstarted);
}

void FeatureRounds::serve() {
  const std::vector<Config> all = in_turn(pending_);
  failure_ = nullptr;
  try {
    fetch(all);
  } catch (...) {
    failure_ = std::current_exception();
  }
  pending_.clear();
  waiting_ = 0;
  ++round_;
  wake_members_.notify_all();
}

void FeatureRounds::fetch(const std::vector<Config>& configs) {
  std::vector<StaticFeatures> got = source_(configs);
  if (got.size() != configs.size())
    throw Error::failed("the feature source answered " + std::to_string(got.size()) + " of " +
                        std::to_string(configs.size()) + " configurations");
  for (size_t i = 0; i < configs.size(); ++i) known_[configs[i]] = got[i];
}

}  // namespace ktune::strategy_detail
