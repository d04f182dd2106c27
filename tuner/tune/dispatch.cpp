#include "tuner/tune/dispatch.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>

#include "db/record/record.h"

namespace ktune {

Dispatch::Dispatch(size_t workers, size_t max_chunk, size_t min_ahead)
    : workers_(std::max<size_t>(1, workers)),
      max_chunk_(max_chunk),
      min_ahead_(min_ahead),
      promised_(workers_),
      carried_(workers_),
      retired_(workers_, false) {}

void Dispatch::upcoming(std::span<const std::vector<Value>> next) {
  upcoming_.assign(next.begin(), next.end());
  upcoming_left_.clear();
  for (size_t i = 0; i < upcoming_.size(); ++i) upcoming_left_.push_back(i);
}

void Dispatch::begin(std::span<const std::vector<Value>> batch) {
  batch_.assign(batch.begin(), batch.end());
  std::unordered_map<std::string, size_t> owner;  // promised from the last upcoming()
  for (size_t w = 0; w < workers_; ++w)
    for (const std::vector<Value>& c : carried_[w]) owner.emplace(config_key(c), w);
  pending_.clear();
  std::vector<std::vector<size_t>> first(workers_);
  for (size_t i = 0; i < batch_.size(); ++i) {
    auto it = owner.find(config_key(batch_[i]));
    if (it != owner.end()) {
      first[it->second].push_back(i);
      owner.erase(it);  // a configuration twice in a batch: the second is anybody's
    } else {
      pending_.push_back(i);
    }
  }
  for (size_t w = 0; w < workers_; ++w) {
    promised_[w].clear();
    if (!first[w].empty()) promised_[w].push_back(std::move(first[w]));
  }
  for (auto& c : carried_) c.clear();  // promised and not in this batch: the strategy changed its mind
}

void Dispatch::carry(size_t worker, size_t n) {
  for (; n > 0 && !upcoming_left_.empty(); --n) {
    carried_[worker].push_back(upcoming_[upcoming_left_.front()]);
    upcoming_left_.pop_front();
  }
}

size_t Dispatch::guided_chunk(size_t left, size_t workers) {
  workers = std::max<size_t>(workers, 1);
  return std::max<size_t>(1, (left + 2 * workers - 1) / (2 * workers));
}

size_t Dispatch::guided(size_t left) const {
  size_t n = guided_chunk(left, std::max<size_t>(1, live_workers()));
  if (max_chunk_) n = std::min(n, max_chunk_);
  return std::min(n, left);
}

std::vector<size_t> Dispatch::chunk_from(std::deque<size_t>& from) const {
  const size_t n = guided(from.size());
  std::vector<size_t> out(from.begin(), from.begin() + static_cast<std::ptrdiff_t>(n));
  from.erase(from.begin(), from.begin() + static_cast<std::ptrdiff_t>(n));
  return out;
}

Dispatch::Work Dispatch::take(size_t worker) {
  Work w;
  if (worker >= workers_ || retired_[worker]) return w;
  auto promised_size = [&](size_t k) {
    size_t n = 0;
    for (const auto& c : promised_[k]) n += c.size();
    return n;
  };
  if (!promised_[worker].empty()) {
    w.now = std::move(promised_[worker].front());
    promised_[worker].pop_front();
  } else if (!pending_.empty()) {
    w.now = chunk_from(pending_);
  } else {
    // Nothing left to hand out: the last chunk promised to the worker with
    // the most, rather than idle while that worker measures.
    size_t most = workers_;
    for (size_t k = 0; k < workers_; ++k)
      if (!promised_[k].empty() && (most == workers_ || promised_size(k) > promised_size(most))) most = k;
    if (most < workers_) {
      w.now = std::move(promised_[most].back());
      promised_[most].pop_back();
    }
  }
  if (w.now.empty()) return w;
  // At least the next chunk, and chunks up to min_ahead while the batch has them.
  if (promised_[worker].empty() && !pending_.empty()) promised_[worker].push_back(chunk_from(pending_));
  while (!pending_.empty() && promised_size(worker) + carried_[worker].size() < min_ahead_)
    promised_[worker].push_back(chunk_from(pending_));
  if (pending_.empty() && promised_[worker].empty() && carried_[worker].empty())
    carry(worker, guided(upcoming_left_.size()));
  const size_t held = promised_size(worker) + carried_[worker].size();
  if (held < min_ahead_) carry(worker, min_ahead_ - held);
  for (const auto& chunk : promised_[worker])
    for (size_t i : chunk) w.ahead.push_back(batch_[i]);
  w.ahead.insert(w.ahead.end(), carried_[worker].begin(), carried_[worker].end());
  return w;
}

void Dispatch::retire(size_t worker, std::span<const size_t> unreported) {
  if (worker >= workers_ || retired_[worker]) return;
  retired_[worker] = true;
  ++retired_count_;
  std::vector<size_t> back(unreported.begin(), unreported.end());
  for (const std::vector<size_t>& chunk : promised_[worker]) back.insert(back.end(), chunk.begin(), chunk.end());
  promised_[worker].clear();
  std::sort(back.begin(), back.end());
  pending_.insert(pending_.begin(), back.begin(), back.end());
  // Of the next batch: the others may compile it ahead again.
  for (auto c = carried_[worker].rbegin(); c != carried_[worker].rend(); ++c)
    for (size_t i = 0; i < upcoming_.size(); ++i)
      if (upcoming_[i] == *c && std::find(upcoming_left_.begin(), upcoming_left_.end(), i) == upcoming_left_.end()) {
        upcoming_left_.push_front(i);
        break;
      }
  carried_[worker].clear();
}

bool Dispatch::has_work() const {
  if (!pending_.empty()) return true;
  return std::any_of(promised_.begin(), promised_.end(), [](const auto& p) { return !p.empty(); });
}

}  // namespace ktune
