// A one-line progress display on stderr: done/total, rate, ETA and a note
// (e.g. the best time so far). Redrawn at most a few times a second; on a
// non-terminal stderr it prints a plain line every few seconds instead, so
// logs stay readable. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>

namespace ktune {

class Progress {
 public:
  Progress(std::string label, size_t total, bool enabled);
  // eta_s: the seconds left where the caller knows better than the rate so
  // far (work whose parts differ in cost); else from the rate.
  void update(size_t done, const std::string& note = "", std::optional<double> eta_s = std::nullopt);
  void finish();

 private:
  std::string label_;
  size_t total_;
  bool enabled_;
  bool tty_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point start_, last_;
  size_t last_done_ = 0;
  size_t printed_done_ = static_cast<size_t>(-1);
  std::string last_note_;
};

}  // namespace ktune
