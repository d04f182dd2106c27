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
      shared_(workers_),
      retired_(workers_, false) {}

void Dispatch::upcoming(std::span<const std::vector<Value>> next) {
  for (auto& s : shared_) s.clear();
  if (live_workers() == 0) return;
  size_t w = 0;
  for (const std::vector<Value>& c : next) {
    while (retired_[w]) w = (w + 1) % workers_;
    shared_[w].push_back(c);
    w = (w + 1) % workers_;
  }
}

std::vector<std::vector<Value>> Dispatch::ahead(size_t worker) const {
  std::vector<std::vector<Value>> out;
  if (worker >= workers_) return out;
  for (const auto& chunk : promised_[worker])
    for (size_t i : chunk) out.push_back(batch_[i]);
  out.insert(out.end(), carried_[worker].begin(), carried_[worker].end());
  out.insert(out.end(), shared_[worker].begin(), shared_[worker].end());
  return out;
}

void Dispatch::give_to_least(std::vector<std::vector<std::vector<Value>>>& shares,
                             std::vector<std::vector<Value>> configs) {
  for (std::vector<Value>& c : configs) {
    size_t least = workers_;
    for (size_t k = 0; k < workers_; ++k)
      if (!retired_[k] && (least == workers_ || shares[k].size() < shares[least].size())) least = k;
    if (least == workers_) return;
    shares[least].push_back(std::move(c));
  }
}

void Dispatch::begin(std::span<const std::vector<Value>> batch) {
  batch_.assign(batch.begin(), batch.end());
  std::unordered_map<std::string, size_t> owner;  // shared by the upcoming() before the last begin()
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
  // A worker's own configurations in guided chunks, so that one freeing up
  // early can still take the last of another's.
  const size_t chunk = live_workers() > 1 ? guided(batch_.size()) : batch_.size();
  for (size_t w = 0; w < workers_; ++w) {
    promised_[w].clear();
    for (size_t at = 0; at < first[w].size(); at += chunk) {
      const auto from = first[w].begin() + static_cast<std::ptrdiff_t>(at);
      promised_[w].emplace_back(from, from + static_cast<std::ptrdiff_t>(std::min(chunk, first[w].size() - at)));
    }
  }
  // Shared and not in this batch: the strategy changed its mind. What was
  // shared since is for after this batch.
  carried_ = std::move(shared_);
  shared_.assign(workers_, {});
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
  while (!pending_.empty() &&
         promised_size(worker) + carried_[worker].size() + shared_[worker].size() < min_ahead_)
    promised_[worker].push_back(chunk_from(pending_));
  w.ahead = ahead(worker);
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
  // Of what comes next: the others compile it ahead from their next take.
  give_to_least(carried_, std::exchange(carried_[worker], {}));
  give_to_least(shared_, std::exchange(shared_[worker], {}));
}

bool Dispatch::has_work() const {
  if (!pending_.empty()) return true;
  return std::any_of(promised_.begin(), promised_.end(), [](const auto& p) { return !p.empty(); });
}

}  // namespace ktune
