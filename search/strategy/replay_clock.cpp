#include "search/strategy/replay_clock.h"

#include <algorithm>
#include <numeric>

namespace ktune {

ReplayClock::ReplayClock(ClockOptions options)
    : options_(options),
      slot_free_(std::max<size_t>(options.compile_slots, 1), 0.0),
      gpu_free_(std::max<size_t>(options.gpus, 1), 0.0),
      mark_(std::chrono::steady_clock::now()) {}

void ReplayClock::pause_ends() {
  if (!options_.strategy_time) return;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - mark_).count();
  now_ += s;
  strategy_s_ += s;
}

double ReplayClock::now() const {
  if (!options_.strategy_time) return now_;
  return now_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - mark_).count();
}

void ReplayClock::mark() { mark_ = std::chrono::steady_clock::now(); }

double ReplayClock::compile(const Config& c, double seconds, double from) {
  if (auto it = ready_.find(c); it != ready_.end()) return it->second;
  auto slot = std::min_element(slot_free_.begin(), slot_free_.end());
  const double end = std::max(*slot, from) + std::max(seconds, 0.0);
  *slot = end;
  compile_s_ += std::max(seconds, 0.0);
  ++compiles_;
  ready_.emplace(c, end);
  return end;
}

void ReplayClock::features(std::span<const std::pair<Config, double>> compiles) {
  pause_ends();
  double done = now_;
  for (const auto& [c, s] : compiles) done = std::max(done, compile(c, s, now_));
  now_ = done;
  mark();
}

void ReplayClock::ahead(std::vector<std::pair<Config, double>> next) { ahead_ = std::move(next); }

std::vector<ReplayClock::Finish> ReplayClock::measure(std::span<const std::pair<Config, ReplayCost>> batch) {
  pause_ends();
  std::vector<double> ready(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) ready[i] = compile(batch[i].first, batch[i].second.compile_s, now_);
  for (const auto& [c, s] : ahead_) compile(c, s, now_);
  ahead_.clear();
  // The GPUs take the configurations in the order their cubins are ready
  // (the batch's order among equals), each on the GPU free first.
  std::vector<size_t> order(batch.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ready[a] < ready[b]; });
  std::vector<Finish> out;
  for (size_t i : order) {
    auto gpu = std::min_element(gpu_free_.begin(), gpu_free_.end());
    const double gpu_s = std::max(batch[i].second.gpu_s, 0.0);
    *gpu = std::max({*gpu, ready[i], now_}) + gpu_s;
    out.push_back({i, *gpu, gpu_s});
  }
  std::stable_sort(out.begin(), out.end(), [](const Finish& a, const Finish& b) { return a.at < b.at; });
  mark();
  return out;
}

void ReplayClock::reached(const Finish& f) {
  now_ = std::max(now_, f.at);
  gpu_busy_s_ += f.gpu_s;
  mark();
}

void ReplayClock::play(std::span<const std::pair<Config, ReplayCost>> batch,
                       const std::function<bool(const Finish&)>& report) {
  std::optional<double> stop;
  for (const Finish& f : measure(batch)) {
    if (stop && f.at - f.gpu_s >= *stop) continue;
    reached(f);
    if (!report(f) && !stop) stop = f.at;
  }
}

}  // namespace ktune
