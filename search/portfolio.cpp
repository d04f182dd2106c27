// portfolio: two or three strategies taking turns, each told every result.
// The default is forest (a random forest of regression trees: switches that
// pay off only together), tpe (a model of what the best results share) and
// vnd (variable-neighbourhood descent around the best so far, whoever found
// it). A model that fits the space leads; where none does (a rugged space whose good
// configurations are isolated, a needle whose neighbours are 0.7 of it),
// the local search still walks there. With `share: adaptive` (the default)
// each member's share follows how often its proposals improved on the best,
// so the member making progress on this kernel gets more of the budget; with
// `share: fixed` every `every`-th proposal is the second's (three members
// take turns in order). Each member runs with its own defaults, but for a
// shared `initial_samples`. With the defaults it is ktune's default strategy
// (search/registry.cpp).
//
// Members fed each other's results can all polish one region: on Kernel
// Tuner's pnpoly (RTX 3090) the best method for short tiles levels off at
// 0.87 of the optimum, the method that reaches it is the slowest until the
// longest tiles, and every member keeps proposing around 0.87 while random
// search, with 3% of the space at 0.9 or more, gets past it. Random picks
// bring in what no member would try. A share of them costs where the
// members' models are right, so it has to earn its place: `explore` (a
// fifth) of the proposals from the `explore_after`-th on are random picks
// only while, after three, they rank on average at least `explore_bar` (the
// middle) among the results heard before each; picks that land in the slow
// half stop it. Once `stalled_after` results in a row have not improved on
// the best, `explore_stalled` of the proposals are random picks until one
// does, earned or not. A run that still improves
// (the A100 convolution, whose best climbs in steps to 200 evaluations)
// rarely stalls that long; one polishing a trap does at once. The picks put
// each parameter at an end of its value list (`explore_edges`, 1 by
// default) while such corners remain: on kernels published by others the
// fastest configuration sits there more often than uniform picks go (the
// widest block, the longest tile); on ktune's own templates, whose value
// lists bracket the optimum, they are slow, and the earned share stops
// after its three-pick trial. The figures behind each rule:
// docs/strategies.md, "The default: portfolio".
#include <algorithm>
#include <condition_variable>
#include <exception>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <unordered_map>

#include "search/combined.h"
#include "search/feature_rounds.h"
#include "search/registry.h"

namespace ktune::strategy_detail {
namespace {

// The random picks (`explore`, `explore_stalled`): drawn from the
// configurations not measured yet, each parameter of more than two values at
// an end of its list with probability `explore_edges` (sample_edges). With
// compile features (a GPU run) twice as many are drawn and their features
// asked for with the members' (one compile round, so they are compiled
// ahead, as the members' are), and those the compiler condemns (no compile,
// spills) are passed over: random search among what can run well. Where all
// of a draw are condemned (one pick wanted, two drawn, on a space where many
// fail) more are drawn, a few rounds at most; then none is proposed this
// time, and the members' picks fill the batch.
class Explorer final : public StrategyBase {
 public:
  Explorer(const StrategyContext& ctx, double edges) : StrategyBase(ctx), edges_(edges) {}

 private:
  std::vector<Config> next_wave(size_t max_batch) override {
    if (!context().features) return sample_edges(max_batch, edges_);
    ConfigSet drawn;
    std::vector<Config> clean;
    for (int round = 0; round < 4 && clean.size() < max_batch; ++round) {
      std::vector<Config> fresh;
      for (Config& c : sample_edges(2 * (max_batch - clean.size()), edges_))
        if (drawn.insert(c).second) fresh.push_back(std::move(c));
      if (fresh.empty()) break;
      learn_features(fresh);
      std::vector<Config> left;
      for (Config& c : fresh)
        if (const StaticFeatures& f = features(c); f.compiled && f.spill_bytes == 0)
          (clean.size() < max_batch ? clean : left).push_back(std::move(c));
        else if (f.pending)
          left.push_back(std::move(c));  // not known yet: a spare, compiled meanwhile
      keep_spare(left);
    }
    return clean;
  }

