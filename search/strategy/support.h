// What every strategy shares, private to the strategy files.
//
// StrategyDef describes one strategy (name, summary, typed options with
// defaults and ranges, factory); the registry (search/registry.cpp) turns the
// list of defs into strategy_catalog() and validates options in
// make_strategy(). StrategyBase keeps the memory of every result the strategy
// has heard, the seeded RNG, and turns "waves" into batches: a strategy only
// implements next_wave(), which is called when every configuration of the
// previous wave has a result in memory. Configurations already known are
// dropped from a wave before it is proposed (the strategy reads their scores
// from memory), so proposals contain only new configurations. Geometry maps
// configurations to value-index coordinates and snaps continuous points back
// to the nearest valid configuration, for the continuous strategies.
#pragma once

#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "search/strategy/strategy.h"

namespace ktune::strategy_detail {

using ConfigSet = std::unordered_set<Config, ConfigHash>;

enum class OptionKind { Int, Float, Bool, Choice };

struct OptionSpec {
  std::string name;
  OptionKind kind = OptionKind::Int;
  Value default_value;
  double min = -std::numeric_limits<double>::infinity();  // Int and Float: inclusive range
  double max = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices;  // Choice only
  std::string help;
};

struct StrategyDef {
  std::string name;
  std::string summary;
  std::vector<OptionSpec> options;
  std::unique_ptr<Strategy> (*make)(const StrategyContext& ctx) = nullptr;
  size_t preferred_batch = 8;  // StrategyInfo::preferred_batch
  bool batch_per_worker = false;  // StrategyInfo::batch_per_worker
  // Options named MEMBER.OPTION are let through unchecked, for the strategy to
  // hand to its member MEMBER (whose own options check them).
  bool member_options = false;
};

// One per strategy file of this folder, for the catalogue (search/registry.cpp);
// those of evolve/, model/ and search/ are declared in their own folders
// (evolve/evolve.h, model/model.h, search/combined.h).
StrategyDef brute_force_def();
StrategyDef random_sample_def();
StrategyDef simulated_annealing_def();
StrategyDef mls_def();
StrategyDef greedy_ils_def();
StrategyDef vnd_def();

// Typed reads of options that make_strategy() has validated and defaulted.
int64_t opt_int(const StrategyContext& ctx, std::string_view name);
double opt_float(const StrategyContext& ctx, std::string_view name);
bool opt_bool(const StrategyContext& ctx, std::string_view name);
const std::string& opt_choice(const StrategyContext& ctx, std::string_view name);
NeighbourKind opt_neighbour(const StrategyContext& ctx, std::string_view name);
// The `neighbour` option of the local searches (its value read by opt_neighbour).
OptionSpec neighbour_option(const std::string& default_kind);
// The option giving sample_edges() its `edge`: `edges` of random_sample,
// `explore_edges` of portfolio.
OptionSpec edges_option(const std::string& name, double default_edge);

constexpr double kFailed = std::numeric_limits<double>::infinity();
// Compile features asked for at a time: one round of a 16-process compile pool.
constexpr size_t kFeatureChunk = 16;
// A short list of n asks for n and a quarter more first (the spares for what
// the compiler condemns), then kFeatureChunk at a time: the proposal waits
// for every compile it asked for, and the members of a portfolio ask in one
// round, so a first ask of kFeatureChunk each made that round three or four
// waves of a 16-process pool, most of them compiles never measured.
inline size_t first_feature_ask(size_t n) { return std::min(kFeatureChunk, n + (n + 3) / 4); }

// A result's score for ranking: kFailed when it failed or is not finite.
inline double ranking_score(const Observation& o) {
  return o.score && std::isfinite(*o.score) ? *o.score : kFailed;
}

class StrategyBase : public Strategy {
 public:
  explicit StrategyBase(const StrategyContext& ctx);
  std::vector<Config> propose(size_t max_batch) final;
  void observe(std::span<const Observation> results) final;
  // What screened() compiled and found clean but did not take, not known
  // yet, the latest short lists first: the model's next choices, compiled.
  std::vector<Config> spare(size_t n) override;

 protected:
  // Next configurations to try. REQUIRES (guaranteed by the base): every
  // configuration returned by earlier waves has a result in memory, or the run
  // ended. May return known ones (they are dropped and read from memory).
  // An empty wave means the strategy is done.
  virtual std::vector<Config> next_wave(size_t max_batch) = 0;

  const SearchSpace& space() const { return *space_; }
  const StrategyContext& context() const { return ctx_; }
  std::mt19937_64& rng() { return rng_; }

  // Known: has a result, or is proposed and awaiting one.
  bool known(const Config& c) const { return results_.count(c) || pending_.count(c); }
  // Score for ranking: the result, kFailed when failed or not (yet) known.
  double score(const Config& c) const;
  size_t num_results() const { return results_.size(); }
  size_t num_successes() const { return successes_; }
  // Best successful configuration heard so far.
  const std::optional<Config>& best() const { return best_; }
  double best_score() const { return best_score_; }
  // Results in the order they were heard (config, score or kFailed).
  const std::vector<std::pair<Config, double>>& history() const { return history_; }

