#include "tuner/compile/plan.h"

#include <algorithm>
#include <optional>

namespace ktune {

std::vector<CompilePool::Ticket> CompilePlan::submit(std::vector<Keyed> batch, std::vector<Keyed> next) {
  std::vector<std::pair<std::string, CompilePool::Ticket>> held = std::move(ahead_);
  ahead_.clear();
  auto take_over = [&](const std::string& config_key) -> std::optional<CompilePool::Ticket> {
    auto it = std::find_if(held.begin(), held.end(), [&](const auto& h) { return h.first == config_key; });
    if (it == held.end()) return std::nullopt;
    const CompilePool::Ticket t = it->second;
    held.erase(it);
    return t;
  };
  // Whatever throws below (an unreadable source) leaves nothing queued for nobody.
  std::vector<CompilePool::Ticket> tickets;
  try {
    CompilePool::Priority priority = 0;
    for (Keyed& k : batch) {
      if (std::optional<CompilePool::Ticket> t = take_over(k.config_key)) {
        pool_->prioritize(*t, priority);
        tickets.push_back(*t);
        ++taken_over_;
      } else {
        tickets.push_back(pool_->submit(std::move(k.request), priority));
      }
      ++priority;
    }
    for (Keyed& k : next) {
      if (std::optional<CompilePool::Ticket> t = take_over(k.config_key)) {
        pool_->prioritize(*t, priority);
        ahead_.emplace_back(std::move(k.config_key), *t);
      } else {
        ahead_.emplace_back(std::move(k.config_key), pool_->submit(std::move(k.request), priority));
        ++queued_ahead_;
      }
      ++priority;
    }
  } catch (...) {
    for (const auto& h : held) tickets.push_back(h.second);
    pool_->cancel(tickets);
    dropped_ += held.size();
    drop();
    throw;
  }
  std::vector<CompilePool::Ticket> superseded;
  for (const auto& h : held) superseded.push_back(h.second);
  pool_->cancel(superseded);
  dropped_ += superseded.size();
  return tickets;
}

void CompilePlan::drop() {
  std::vector<CompilePool::Ticket> tickets;
  for (const auto& h : ahead_) tickets.push_back(h.second);
  ahead_.clear();
  pool_->cancel(tickets);
  dropped_ += tickets.size();
}

bool CompilePlan::ready(const std::string& config_key) const {
  auto it = std::find_if(ahead_.begin(), ahead_.end(), [&](const auto& h) { return h.first == config_key; });
  return it != ahead_.end() && pool_->ready(it->second);
}

}  // namespace ktune
