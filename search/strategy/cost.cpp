#include "search/strategy/cost.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

namespace ktune {

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::MaxFevals: return "max_fevals";
    case StopReason::TimeLimit: return "time_limit";
    case StopReason::StrategyDone: return "strategy_done";
    case StopReason::SpaceExhausted: return "space_exhausted";
    case StopReason::NoProgress: return "no_progress";
    case StopReason::Interrupted: return "interrupted";
  }
  return "unknown";
}

CostLayer::CostLayer(const SearchSpace& space, Budget budget, EvaluateEach evaluate, bool higher_is_better,
                     CostOptions options)
    : space_(&space),
      budget_(budget),
      evaluate_(std::move(evaluate)),
      higher_is_better_(higher_is_better),
      options_(std::move(options)) {
  if (options_.batch_size == 0) options_.batch_size = 1;
  if (options_.max_stale_proposals == 0) options_.max_stale_proposals = 1;
}

namespace {

std::vector<EvalOutcome> checked(const CostLayer::Evaluate& f, std::span<const Config> cs) {
  std::vector<EvalOutcome> out = f(cs);
  if (out.size() != cs.size())
    throw Error::failed("internal: evaluation returned " + std::to_string(out.size()) + " results for " +
                        std::to_string(cs.size()) + " configurations");
  return out;
}

}  // namespace

// Without a time limit the whole batch goes to `evaluate` at once (it may
// batch work); with one, a configuration at a time, so that none is measured
// after the limit.
CostLayer::CostLayer(const SearchSpace& space, Budget budget, Evaluate evaluate, bool higher_is_better,
                     CostOptions options)
    : CostLayer(space, budget,
                EvaluateEach([f = std::move(evaluate), timed = budget.time_limit_s > 0](std::span<const Config> cs,
                                                                                       const Done& done) {
                  if (!timed) {
                    const std::vector<EvalOutcome> out = checked(f, cs);
                    for (size_t i = 0; i < out.size(); ++i) done(i, out[i]);
                    return;
                  }
                  for (size_t i = 0; i < cs.size(); ++i)
                    if (!done(i, checked(f, cs.subspan(i, 1)).front())) return;
                }),
                higher_is_better, std::move(options)) {}

void CostLayer::seed(const Config& config, const EvalOutcome& outcome) {
  // A result for a configuration this space does not allow is not knowledge
  // about this space (e.g. restrictions changed since it was measured).
  if (config.size() != space_->parameters().size() || !space_->is_valid(config)) return;
  known_.emplace(config, outcome);
}

std::optional<double> CostLayer::internal(std::optional<double> user) const {
  if (!user || !std::isfinite(*user)) return std::nullopt;
  return higher_is_better_ ? -*user : *user;
}

double CostLayer::elapsed(const RunResult& r, double start) const {
  return options_.clock ? options_.clock() - start : r.elapsed_s;
}

bool CostLayer::budget_left(const RunResult& r, double start) const {
  if (budget_.max_fevals && r.fevals >= budget_.max_fevals) return false;
  if (budget_.time_limit_s > 0 && elapsed(r, start) >= budget_.time_limit_s) return false;
  return !options_.cancel.requested();
}

StopReason CostLayer::spent(const RunResult& r, double start) const {
  if (budget_.max_fevals && r.fevals >= budget_.max_fevals) return StopReason::MaxFevals;
  if (budget_.time_limit_s > 0 && elapsed(r, start) >= budget_.time_limit_s) return StopReason::TimeLimit;
  return StopReason::Interrupted;
}

void CostLayer::record(RunResult& r, const Config& c, const EvalOutcome& o, bool seeded, double start,
                       const OnTrace& on_trace) {
  std::optional<double> score = o.score && std::isfinite(*o.score) ? o.score : std::nullopt;
  cache_[c] = Cached{score};
  ++r.fevals;
  if (!seeded) r.elapsed_s += std::max(o.cost_s, 0.0);
  if (score && (!r.best_score || *internal(score) < *internal(r.best_score))) {
    r.best_score = score;
    r.best_config = c;
  }
  TraceEntry e{c, score, r.fevals, options_.clock ? elapsed(r, start) : r.elapsed_s, r.best_score, seeded};
  if (on_trace) on_trace(e);
  r.trace.push_back(std::move(e));
}

void CostLayer::evaluate_new(RunResult& r, std::vector<Config>& fresh, double start, const OnTrace& on_trace) {
  if (fresh.empty()) return;
  std::vector<bool> told(fresh.size(), false);
  evaluate_(fresh, [&](size_t i, const EvalOutcome& o) {
    if (i >= fresh.size() || told[i])
      throw Error::failed("internal: evaluation reported configuration " + std::to_string(i) + " of a batch of " +
                          std::to_string(fresh.size()) + (i < fresh.size() ? " twice" : ""));
    told[i] = true;
    record(r, fresh[i], o, false, start, on_trace);
    return budget_left(r, start);
  });
}