  uint64_t valid_count() const { return valid_count_; }
  // Small enough to address by index and scan.
  bool indexable() const { return valid_count_ <= (uint64_t{1} << 22); }
  // Up to n distinct valid configurations not known yet (fewer when fewer remain).
  std::vector<Config> sample_unknown(size_t n);
  // Up to n distinct valid configurations not known yet, each parameter of
  // more than two values at its first or last value (either, evenly) with
  // probability `edge`, at any value otherwise; uniform ones (sample_unknown)
  // where such draws keep missing (every corner measured or ruled out).
  // On kernels published by others the fastest configuration lies at the
  // ends of the value lists (the widest block, the longest tile, no
  // padding) more often than uniform draws reach them; on ktune's own
  // templates less often (docs/strategies.md, "The default: portfolio").
  std::vector<Config> sample_edges(size_t n, double edge);
  // Valid neighbours not known yet, shuffled.
  std::vector<Config> unknown_neighbours(const Config& c, NeighbourKind kind);
  // Compile features (StrategyContext::features), asked for once per
  // configuration: learn_features() asks for those of `configs` not asked
  // for before or answered as pending (not known yet), in one batch (on a
  // GPU host, one parallel compile); features() is what was learnt of one
  // (asking for it alone if never asked; a pending answer stays until
  // learn_features() asks again, so a proposal does not wait for it).
  void learn_features(std::span<const Config> configs);
  const StaticFeatures& features(const Config& c);
  bool features_known(const Config& c) const { return features_.count(c) > 0; }
  // The first `n` of `ordered` that the compile does not condemn (no failure
  // to compile, no spills), their features learnt a chunk at a time; the
  // first `n` without features or when every one is condemned.
  // The clean ones it compiled and did not take are kept for spare().
  std::vector<Config> screened(std::vector<Config> ordered, size_t n);
  // Kept for spare(), ahead of those kept before, in this order: compiled
  // clean (or pending), not proposed.
  void keep_spare(std::span<const Config> configs);
  // With a prior (StrategyContext::prior: the same kernel measured
  // elsewhere), a first design from its best tenth, at least `n`
  // configurations of it: its best first, the rest in random order. Empty
  // without a prior.
  std::vector<Config> prior_design(size_t n);
  // How many configurations a first design of `requested` gets: at most
  // max_fevals/8 and 1/15 of the space (at least 2 of each), at least 1, so
  // that small budgets and small spaces are not spent on the design alone.
  size_t design_size(size_t requested) const;
  // The next wave of a first design of `size` configurations: what is left
  // of `prior` (prior_design()'s picks; known ones are dropped from it),
  // then random ones, those the compile condemns passed over; as many as the
  // design has left, or a whole batch while nothing has succeeded after it.
  // Without a prior, on a space that is the whole product of its values,
  // the design is a Latin hypercube (latin_hypercube()) instead of random.
  std::vector<Config> design_wave(size_t max_batch, size_t size, std::vector<Config>& prior);
  // `n` configurations in which each parameter's values are spread evenly:
  // its value list cut into n strata, one point in each (a random value
  // inside the stratum), the strata of the parameters matched at random.
  // Only for a space that is the whole product of its values (every point
  // valid); on a restricted space the points would have to be moved to
  // valid ones, towards the restrictions' edges, and a uniform random design
  // samples it as it is.
  std::vector<Config> latin_hypercube(size_t n);
  // Every combination of values is valid (no restriction rules one out).
  bool whole_product() const;
  // A random sample of up to `size` new configurations that persists in
  // `reserve` between steps: known ones are dropped and only the 16 oldest
  // renewed a step, so the sample drifts over the space instead of being
  // redrawn and candidates a model ranked close stay in view for the next
  // step. Returned shuffled.
  std::vector<Config> drifting_sample(std::vector<Config>& reserve, size_t size);
  // Appends the unknown Hamming neighbours of the `k` best successful
  // configurations (where the optimum most likely is) that are not in `pool` yet.
  void add_neighbours_of_best(std::vector<Config>& pool, size_t k);

 private:
  std::vector<Config> scan_unknown(size_t n, const ConfigSet& exclude);

  StrategyContext ctx_;
  const SearchSpace* space_;
  std::mt19937_64 rng_;
  uint64_t valid_count_;
  std::unordered_map<Config, double, ConfigHash> results_;
  ConfigSet pending_;
  std::deque<Config> queue_;
  std::vector<std::pair<Config, double>> history_;
  std::optional<Config> best_;
  double best_score_ = kFailed;
  size_t successes_ = 0;
  bool design_planned_ = false;  // design_wave() has decided its first design
  std::unordered_map<Config, StaticFeatures, ConfigHash> features_;
  std::deque<Config> spare_;  // keep_spare()'s, newest first
};

// Value-index coordinates and snapping to valid configurations.
class Geometry {
 public:
  explicit Geometry(const SearchSpace& space);
  size_t dims() const { return sizes_.size(); }
  // Number of values of parameter d.
  uint32_t size(size_t d) const { return sizes_[d]; }
  std::vector<double> point(const Config& c) const;
  // The valid configuration nearest to x (Euclidean in index units; x is
  // clamped to the box first). Ties go to the rng. Never returns an invalid one.
  Config snap(std::span<const double> x, std::mt19937_64& rng) const;

 private:
  Config snap_by_scan(std::span<const double> x, std::mt19937_64& rng) const;
  Config snap_by_descent(std::span<const double> x, std::mt19937_64& rng) const;
  double distance2(const Config& c, std::span<const double> x) const;

  const SearchSpace* space_;
  std::vector<uint32_t> sizes_;
  std::vector<uint32_t> table_;  // flattened valid configs when small enough to scan
};

// Uniform double in [0, 1) from the rng (portable, unlike uniform_real_distribution).
double unit(std::mt19937_64& rng);
// Uniform integer in [0, n) (portable across standard libraries).
uint64_t below(std::mt19937_64& rng, uint64_t n);
template <class T>
void shuffle(std::vector<T>& v, std::mt19937_64& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(rng, i)]);
}

}  // namespace ktune::strategy_detail
