#include "tuner/cli/print/tune_report.h"

#include <algorithm>
#include <cmath>
#include <iostream>

#include "tuner/cli/print/config_columns.h"
#include "tuner/cli/print/json.h"
#include "tuner/cli/print/table.h"

namespace ktune {

namespace {

// The spread of a result's samples (stddev / mean), where it has them.
std::optional<double> noise_of(const db::Evaluation& e) {
  if (!e.stddev_ms || !e.mean_ms || !(*e.mean_ms > 0) || e.sample_count < 2) return std::nullopt;
  return *e.stddev_ms / *e.mean_ms;
}

// The share of the best's objective a result reaches, in either direction
// (1 for the best, below 1 for the rest); a measure only where both values
// are positive.
double share_of_best(const Spec& spec, double value, double best) {
  return spec.higher_is_better ? value / best : best / value;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A configuration as a JSON object, parameter name to value.
cli::Json config_json(const Spec& spec, const std::vector<Value>& config) {
  const auto& params = spec.space().parameters();
  cli::Json c = cli::Json::object();
  for (size_t p = 0; p < params.size(); ++p) c[params[p].name] = cli::to_json(config[p]);
  return c;
}

// rank_results orders results within each other's noise by occupancy: the
// rows (1-based pairs among the first `shown`) where that puts a
// slower-looking row first, or "" where it does not.
std::string swapped_rows(const Spec& spec, const std::vector<const db::Evaluation*>& r, size_t shown) {
  std::string swapped;
  for (size_t i = 1; i < shown; ++i) {
    const double above = *objective_of(spec, *r[i - 1]), here = *objective_of(spec, *r[i]);
    if (spec.higher_is_better ? here > above : here < above)
      swapped += (swapped.empty() ? "" : ", ") + std::to_string(i) + " and " + std::to_string(i + 1);
  }
  return swapped;
}

}  // namespace

TuneReport::TuneReport(const Spec& spec, bool interactive) : spec_(&spec), interactive_(interactive) {}

void TuneReport::measured(const Measured& m) {
  if (m.missing) {
    ++missing_;
    return;
  }
  ++measured_;
  ++counts_[db::to_string(m.eval.status)];
  const db::Evaluation& e = m.eval;
  if (e.compile_ms.value_or(0) > 0) ++split_.compiled;
  split_.compile += e.compile_ms.value_or(0);
  split_.load += e.load_ms.value_or(0);
  split_.verify += e.verify_ms.value_or(0);
  split_.measure += e.benchmark_ms.value_or(0);
  split_.framework += e.framework_ms.value_or(0);
  if (e.stopped_early.value_or(0)) ++split_.stopped_early;
  if (m.eval.status == db::Status::Ok) ++ok_;
  evals_.push_back(m.eval);
}

void TuneReport::reused(const db::Evaluation& e) {
  ++resumed_;
  reused_.push_back(e.config);
  if (e.status == db::Status::Ok) ++ok_;
  evals_.push_back(e);
}

void TuneReport::started(const tune::RunStart& start) {
  device_ = start.device;
  replay_ = start.replay;
  source_ = start.source;
  prior_ = start.prior;
  reusable_ = start.reusable;
  partial_ = start.partial;
  within_ = start.within;
  workers_ = start.workers;
  std::ostream& out = std::cerr;
  if (replay_)
    out << "ktune: REPLAY — no GPU is used; every time below is a recorded measurement of " << device_.name
        << " from " << source_ << "\n";
  else
    out << "ktune: tuning " << spec_->kernel.name << " on " << source_ << "\n";
  if (start.simulated)
    out << "ktune: " << workers_ << " SIMULATED " << (workers_ > 1 ? "GPUs" : "GPU")
        << " and compile processes: the recorded compile and GPU times laid out as a live run would spend them; "
        << "the time shown is the wall time they predict\n";
  else if (workers_ > 1)
    out << "ktune: " << workers_ << " workers evaluate configurations side by side\n";
  // The budget, said before anything is spent: with none, a run can take hours.
  {
    const Budget& b = start.budget;
    out << "ktune: budget: ";
    if (b.max_fevals) out << b.max_fevals << " evaluations";
    if (b.max_fevals && b.time_limit_s > 0) out << " or ";
    if (b.time_limit_s > 0) out << fixed(b.time_limit_s, 1) << " s";
    if (!b.max_fevals && b.time_limit_s <= 0)
      out << "NONE: the run goes on until the strategy is done (up to all " << start.total
          << " configurations); --max-fevals N or --time-limit T to limit it";
    out << "\n";
  }
  if (prior_) {
    out << "ktune: prior: " << prior_->describe()
        << " (the first configurations come from its best tenth; --no-prior: without)\n";
    for (const std::string& n : prior_->notes) out << "ktune: note: --prior: " << n << '\n';
  }
  if (reusable_)
    out << "ktune: " << reusable_ << " results of this kernel, device and problem size are in the database: one the "
        << "strategy proposes is reused, and counts toward --max-fevals (--force re-measures)\n";
  if (partial_)
    out << "ktune: a PARTIAL recording (" << partial_->first << " of " << partial_->second
        << " valid configurations): the strategy keeps to the recorded ones; the best is the recorded part's\n";
  bar_ = std::make_unique<Progress>(replay_ ? "replay" : "tune", start.total, interactive_);
}

void TuneReport::progress(const TraceEntry& t) {
  if (!bar_) return;
  std::string note;
  if (t.best) note = "best " + fixed(*t.best, 4) + (spec_->objective == "time" ? " ms" : " " + spec_->objective);
  if (replay_) note += "  recorded " + fixed(t.elapsed_s, 1) + " s";
  bar_->update(t.fevals, note);
}

void TuneReport::remeasured(const Measured& m) {
  if (m.eval.status == db::Status::Ok && m.eval.time_ms) confirmed_[config_key(m.eval.config)] = *m.eval.time_ms;
}

void TuneReport::finish(const tune::RunOutcome& outcome, bool json, int top) {
  if (bar_) bar_->finish();
  const std::vector<const db::Evaluation*> r = rank_results(*spec_, evals_);
  if (json) {
    std::cout << summary_json(outcome, r, top).dump(2) << '\n';
    return;
  }
  print_summary(outcome, r);
  print_best(r, top);
}

cli::Json TuneReport::summary_json(const tune::RunOutcome& outcome, const std::vector<const db::Evaluation*>& r,
                                   int top) const {
  const RunResult& result = outcome.result;
  const int64_t run_id = outcome.run_id;
  cli::Json j = {{"run_id", run_id}, {"kernel", spec_->kernel.name}, {"device", device_.name},
                 {"replay", replay_}, {"source", source_}, {"stop", stop_reason_name(result.stop)},
                 {"evaluations", measured_}, {"measured_beside", result.beside}, {"resumed", resumed_},
                 {"reusable", reusable_},
                 {"missing_from_data", missing_ + result.not_recorded - outcome.not_within},
                 {"elapsed_s", result.elapsed_s}, {"objective", spec_->objective}, {"status_counts", counts_},
                 {"prior", cli::Json()}};
  if (outcome.interrupted) {  // beside the stop reason; absent from a run that was not interrupted
    cli::Json with = cli::Json::object();
    for (auto& [key, value] : j.items()) {
      with[key] = std::move(value);
      if (key == "stop") with["interrupted"] = true;
    }
    j = std::move(with);
  }
  if (partial_) j["partial_recording"] = {{"recorded", partial_->first}, {"valid", partial_->second}};
  if (within_) j["within"] = {{"configurations", *within_}, {"proposed_outside", outcome.not_within}};
  if (recorded_optimum_ && !r.empty()) {
    const double best = *objective_of(*spec_, *r[0]);
    j["recorded_optimum"] = *recorded_optimum_;
    if (best > 0 && *recorded_optimum_ > 0)
      j["fraction_of_recorded_optimum"] = share_of_best(*spec_, best, *recorded_optimum_);
  }
  j["workers"] = workers_;
  j["time_split"] = {{"compile_s", split_.compile / 1000}, {"compiled", split_.compiled}, {"gpu_s", split_.gpu() / 1000},
                     {"load_s", split_.load / 1000},       {"verify_s", split_.verify / 1000},
                     {"measure_s", split_.measure / 1000}, {"framework_s", split_.framework / 1000},
                     {"stopped_early", split_.stopped_early}};
  if (compiles_)
    j["time_split"]["compile_pool"] = {{"compiled", compiles_->compiled}, {"same_code", compiles_->same_code},
                                       {"from_cache", compiles_->from_cache}, {"compile_s", compiles_->compile_s}};
  if (pool_) {
    // The evaluations' wall (virtual in a replay) and the strategy's real time between batches.
    const double wall = pool_->wall_s + pool_->between_s;
    j["parallel"] = {{"busy_s", pool_->busy_s}, {"evaluation_wall_s", pool_->wall_s},
                     {"strategy_s", replay_ ? pool_->strategy_s : pool_->between_s}, {"wall_s", wall},
                     {"efficiency", wall > 0 ? pool_->busy_s / (double(workers_) * wall) : 0.0},
                     {"simulated", replay_}};
    if (replay_) {
      j["predicted_wall_s"] = wall;
      j["parallel"]["compile_s"] = pool_->compile_s;
      j["parallel"]["compiles"] = pool_->compiles;
    }
    if (!pool_->lost.empty()) {  // only then, so that a run that lost none reads as before
      cli::Json lost = cli::Json::array();
      for (const LostWorker& l : pool_->lost)
        lost.push_back({{"worker", l.index}, {"source", l.source}, {"reason", l.reason}});
      j["parallel"]["lost_workers"] = lost;
    }
  }
  if (prior_)
    j["prior"] = {{"device", prior_->device},          {"problem_size", prior_->problem_size},
                  {"source", prior_->source},          {"results", prior_->observations.size()},
                  {"successful", prior_->successes()}, {"replayed", prior_->replayed}};
  j["best"] = best_json(r, top);
  // What the run took from the database instead of measuring (Kernel
  // Tuner's cache hits): its rows belong to earlier runs.
  cli::Json reused = cli::Json::array();
  for (const auto& config : reused_) reused.push_back(config_json(*spec_, config));
  j["reused_configs"] = reused;
  for (const auto& [key, value] : extra_json_.items()) j[key] = value;
  return j;
}

cli::Json TuneReport::best_json(const std::vector<const db::Evaluation*>& r, int top) const {
  cli::Json best = cli::Json::array();
  for (size_t i = 0; i < r.size() && i < static_cast<size_t>(top); ++i) {
    const double value = *objective_of(*spec_, *r[i]), top_value = *objective_of(*spec_, *r[0]);
    cli::Json row = {{"config", config_json(*spec_, r[i]->config)},
                     {"time_ms", r[i]->time_ms ? cli::Json(*r[i]->time_ms) : cli::Json()},
                     {"objective", value},
                     {"ratio_to_best", value > 0 && top_value > 0 ? cli::Json(share_of_best(*spec_, value, top_value))
                                                                  : cli::Json()},
                     {"difference_to_best", value - top_value}};
    if (!r[i]->metrics.empty()) row["metrics"] = r[i]->metrics;
    row["samples"] = r[i]->sample_count;
    if (auto n = noise_of(*r[i])) row["noise"] = *n;
    if (auto it = confirmed_.find(config_key(r[i]->config)); it != confirmed_.end())
      row["confirmed_time_ms"] = it->second;
    best.push_back(row);
  }
  return best;
}

void TuneReport::print_summary(const tune::RunOutcome& outcome, const std::vector<const db::Evaluation*>& r) const {
  const RunResult& result = outcome.result;
  std::cout << (replay_ ? "REPLAY of recorded measurements (" + device_.name + ", " + source_ + ")\n"
                        : "tuned on " + source_ + "\n");
  std::cout << "stopped: " << stop_reason_name(result.stop);
  // Interrupted after the search had stopped on its own: the re-measure was cut.
  if (outcome.interrupted && result.stop != StopReason::Interrupted) std::cout << ", then interrupted";
  std::cout << "; " << measured_ << (replay_ ? " replayed" : " measured");
  if (result.beside) std::cout << " (" << result.beside << " of them while the strategy proposed)";
  if (resumed_) std::cout << ", " << resumed_ << " reused from the database";
  if (const uint64_t missing = missing_ + result.not_recorded - outcome.not_within)
    std::cout << ", " << missing << " not in the recorded data";
  if (outcome.not_within) std::cout << ", " << outcome.not_within << " proposed outside the list (not measured)";
  if (partial_) std::cout << " (a partial recording: the best is the recorded part's)";
  std::cout << "; " << (replay_ ? "recorded tuning time " : "elapsed ") << fixed(result.elapsed_s, 1) << " s\n";
  if (recorded_optimum_ && !r.empty()) {
    const double best = *objective_of(*spec_, *r[0]);
    std::cout << "best: " << fixed(best, 4) << (spec_->objective == "time" ? " ms" : " " + spec_->objective);
    if (best > 0 && *recorded_optimum_ > 0)
      std::cout << ", " << fixed(100 * share_of_best(*spec_, best, *recorded_optimum_), 1)
                << "% of the recording's optimum (" << fixed(*recorded_optimum_, 4) << ")";
    std::cout << '\n';
  }
  if (measured_) {
    // Compiles run in parallel with the GPU, so the two may add up to more
    // than the elapsed time; a run whose compiles far exceed the GPU's
    // (times the compile workers) waits for its compiler. A replay compiled
    // nothing: its times are the recording's.
    if (replay_) {
      std::cout << "recorded times of these configurations: compiles " << fixed(split_.compile / 1000, 1) << " s, GPU "
                << fixed(split_.gpu() / 1000, 1) << " s (load " << fixed(split_.load / 1000, 1) << ", verify "
                << fixed(split_.verify / 1000, 1) << ", measure " << fixed(split_.measure / 1000, 1) << "), framework "
                << fixed(split_.framework / 1000, 1) << " s; nothing was compiled or run here\n";
    } else {
      std::cout << "time: compiles " << fixed(split_.compile / 1000, 1) << " s (" << split_.compiled
                << " through the compile workers, the rest from the cubin cache), GPU "
                << fixed(split_.gpu() / 1000, 1) << " s (load " << fixed(split_.load / 1000, 1) << ", verify "
                << fixed(split_.verify / 1000, 1) << ", measure " << fixed(split_.measure / 1000, 1)
                << "), framework " << fixed(split_.framework / 1000, 1) << " s; " << split_.stopped_early
                << " stopped early by racing\n";
    }
    if (compiles_)
      std::cout << "compile processes: " << compiles_->compiled << " compiles (" << compiles_->same_code
                << " the same code as another), " << fixed(compiles_->compile_s, 1) << " s, short lists and what "
                << "was compiled ahead included; " << compiles_->from_cache << " from the cubin cache\n";
  }
  if (pool_) {
    const double wall = pool_->wall_s + pool_->between_s;
    if (replay_)
      std::cout << "predicted for " << workers_ << (workers_ > 1 ? " GPUs" : " GPU") << " (simulated): wall "
                << fixed(wall, 1) << " s (strategy " << fixed(pool_->strategy_s, 1) << " s; " << pool_->compiles
                << " compiles, " << fixed(pool_->compile_s, 1) << " s of compile processes' time), GPUs busy "
                << fixed(wall > 0 ? 100 * pool_->busy_s / (double(workers_) * wall) : 0.0, 1) << "%\n";
    else
      std::cout << "on " << workers_ << " workers: wall " << fixed(wall, 1) << " s (measuring "
                << fixed(pool_->wall_s, 1) << " s, the strategy alone " << fixed(pool_->between_s, 1)
                << " s), workers busy "
                << fixed(wall > 0 ? 100 * pool_->busy_s / (double(workers_) * wall) : 0.0, 1) << "%\n";
    for (const LostWorker& l : pool_->lost)
      std::cout << "lost worker " << l.index << (l.source.empty() ? "" : " (" + l.source + ")") << ": " << l.reason
                << "; the others measured what it held\n";
  }
  for (const auto& [status, n] : counts_) std::cout << "  " << status << ": " << n << '\n';
}

void TuneReport::print_best(const std::vector<const db::Evaluation*>& r, int top) const {
  const auto& params = spec_->space().parameters();
  // The column ranked by comes first after the configuration. Where it is
  // not the time, the time shown is the median of the samples, the time
  // ktune's metrics are computed from (a recording's own time may be their
  // mean: Kernel Tuner's).
  const size_t shown = std::min(r.size(), static_cast<size_t>(std::max(top, 0)));
  const bool by_time = spec_->objective == "time";
  bool medians = !by_time;
  for (size_t i = 0; i < shown; ++i) medians = medians && !r[i]->samples.empty();
  const std::string ranked = by_time ? "time ms" : spec_->objective == "energy" ? "energy mJ" : spec_->objective;
  std::vector<std::string> header{"#", "configuration", ranked, "vs best"};
  if (!by_time) header.push_back(medians ? "median ms" : "time ms");
  header.push_back("noise");
  if (!confirmed_.empty()) header.push_back("re-measured");
  for (const auto& m : spec_->metrics)
    if (m.name != spec_->objective) header.push_back(m.name);
  // A ratio to the best says how much slower only where every value is
  // positive; a recorded score of -0.39 against a best of -0.33 is told as
  // the difference.
  bool positive = true;
  for (size_t i = 0; i < shown; ++i) positive = positive && *objective_of(*spec_, *r[i]) > 0;
  std::vector<std::vector<Value>> values;
  for (const Parameter& p : params) values.push_back(p.values);
  std::vector<std::string> names;
  for (const Parameter& p : params) names.push_back(p.name);
  const ConfigColumns columns(names, values);
  const bool metric = std::any_of(spec_->metrics.begin(), spec_->metrics.end(),
                                  [&](const Metric& m) { return m.name == spec_->objective; });
  Table t(header);
  for (size_t i = 0; i < shown; ++i) {
    const db::Evaluation& e = *r[i];
    const double value = *objective_of(*spec_, e), best = *objective_of(*spec_, *r[0]);
    std::vector<std::string> row{std::to_string(i + 1), columns.key(e.config),
                                 by_time                        ? fixed(value, 4)
                                 : spec_->objective == "energy" ? fixed(1000 * value, 3)
                                 : metric                       ? fixed(value, 1)
                                                                : fixed(value, 4)};
    if (positive) row.push_back(fixed(100 * share_of_best(*spec_, value, best), 1) + "%");
    else row.push_back(fixed(value - best, 4));
    if (!by_time) {
      if (medians) row.push_back(fixed(median_of(e.samples), 4));
      else row.push_back(e.time_ms ? fixed(*e.time_ms, 4) : "-");
    }
    const std::optional<double> noise = noise_of(e);
    row.push_back(noise ? fixed(100 * *noise, 1) + "% of " + std::to_string(e.sample_count) : "-");
    if (!confirmed_.empty()) {
      auto it = confirmed_.find(config_key(e.config));
      row.push_back(it == confirmed_.end() ? "" : fixed(it->second, 4));
    }
    for (const auto& m : spec_->metrics) {
      if (m.name == spec_->objective) continue;
      auto it = e.metrics.find(m.name);
      row.push_back(it == e.metrics.end() ? "-" : fixed(it->second, 1));
    }
    t.add(row);
  }
  std::cout << "\nbest configurations, ranked by " << (by_time ? "time" : spec_->objective) << " ("
            << (spec_->higher_is_better ? "higher" : "lower") << " is better)\nconfiguration: " << columns.names()
            << "\n";
  if (!columns.left_out().empty()) std::cout << columns.left_out() << '\n';
  t.print(std::cout);
  const std::string swapped = swapped_rows(*spec_, r, shown);
  if (!swapped.empty())
    std::cout << "(rows " << swapped << " differ by less than their measurement noise: the one with the higher "
              << "theoretical occupancy is ranked first)\n";
}

void TuneReport::finish_interrupted(std::ostream& err) {
  err << "ktune: interrupted; " << measured_ << " finished evaluations are stored\n";
}

}  // namespace ktune