 public:
  // The clean draws not proposed, then uniform random picks: what random
  // search would measure. The picks persist until measured, so that what
  // was compiled for them ahead is not thrown away.
  std::vector<Config> spare(size_t n) override {
    std::vector<Config> out = StrategyBase::spare(n);
    ConfigSet in(out.begin(), out.end());
    std::erase_if(reserve_, [&](const Config& c) { return known(c) || in.count(c); });
    for (Config& c : sample_unknown(n > out.size() + reserve_.size() ? n - out.size() - reserve_.size() : 0)) {
      if (!std::count(reserve_.begin(), reserve_.end(), c) && !in.count(c)) reserve_.push_back(std::move(c));
    }
    for (const Config& c : reserve_) {
      if (out.size() >= n) break;
      out.push_back(c);
    }
    return out;
  }

 private:
  double edges_;
  std::vector<Config> reserve_;  // spare()'s random picks
};

class Portfolio final : public Strategy {
 public:
  explicit Portfolio(const StrategyContext& ctx)
      : every_(static_cast<size_t>(opt_int(ctx, "every"))),
        adaptive_(opt_choice(ctx, "share") == "adaptive"),
        explore_(opt_float(ctx, "explore")),
        explore_after_(static_cast<size_t>(opt_int(ctx, "explore_after"))),
        explore_bar_(opt_float(ctx, "explore_bar")),
        explore_stalled_(opt_float(ctx, "explore_stalled")),
        stalled_after_(static_cast<size_t>(opt_int(ctx, "stalled_after"))) {
    std::vector<std::string> names = {opt_choice(ctx, "first"), opt_choice(ctx, "second")};
    if (const std::string& third = opt_choice(ctx, "third"); third != "none") names.push_back(third);
    // The members share what the compile said of a configuration: on a GPU
    // host each answer is a round trip to the compile workers.
    if (ctx.features) rounds_ = std::make_shared<FeatureRounds>(ctx.features);
    uint64_t seed = ctx.seed;
    size_t member = 0;
    const auto member_context = [&] {
      StrategyContext m = ctx;
      m.features = nullptr;
      if (rounds_)
        m.features = [rounds = rounds_, i = member](std::span<const Config> cs) { return rounds->ask(i, cs); };
      ++member;
      m.options.clear();
      m.seed = seed;
      seed = seed * 0x9E3779B97F4A7C15ULL + 1;
      return m;
    };
    // MEMBER.OPTION: the member's own option (its checks apply), for every
    // member of that name; a name that is no member is refused.
    std::map<std::string, std::map<std::string, Value, std::less<>>, std::less<>> own;
    for (const auto& [key, value] : ctx.options) {
      const size_t dot = key.find('.');
      if (dot == std::string::npos) continue;
      if (std::find(names.begin(), names.end(), key.substr(0, dot)) == names.end()) {
        std::string list;
        for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
        throw Error::bad_input("strategy 'portfolio': option '" + key + "' names no member (its members: " + list + ")");
      }
      own[key.substr(0, dot)][key.substr(dot + 1)] = value;
    }
    for (const std::string& name : names) {
      StrategyContext m = member_context();
      // One initial design for all: each member counts every result heard, so
      // the design ends when the results of all reach it.
      if (const int64_t n = opt_int(ctx, "initial_samples"); n > 0 && has_option(name, "initial_samples"))
        m.options["initial_samples"] = Value(n);
      if (auto it = own.find(name); it != own.end())
        for (const auto& [option, value] : it->second) m.options[option] = value;
      members_.push_back(make_strategy(name, m));
    }
    if (explores()) members_.push_back(std::make_unique<Explorer>(member_context(), opt_float(ctx, "explore_edges")));
    given_.assign(members_.size(), 0);
    credit_.assign(members_.size(), 0);
  }

