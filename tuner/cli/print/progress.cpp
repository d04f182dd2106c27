#include "tuner/cli/print/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace ktune {

Progress::Progress(std::string label, size_t total, bool enabled)
    : label_(std::move(label)),
      total_(total),
      enabled_(enabled),
      tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

static std::string duration(double s) {
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.0fs", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", int(s) / 60, int(s) % 60);
  else std::snprintf(buf, sizeof buf, "%dh%02dm", int(s) / 3600, int(s) % 3600 / 60);
  return buf;
}

void Progress::update(size_t done, const std::string& note, std::optional<double> eta_s) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  last_done_ = done;
  last_note_ = note;
  const double since = std::chrono::duration<double>(now - last_).count();
  const bool final_line = done >= total_ && printed_done_ != done;
  if (!final_line && since < (tty_ ? 0.2 : 5.0)) return;
  if (!tty_ && printed_done_ == done && since < 5.0) return;
  printed_done_ = done;
  last_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = elapsed > 0 ? done / elapsed : 0;
  const double eta = total_ <= done ? 0 : eta_s ? *eta_s : rate > 0 ? (total_ - done) / rate : 0;
  const int width = 24;
  const int filled = total_ ? int(width * double(done) / total_) : width;
  std::fprintf(stderr, "%s%s [%s%s] %zu/%zu  %.1f/s  elapsed %s  eta %s  %s%s", tty_ ? "\r\033[K" : "",
               label_.c_str(), std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(), done,
               total_, rate, duration(elapsed).c_str(), duration(eta).c_str(), note.c_str(), tty_ ? "" : "\n");
  std::fflush(stderr);
}

void Progress::finish() {
  if (!enabled_) return;
  bool print = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    print = printed_done_ != last_done_;
    last_ = std::chrono::steady_clock::time_point{};
    total_ = std::max(total_, last_done_);
  }
  if (print) update(last_done_, last_note_);
  if (tty_) std::fputc('\n', stderr);
}

}  // namespace ktune
