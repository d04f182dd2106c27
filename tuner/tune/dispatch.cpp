#include "tuner/tune/dispatch.h"

#include <algorithm>
#include <utility>

#include "db/record/record.h"

namespace ktune {

Dispatch::Dispatch(size_t workers, size_t max_chunk)
    : workers_(std::max<size_t>(1, workers)), max_chunk_(max_chunk), promised_(workers_), carried_(workers_) {}

void Dispatch::upcoming(std::span<const std::vector<Value>> next) {
  upcoming_.assign(next.begin(), next.end());
  upcoming_left_.clear();
  for (size_t i = 0; i < upcoming_.size(); ++i) upcoming_left_.push_back(i);
}

void Dispatch::begin(std::span<const std::vector<Value>> batch) {
  batch_.assign(batch.begin(), batch.end());
  pending_.clear();
  for (auto& p : promised_) p.clear();
  for (size_t i = 0; i < batch_.size(); ++i) {
    const std::string key = db::config_key(batch_[i]);
    size_t owner = workers_;
    for (size_t w = 0; w < workers_ && owner == workers_; ++w)
      if (carried_[w].erase(key)) owner = w;
    if (owner < workers_) promised_[owner].push_back(i);
    else pending_.push_back(i);
  }
  for (auto& c : carried_) c.clear();  // promised, and not in this batch: the strategy changed its mind
}

std::vector<size_t> Dispatch::chunk_from(std::deque<size_t>& from) const {
  // Guided self-scheduling: half of what is left over the workers, no less than one.
  size_t n = std::max<size_t>(1, (from.size() + 2 * workers_ - 1) / (2 * workers_));
  if (max_chunk_) n = std::min(n, max_chunk_);
  n = std::min(n, from.size());
  std::vector<size_t> out(from.begin(), from.begin() + static_cast<std::ptrdiff_t>(n));
  from.erase(from.begin(), from.begin() + static_cast<std::ptrdiff_t>(n));
  return out;
}

Dispatch::Work Dispatch::take(size_t worker) {
  Work w;
  if (worker >= workers_) return w;
  if (!promised_[worker].empty()) {
    w.now = std::exchange(promised_[worker], {});
  } else if (!pending_.empty()) {
    w.now = chunk_from(pending_);
  } else {
    // Nothing left to hand out: the largest chunk promised to another worker
    // that has not started it, rather than idle while that worker measures.
    auto most = std::max_element(promised_.begin(), promised_.end(),
                                 [](const auto& a, const auto& b) { return a.size() < b.size(); });
    if (most != promised_.end()) w.now = std::exchange(*most, {});
  }
  if (w.now.empty()) return w;
  if (!pending_.empty()) {
    promised_[worker] = chunk_from(pending_);
    for (size_t i : promised_[worker]) w.ahead.push_back(batch_[i]);
  } else if (!upcoming_left_.empty()) {
    for (size_t i : chunk_from(upcoming_left_)) {
      carried_[worker].insert(db::config_key(upcoming_[i]));
      w.ahead.push_back(upcoming_[i]);
    }
  }
  return w;
}

}  // namespace ktune