  static bool has_option(const std::string& strategy, const std::string& option) {
    for (const auto& [name, what] : strategy_info(strategy).options)
      if (name == option) return true;
    return false;
  }

  // Adaptive shares split a batch (a GPU run's 8) slot by slot, each slot to
  // the member then furthest below its share, so that every member proposes
  // with what the last batch taught it; fixed shares give a batch to one
  // member. With `explore`, every (1/explore)-th slot from the
  // `explore_after`-th proposal on, counted across batches, is a random pick
  // instead, outside the shares, while the picks earn it; while stalled,
  // `explore_stalled` is the share if it is larger. A configuration two
  // members propose is measured once.
  std::vector<Config> propose(size_t max_batch) override {
    ++turn_;
    std::vector<size_t> slots(members_.size(), 0);
    std::vector<double> given = given_;
    const bool by_slot = adaptive_ && every_ != 0;
    const size_t fixed = by_slot ? 0 : whose_turn(turn_, given_);
    const double before = std::accumulate(given_.begin(), given_.end(), 0.0);
    for (size_t k = 0; k < max_batch; ++k) {
      if (const double share = exploring(before + double(k)); share > 0 && (explored_ += share) >= 1) {
        explored_ -= 1;
        ++slots.back();
        continue;
      }
      const size_t i = by_slot ? whose_turn(turn_, given) : fixed;
      ++slots[i];
      given[i] += 1;
    }
    // The members with a share of the batch propose at once (their compile
    // features in shared rounds); what they propose is taken in member order.
    std::vector<std::vector<Config>> proposed(members_.size());
    std::vector<std::function<void()>> jobs;
    for (size_t i = 0; i < members_.size(); ++i)
      if (slots[i] > 0) jobs.push_back([&, i] { proposed[i] = members_[i]->propose(slots[i]); });
    if (rounds_ && jobs.size() > 1)
      rounds_->run(std::move(jobs));
    else
      for (auto& job : jobs) job();
    std::vector<Config> out;
    ConfigSet in_batch;
    for (size_t i = 0; i < members_.size(); ++i) add(i, std::move(proposed[i]), out, in_batch);
    // A member that is done passes its turn to the others.
    for (size_t i = 0; i < members_.size() && out.empty(); ++i) take(i, max_batch, out, in_batch);
    return out;
  }

  // The hint of the member whose turn comes next.
  std::vector<Config> upcoming(size_t n) override { return members_[whose_turn(turn_ + 1, given_)]->upcoming(n); }

  // The members' leftovers taken in turn (the first of each, then the
  // second of each, ...), then the explorer's (its clean draws, then random
  // picks).
  std::vector<Config> spare(size_t n) override {
    const size_t members = members_.size() - (explores() ? 1 : 0);
    std::vector<std::vector<Config>> each;
    for (size_t i = 0; i < members; ++i) each.push_back(members_[i]->spare(n));
    std::vector<Config> out = in_turn(each, n);
    ConfigSet seen(out.begin(), out.end());
    if (explores())
      for (Config& c : members_.back()->spare(n))
        if (out.size() < n && seen.insert(c).second) out.push_back(std::move(c));
    return out;
  }

  void observe(std::span<const Observation> results) override {
    for (const Observation& o : results) {
      const double s = ranking_score(o);
      auto it = owner_.find(o.config);
      if (it != owner_.end()) {
        // Credit: the member whose proposal improved on the best so far.
        if (s < best_) credit_[it->second] += 1;
        if (ranks_picks() && it->second == members_.size() - 1) {
          // A random pick's rank: the share of the results heard before it
          // that it beats (a failure beats none).
          const auto worse = heard_.end() - std::upper_bound(heard_.begin(), heard_.end(), s);
          picks_rank_ += heard_.empty() ? 0.5 : double(worse) / double(heard_.size());
          ++picks_;
        }
        owner_.erase(it);
      }
      if (ranks_picks()) heard_.insert(std::upper_bound(heard_.begin(), heard_.end(), s), s);
      since_best_ = s < best_ ? 0 : since_best_ + 1;
      best_ = std::min(best_, s);
    }
    for (auto& m : members_) m->observe(results);
  }