RunResult CostLayer::run(Strategy& strategy, const OnTrace& on_trace) {
  RunResult r;
  cache_.clear();
  unrecorded_.clear();
  const double start = options_.clock ? options_.clock() : 0.0;
  try {
    r.stop = search(strategy, r, start, on_trace);
  } catch (const Cancelled&) {
    // Seen inside an evaluation or a proposal: what finished is the result.
    if (!options_.cancel.requested()) throw;
    r.stop = spent(r, start);
  }
  if (options_.ahead) options_.ahead({});
  r.elapsed_s = elapsed(r, start);
  return r;
}

StopReason CostLayer::search(Strategy& strategy, RunResult& r, double start, const OnTrace& on_trace) {
  const uint64_t valid = options_.recorded ? options_.recorded_count : space_->count_valid();
  uint64_t stale = 0;
  spare_n_ = std::min(kMaxSpare, 8 * options_.batch_size * std::max<size_t>(1, options_.workers));
  std::vector<Config> spare;  // named with the batch before
  const bool beside = options_.beside && !budget_.max_fevals;
  for (;;) {
    if (cache_.size() >= valid) return StopReason::SpaceExhausted;
    if (!budget_left(r, start)) return spent(r, start);
    const uint64_t before = r.fevals;
    std::vector<Config> batch = beside ? propose_beside(strategy, r, spare, start, on_trace)
                                       : strategy.propose(options_.batch_size);
    ++r.proposals;
    if (batch.empty()) return StopReason::StrategyDone;
    // A proposal takes time on a wall clock (model_rank compiles features):
    // when that spent the budget, or a cancel came meanwhile, nothing of the
    // batch starts.
    if ((options_.clock || options_.cancel.requested()) && !budget_left(r, start)) return spent(r, start);
    std::vector<Config> fresh;
    std::unordered_set<Config, ConfigHash> in_batch;
    std::vector<Config> unrecorded;
    for (const Config& c : batch) {
      if (c.size() != space_->parameters().size() || !space_->is_valid(c))
        throw Error::failed("internal: the strategy proposed an invalid configuration " +
                            (c.size() == space_->parameters().size() ? space_->config_key(c) : std::string("(wrong size)")));
      if (cache_.count(c) || unrecorded_.count(c)) {
        ++r.cache_hits;
      } else if (auto k = known_.find(c); k != known_.end()) {
        if (budget_left(r, start)) record(r, c, {k->second.score, 0.0}, true, start, on_trace);
      } else if (options_.recorded && !options_.recorded(c)) {
        unrecorded.push_back(c);
      } else if (in_batch.insert(c).second) {
        fresh.push_back(c);
      }
    }
    size_t new_unrecorded = 0;  // news to the strategy too, though not evaluations
    for (const Config& c : unrecorded)
      if (unrecorded_.insert(c).second) {
        ++r.not_recorded, ++new_unrecorded;
        if (options_.not_recorded) options_.not_recorded(c);
      }
    if (budget_.max_fevals && fresh.size() > budget_.max_fevals - r.fevals)
      fresh.resize(budget_.max_fevals - r.fevals);
    if (!budget_left(r, start)) fresh.clear();
    stale = fresh.empty() && new_unrecorded == 0 && r.fevals == before ? stale + 1 : 0;
    if (beside) spare = spares_of(strategy, in_batch);
    if (options_.ahead) {
      std::vector<Config> next = ahead_of(strategy, r, in_batch, fresh.size());
      std::unordered_set<Config, ConfigHash> named(next.begin(), next.end());
      for (const Config& c : spare)
        if (named.insert(c).second) next.push_back(c);
      options_.ahead(next);
    }
    if (beside && options_.workers > 1)
      evaluate_beside(strategy, r, fresh, spare, start, on_trace);
    else
      evaluate_new(r, fresh, start, on_trace);
    std::vector<Observation> obs;
    for (const Config& c : batch) {
      if (unrecorded_.count(c)) {
        obs.push_back({c, std::nullopt});
        continue;
      }
      auto it = cache_.find(c);
      if (it == cache_.end()) break;  // truncated by the budget: the run ends
      obs.push_back({c, internal(it->second.score)});
    }
    strategy.observe(obs);
    if (stale >= options_.max_stale_proposals) return StopReason::NoProgress;
  }
}

bool CostLayer::unevaluated(const Config& c) const {
  return !cache_.count(c) && !known_.count(c) && !unrecorded_.count(c) && (!options_.recorded || options_.recorded(c));
}

