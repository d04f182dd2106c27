#include "db/record/record.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

#include "ktune/error.h"

namespace ktune::db {

namespace {
constexpr const char* kStatusNames[] = {"ok",      "invalid", "compile_error", "runtime_error",
                                        "timeout", "wrong_result"};
}

const char* to_string(Status s) { return kStatusNames[static_cast<int>(s)]; }

std::optional<Status> status_from_string(std::string_view s) {
  for (int i = 0; i < 6; ++i)
    if (s == kStatusNames[i]) return static_cast<Status>(i);
  return std::nullopt;
}

ProblemSize canonical_problem_size(ProblemSize ps) {
  if (ps.size() > 3)
    throw Error::bad_input("a problem size has 1 to 3 extents, got " + std::to_string(ps.size()));
  for (int64_t x : ps)
    if (x < 1) throw Error::bad_input("problem size extent " + std::to_string(x) + " is not positive");
  while (ps.size() > 1 && ps.back() == 1) ps.pop_back();
  return ps;
}

std::string problem_size_key(const ProblemSize& ps) {
  std::string s = "[";
  for (size_t i = 0; i < ps.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(ps[i]);
  }
  return s + "]";
}

void Evaluation::complete_stats() {
  if (samples.empty()) return;
  if (sample_count == 0) sample_count = static_cast<int64_t>(samples.size());
  if (!min_ms) min_ms = *std::min_element(samples.begin(), samples.end());
  double sum = 0;
  for (double x : samples) sum += x;
  double mean = sum / static_cast<double>(samples.size());
  if (!mean_ms) mean_ms = mean;
  if (!stddev_ms && samples.size() > 1) {
    double ss = 0;
    for (double x : samples) ss += (x - mean) * (x - mean);
    stddev_ms = std::sqrt(ss / static_cast<double>(samples.size() - 1));
  }
}

std::string config_key(const std::vector<Value>& config) {
  std::string key;
  for (size_t i = 0; i < config.size(); ++i) {
    if (i) key += ',';
    key += config[i].str();
  }
  return key;
}

std::string now_iso8601() {
  using namespace std::chrono;
  auto now = system_clock::now();
  std::time_t t = system_clock::to_time_t(now);
  auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms));
  return out;
}

}  // namespace ktune::db