 private:
  // Whether random picks can be due at all, and their share now.
  bool explores() const { return explore_ > 0 || (explore_stalled_ > 0 && stalled_after_ > 0); }
  // Whether `explore`'s share depends on the picks' ranks (else none is kept).
  bool ranks_picks() const { return explore_ > 0 && explore_bar_ > 0; }
  // `proposed`: the proposals made before this one.
  double exploring(double proposed) const {
    const bool earned = picks_ < kExploreTrial || picks_rank_ / double(picks_) >= explore_bar_;
    const double share = proposed >= double(explore_after_) && earned ? explore_ : 0;
    const bool stalled = stalled_after_ > 0 && since_best_ >= stalled_after_;
    return stalled ? std::max(share, explore_stalled_) : share;
  }
  static constexpr size_t kExploreTrial = 3;  // random picks before `explore_bar` applies

  // Fixed shares: every `every`-th turn is the second member's (with a third,
  // the members take turns in order). Adaptive shares: each member's share of
  // the proposals follows its share of the improvements on the best so far
  // (each starting at one improvement in two proposals), none below half of
  // an equal share (a quarter of two, a sixth of three), so that no member
  // starves; the turn goes to the member furthest below its share, the first
  // on a tie (it opens: a prior's picks).
  size_t whose_turn(size_t turn, const std::vector<double>& given_by) const {
    const size_t n = members_.size() - (explores() ? 1 : 0);
    if (every_ == 0) return 0;
    if (!adaptive_) return n == 2 ? (turn % every_ == 0 ? 1 : 0) : (turn - 1) % n;
    std::vector<double> share(n);
    double total = 0;
    for (size_t i = 0; i < n; ++i) total += share[i] = (credit_[i] + 1) / (given_by[i] + 2);
    if (n == 2) {  // the same rule, written as for two members first, so that their runs stay as they were
      const double second = std::clamp(share[1] / (share[0] + share[1]), 0.25, 0.75);
      return given_by[1] < second * (given_by[0] + given_by[1]) ? 1 : 0;
    }
    for (double& s : share) s /= total;
    // Raise those below the floor to it and scale the rest down to make room.
    const double floor = 0.5 / double(n);
    std::vector<bool> held(n, false);
    for (bool changed = true; changed;) {
      changed = false;
      double free_share = 1, rest = 0;
      for (size_t i = 0; i < n; ++i) held[i] ? free_share -= floor : rest += share[i];
      for (size_t i = 0; i < n; ++i)
        if (!held[i]) share[i] *= free_share / rest;
      for (size_t i = 0; i < n; ++i)
        if (!held[i] && share[i] < floor) held[i] = changed = true, share[i] = floor;
    }
    const double given = std::accumulate(given_by.begin(), given_by.begin() + long(n), 0.0);
    size_t pick = 0;
    for (size_t i = 1; i < n; ++i)
      if (share[i] * given - given_by[i] > share[pick] * given - given_by[pick]) pick = i;
    return pick;
  }

  // Member i's proposal of up to n, less what the batch holds already.
  void take(size_t i, size_t n, std::vector<Config>& out, ConfigSet& in_batch) {
    add(i, members_[i]->propose(n), out, in_batch);
  }

  void add(size_t i, std::vector<Config> proposed, std::vector<Config>& out, ConfigSet& in_batch) {
    for (Config& c : proposed) {
      if (!in_batch.insert(c).second) continue;
      given_[i] += 1;
      owner_[c] = i;
      out.push_back(std::move(c));
    }
  }

