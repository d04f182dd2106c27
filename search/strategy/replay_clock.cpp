#include "search/strategy/replay_clock.h"

#include <algorithm>
#include <numeric>

#include "search/strategy/straggler.h"

namespace ktune {

double raced_gpu_s(const ReplayCost& cost, double best_ms) {
  const RecordedSampling& r = cost.sampling;
  const double gpu_s = std::max(cost.gpu_s, 0.0);
  if (r.raced || best_ms <= 0 || r.time_ms <= 0 || r.samples <= 1 || r.sampling_s <= 0) return gpu_s;
  // GpuEvaluatorOptions' rules: one sample above 1.5 x, three above 1.2 x.
  const int kept = r.time_ms > 1.5 * best_ms ? 1 : r.time_ms > 1.2 * best_ms ? 3 : r.samples;
  if (kept >= r.samples) return gpu_s;
  const double saved = std::min(r.sampling_s, gpu_s) * (1.0 - double(kept) / double(r.samples));
  return gpu_s - saved;
}

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

void ReplayClock::advance(double t) {
  while (!waiting_.empty()) {
    if (ready_.count(waiting_.front().first)) {
      waiting_.pop_front();
      continue;
    }
    const double from = std::max(*std::min_element(slot_free_.begin(), slot_free_.end()), waiting_from_);
    if (from >= t) break;
    compile(waiting_.front().first, waiting_.front().second, from);
    waiting_.pop_front();
  }
}

std::vector<bool> ReplayClock::features(std::span<const std::pair<Config, double>> compiles, double deadline) {
  pause_ends();
  advance(now_);
  const double start = now_;
  std::vector<double> end(compiles.size()), own_s(compiles.size(), -1);  // -1: compiled or compiling before
  for (size_t i = 0; i < compiles.size(); ++i) {
    const bool before = ready_.count(compiles[i].first) > 0;
    end[i] = std::max(compile(compiles[i].first, compiles[i].second, start), start);
    if (!before) own_s[i] = std::max(compiles[i].second, 0.0);
  }
  // The compiles in the order they end; the request stops waiting at the
  // first that ends after the straggler rule's patience, as of those before it.
  std::vector<size_t> order(compiles.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return end[a] < end[b]; });
  std::vector<bool> pending(compiles.size(), false);
  std::vector<double> ended_s;
  const auto compiled_here = [](double s) { return s >= 0; };
  const size_t started = static_cast<size_t>(std::count_if(own_s.begin(), own_s.end(), compiled_here));
  double done = start;
  for (size_t k = 0; k < order.size(); ++k) {
    const double limit = start + StragglerRule::patience(ended_s, started, slot_free_.size());
    if (end[order[k]] > limit) {
      done = std::max(done, limit);
      for (size_t j = k; j < order.size(); ++j) pending[order[j]] = true;
      break;
    }
    done = end[order[k]];
    if (own_s[order[k]] >= 0) ended_s.push_back(own_s[order[k]]);
  }
  now_ = std::max(now_, std::min(done, deadline));
  advance(now_);
  mark();
  return pending;
}

void ReplayClock::ahead(std::vector<std::pair<Config, double>> next) {
  pause_ends();
  advance(now_);
  waiting_.assign(next.begin(), next.end());
  waiting_from_ = now_;
  mark();
}

std::vector<ReplayClock::Finish> ReplayClock::measure(std::span<const std::pair<Config, ReplayCost>> batch) {
  pause_ends();
  advance(now_);
  std::vector<double> ready(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) ready[i] = compile(batch[i].first, batch[i].second.compile_s, now_);
  // The GPUs take the configurations in the order their cubins are ready
  // (the batch's order among equals), each on the GPU free first.
  std::vector<size_t> order(batch.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ready[a] < ready[b]; });
  std::vector<Finish> out;
  for (size_t i : order) {
    auto gpu = std::min_element(gpu_free_.begin(), gpu_free_.end());
    const double gpu_s = gpu_cost(batch[i].second);
    *gpu = std::max({*gpu, ready[i], now_}) + gpu_s;
    out.push_back({i, *gpu, gpu_s, batch[i].second.sampling.time_ms});
  }
  std::stable_sort(out.begin(), out.end(), [](const Finish& a, const Finish& b) { return a.at < b.at; });
  mark();
  return out;
}

double ReplayClock::gpu_cost(const ReplayCost& cost) const {
  return options_.racing ? raced_gpu_s(cost, best_ms_) : std::max(cost.gpu_s, 0.0);
}

void ReplayClock::count(const Finish& f) {
  gpu_busy_s_ += f.gpu_s;
  if (f.time_ms > 0 && (best_ms_ <= 0 || f.time_ms < best_ms_)) best_ms_ = f.time_ms;
}

void ReplayClock::reached(const Finish& f) {
  now_ = std::max(now_, f.at);
  count(f);
  mark();
}

void ReplayClock::report_in_order(std::vector<Finish> finishes, const std::function<bool(const Finish&)>& report) {
  std::stable_sort(finishes.begin(), finishes.end(), [](const Finish& a, const Finish& b) { return a.at < b.at; });
  std::optional<double> stop;
  for (const Finish& f : finishes) {
    if (stop && f.at - f.gpu_s >= *stop) continue;
    reached(f);
    if (!report(f) && !stop) stop = f.at;
  }
}

void ReplayClock::play(std::span<const std::pair<Config, ReplayCost>> batch,
                       const std::function<bool(const Finish&)>& report) {
  report_in_order(measure(batch), report);
}

void ReplayClock::fill(std::span<const std::pair<Config, ReplayCost>> spare, double from,
                       const std::function<bool(const Finish&)>& report) {
  pause_ends();
  advance(now_);
  const double until = now_;
  std::vector<std::pair<double, size_t>> compiled;  // (ready, index)
  for (size_t i = 0; i < spare.size(); ++i)
    if (auto it = ready_.find(spare[i].first); it != ready_.end() && it->second < until)
      compiled.emplace_back(it->second, i);
  std::stable_sort(compiled.begin(), compiled.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Finish> out;
  for (const auto& [ready, i] : compiled) {
    auto gpu = std::min_element(gpu_free_.begin(), gpu_free_.end());
    const double start = std::max({*gpu, ready, from});
    if (start >= until) continue;
    const double gpu_s = gpu_cost(spare[i].second);
    *gpu = start + gpu_s;
    out.push_back({i, *gpu, gpu_s, spare[i].second.sampling.time_ms});
  }
  // Each result is reported at its own time, which lies before now: the
  // clock goes back to the proposal's start (every one started after it)
  // and on to each finish as it is reported (the trace's time, the time
  // budget), then to the later of the proposal's end and the last finish.
  now_ = from;
  report_in_order(std::move(out), report);
  now_ = std::max(now_, until);
  mark();
}

}  // namespace ktune
