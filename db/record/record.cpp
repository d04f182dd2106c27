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

const std::vector<EvaluationField>& evaluation_fields() {
  using E = Evaluation;
  using K = EvaluationField::Kind;
  static const std::vector<EvaluationField> fields = {
      {"registers", nullptr, &E::registers, K::Resource, "num_regs", "num_regs", ""},
      {"shared_bytes", nullptr, &E::shared_bytes, K::Resource, "shared_bytes", "shared_bytes", "B"},
      {"local_bytes", nullptr, &E::local_bytes, K::Resource, "local_bytes", "local_bytes", "B"},
      {"occupancy", &E::occupancy, nullptr, K::Resource, "occupancy", "occupancy", ""},
      {"compile_ms", &E::compile_ms, nullptr, K::Phase, "compile_time", "compilation_time"},
      {"load_ms", &E::load_ms, nullptr, K::Phase},
      {"verify_ms", &E::verify_ms, nullptr, K::Phase, "verification_time", "validation"},
      {"benchmark_ms", &E::benchmark_ms, nullptr, K::Phase, "benchmark_time"},
      {"strategy_ms", &E::strategy_ms, nullptr, K::Search, "strategy_time", "search_algorithm", "", false},
      {"framework_ms", &E::framework_ms, nullptr, K::Phase, "framework_time", "framework"},
      {"sm_clock_mhz", &E::sm_clock_mhz, nullptr, K::Device, "core_freq", "core_freq", "MHz", false},
      {"temperature_c", &E::temperature_c, nullptr, K::Device, "temperature", "temperature", "C", false},
      {"power_w", &E::power_w, nullptr, K::Device, "nvml_power", "nvml_power", "W", false},
      {"stopped_early", nullptr, &E::stopped_early, K::Sampling, "ktune_stopped_early"},
      {"energy_j", &E::energy_j, nullptr, K::Device, "nvml_energy", "energy", "J"},
      {"throttled_samples", nullptr, &E::throttled_samples, K::Sampling, "ktune_throttled_samples", "", "", false},
      // Counters under Nsight Compute's metric names, as Kernel Tuner's
      // NCUObserver stores them; the fractions are ncu's percentages / 100.
      {"dram_read_bytes", &E::dram_read_bytes, nullptr, K::Counter, "dram__bytes_read.sum", "dram__bytes_read.sum", "B"},
      {"dram_write_bytes", &E::dram_write_bytes, nullptr, K::Counter, "dram__bytes_write.sum", "dram__bytes_write.sum", "B"},
      {"dram_util", &E::dram_util, nullptr, K::Counter, "ktune_dram_util", "dram_util", ""},
      {"l2_hit_rate", &E::l2_hit_rate, nullptr, K::Counter, "ktune_l2_hit_rate", "l2_hit_rate", ""},
      {"load_requests", &E::load_requests, nullptr, K::Counter, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "load_requests", ""},
      {"load_sectors", &E::load_sectors, nullptr, K::Counter, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "load_sectors", ""},
      {"store_requests", &E::store_requests, nullptr, K::Counter, "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "store_requests", ""},
      {"store_sectors", &E::store_sectors, nullptr, K::Counter, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "store_sectors", ""},
      {"achieved_occupancy", &E::achieved_occupancy, nullptr, K::Counter, "ktune_achieved_occupancy", "achieved_occupancy", ""},
      {"sm_util", &E::sm_util, nullptr, K::Counter, "ktune_sm_util", "sm_util", ""},
      {"tensor_util", &E::tensor_util, nullptr, K::Counter, "ktune_tensor_util", "tensor_util", ""},
      {"bank_conflicts", &E::bank_conflicts, nullptr, K::Counter, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "bank_conflicts", ""},
      {"flop", &E::flop, nullptr, K::Counter, "ktune_flop", "flop", ""},
      {"tensor_flop", &E::tensor_flop, nullptr, K::Counter, "ktune_tensor_flop", "tensor_flop", ""},
      {"profiled_ms", &E::profiled_ms, nullptr, K::Counter, "ktune_profiled_time", "profiled_time", "ms"},
  };
  return fields;
}

std::optional<double> EvaluationField::get(const Evaluation& e) const {
  if (real) return e.*real;
  const std::optional<int64_t>& i = e.*integer;
  return i ? std::optional<double>(static_cast<double>(*i)) : std::nullopt;
}

void EvaluationField::set(Evaluation& e, std::optional<double> v) const {
  if (real) e.*real = v;
  else e.*integer = v ? std::optional<int64_t>(static_cast<int64_t>(std::llround(*v))) : std::nullopt;
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