  size_t every_;
  bool adaptive_;
  size_t turn_ = 0;
  std::vector<std::unique_ptr<Strategy>> members_;
  std::shared_ptr<FeatureRounds> rounds_;  // with compile features
  std::vector<double> given_;   // configurations proposed by each member
  std::vector<double> credit_;  // of those, how many improved on the best so far
  double best_ = kFailed;
  double explore_;       // the share of the proposals drawn at random, by the last member
  size_t explore_after_;  // proposals before the first of them
  double explore_bar_;    // the mean rank the picks must keep for that share to hold
  double explore_stalled_;  // that share while stalled
  size_t stalled_after_;    // results in a row without a better one that make a stall (0: never)
  size_t since_best_ = 0;   // results since the best last improved
  std::vector<double> heard_;  // with ranks_picks(): every result's ranking score, in order
  size_t picks_ = 0;           // random picks heard
  double picks_rank_ = 0;      // the sum of their ranks (0 to 1, higher is better)
  double explored_ = 0;  // random proposals due: a slot goes to the last member when this reaches 1
  std::unordered_map<Config, size_t, ConfigHash> owner_;  // proposals awaiting their result
};

}  // namespace

StrategyDef portfolio_def() {
  StrategyDef def{"portfolio",
          "two or three strategies taking turns, each told every result, each member's share following its "
          "improvements on the best; MEMBER.OPTION=V gives a member one of its own options (forest.split_features=1)",
          {{"first", OptionKind::Choice, "forest", 0, 0, {"model_rank", "bayes_opt", "tpe", "forest", "pso", "mls", "greedy_ils", "vnd"},
            "the member that opens (a prior's picks come first)"},
           {"second", OptionKind::Choice, "tpe", 0, 0,
            {"mls", "greedy_ils", "vnd", "tpe", "forest", "pso", "random_sample", "simulated_annealing", "genetic_algorithm",
             "model_rank"},
            "the second member (with `share: fixed`, it takes every `every`-th turn)"},
           {"third", OptionKind::Choice, "vnd", 0, 0,
            {"none", "mls", "greedy_ils", "vnd", "tpe", "forest", "pso", "random_sample", "simulated_annealing",
             "genetic_algorithm", "model_rank"},
            "a third member (none: two members)"},
           {"explore", OptionKind::Float, 0.2, 0, 0.5, {},
            "the share of proposals drawn at random (see `explore_edges`) from the configurations not yet measured, outside "
            "the members' shares, from the `explore_after`-th proposal on while the picks keep `explore_bar` (0: none)"},
           {"explore_after", OptionKind::Int, 20, 0, 1000000, {}, "proposals before the first of `explore`'s random picks"},
           {"explore_bar", OptionKind::Float, 0.5, 0, 1, {},
            "after three random picks, `explore`'s share holds only while their mean rank (the share of the results heard "
            "before each that it beats) is at least this (0: always)"},
           {"explore_stalled", OptionKind::Float, 0.25, 0, 0.5, {},
            "the share of such random picks once `stalled_after` results in a row have not improved on the best, "
            "until one does (0: none)"},
           edges_option("explore_edges", 1.0),
           {"stalled_after", OptionKind::Int, 30, 0, 1000000, {},
            "results in a row without a better one after which `explore_stalled` applies (0: never)"},
           {"every", OptionKind::Int, 2, 0, 1000, {}, "share: fixed, two members: every how many proposals `second` takes (0, either share: the first member alone)"},
           {"initial_samples", OptionKind::Int, 0, 0, 100000, {},
            "random configurations measured first, for all members (0: each member's own default)"},
           {"share", OptionKind::Choice, "adaptive", 0, 0, {"fixed", "adaptive"},
            "fixed: `every` sets the turns; adaptive: each member's share follows how often its proposals improved "
            "on the best so far (at least half of an equal share; `every` 0 still means the first alone)"}},
          [](const StrategyContext& ctx) -> std::unique_ptr<Strategy> { return std::make_unique<Portfolio>(ctx); }};
  def.member_options = true;  // forest.split_features=1 goes to the member forest
  return def;
}

}  // namespace ktune::strategy_detail