CostLayer::BesideResult CostLayer::beside(const std::function<std::vector<Config>()>& work, bool batch,
                                          RunResult& r, const std::vector<Config>& spare, double start,
                                          const OnTrace& on_trace) {
  BesideResult out;
  std::vector<Config> fill;
  for (const Config& c : spare)
    if (unevaluated(c)) fill.push_back(c);
  CostOptions::Beside b;
  b.propose = work;
  b.batch = batch;
  b.spare = fill;
  b.wanted = [&](const Config& c) {
    return c.size() == space_->parameters().size() && space_->is_valid(c) && unevaluated(c);
  };
  b.report = [&](const Config& c, const EvalOutcome& o) {
    if (!b.wanted(c)) throw Error::failed("internal: a configuration measured beside the proposal was not wanted");
    out.measured.push_back(c);
    ++r.beside;
    record(r, c, o, false, start, on_trace);
    return budget_left(r, start);
  };
  b.time_left = [&] {
    return budget_.time_limit_s > 0 && options_.clock ? start + budget_.time_limit_s - options_.clock()
                                                      : std::numeric_limits<double>::infinity();
  };
  out.proposal = options_.beside(b);
  const std::unordered_set<Config, ConfigHash> named(fill.begin(), fill.end());
  for (const Config& c : out.measured) out.spares_measured += named.count(c);
  return out;
}

void CostLayer::observe_measured(Strategy& strategy, const std::vector<Config>& measured) {
  std::vector<Observation> obs;
  for (const Config& c : measured) obs.push_back({c, internal(cache_.at(c).score)});
  if (!obs.empty()) strategy.observe(obs);
}

void CostLayer::evaluate_beside(Strategy& strategy, RunResult& r, std::vector<Config>& fresh,
                                const std::vector<Config>& spare, double start, const OnTrace& on_trace) {
  batch_spares_measured_ = 0;
  if (fresh.empty() || !budget_left(r, start)) return evaluate_new(r, fresh, start, on_trace);
  const BesideResult got = beside(
      [&] {
        evaluate_new(r, fresh, start, on_trace);
        return std::vector<Config>{};
      },
      true, r, spare, start, on_trace);
  batch_spares_measured_ = got.spares_measured;
  observe_measured(strategy, got.measured);
}

std::vector<Config> CostLayer::propose_beside(Strategy& strategy, RunResult& r, const std::vector<Config>& spare,
                                              double start, const OnTrace& on_trace) {
  if (!budget_left(r, start)) return strategy.propose(options_.batch_size);
  const size_t named = spare.size();
  const BesideResult got = beside([&] { return strategy.propose(options_.batch_size); }, false, r, spare, start, on_trace);
  observe_measured(strategy, got.measured);
  // As many spares as the proposals (and the batches' tails) take the time to measure.
  const size_t measured = got.spares_measured + batch_spares_measured_;
  batch_spares_measured_ = 0;
  if (measured >= named && named >= spare_n_)
    spare_n_ = std::min(kMaxSpare, 2 * spare_n_);
  else if (4 * measured < named)
    spare_n_ = std::max(std::min(kMaxSpare, options_.batch_size * std::max<size_t>(1, options_.workers)), spare_n_ / 2);
  return got.proposal;
}

std::vector<Config> CostLayer::spares_of(Strategy& strategy, const std::unordered_set<Config, ConfigHash>& in_batch) {
  const size_t room = spare_n_;
  std::vector<Config> out;
  std::unordered_set<Config, ConfigHash> seen;
  for (Config& c : strategy.spare(room)) {
    if (out.size() >= room) break;
    if (c.size() != space_->parameters().size() || !space_->is_valid(c))
      throw Error::failed("internal: the strategy named an invalid spare configuration");
    if (!unevaluated(c) || in_batch.count(c)) continue;
    if (seen.insert(c).second) out.push_back(std::move(c));
  }
  return out;
}

std::vector<Config> CostLayer::ahead_of(Strategy& strategy, const RunResult& r,
                                        const std::unordered_set<Config, ConfigHash>& in_batch, size_t measuring) {
  std::vector<Config> out;
  uint64_t room = options_.batch_size;
  if (budget_.max_fevals) room = std::min<uint64_t>(room, budget_.max_fevals - std::min(budget_.max_fevals, r.fevals + measuring));
  if (room == 0 || measuring == 0) return out;
  std::unordered_set<Config, ConfigHash> seen;
  for (Config& c : strategy.upcoming(static_cast<size_t>(room))) {
    if (out.size() >= room) break;
    if (c.size() != space_->parameters().size() || !space_->is_valid(c)) continue;
    if (!unevaluated(c) || in_batch.count(c)) continue;
    if (seen.insert(c).second) out.push_back(std::move(c));
  }
  return out;
}

}  // namespace ktune
