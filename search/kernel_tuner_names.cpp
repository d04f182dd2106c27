// Kernel Tuner's strategy and option names, as its users write them in
// tune_kernel(strategy=..., strategy_options=...), resolved to ktune's.
#include <cctype>
#include <cmath>

#include "ktune/error.h"
#include "search/registry.h"

namespace ktune {

namespace {

using Options = std::map<std::string, Value, std::less<>>;

struct Alias {
  std::string_view kernel_tuner, ktune;
  std::string_view fixed_option, fixed_value;  // an option the alias implies ("" for none)
};

// Kernel Tuner strategies with a ktune counterpart.
constexpr Alias kAliases[] = {
    {"firefly_algorithm", "firefly", "", ""},
    {"greedy_mls", "mls", "", ""},
    {"ordered_greedy_mls", "mls", "neighbour", "adjacent"},
};

// Kernel Tuner strategies ktune does not have, and the closest it has.
constexpr std::pair<std::string_view, std::string_view> kNoCounterpart[] = {
    {"dual_annealing", "simulated_annealing"}, {"basinhopping", "greedy_ils"}, {"minimize", "mls"},
    {"hybrid_vndx", "vnd"},                    {"adaptive_tabu_greywolf", "model_rank"}};

// Option names Kernel Tuner uses for the same thing under another name.
struct OptionAlias {
  std::string_view strategy, kernel_tuner, ktune;
};
constexpr OptionAlias kOptionAliases[] = {
    {"pso", "popsize", "swarm_size"},     {"simulated_annealing", "T", "T_start"},
    {"genetic_algorithm", "method", "crossover"}, {"mls", "neighbor", "neighbour"},
    {"greedy_ils", "neighbor", "neighbour"},      {"simulated_annealing", "neighbor", "neighbour"},
    {"bayes_opt", "method", "acquisition"},
};

// Options Kernel Tuner has and ktune's strategies do without: the run's budget
// is max_fevals / time_limit, not iterations.
constexpr std::string_view kDropped[] = {"maxiter", "order", "randomize", "random_walk", "fraction",
                                         "covariancekernel", "covariancelengthscale", "samplingmethod"};

Value lower_choice(const Value& v) {
  if (!v.is_string()) return v;
  std::string s = v.as_string();
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return Value(s);
}

}  // namespace

ResolvedStrategy resolve_strategy(const std::string& name, Options options) {
  ResolvedStrategy out{name, {}, {}};
  for (const auto& [kt, closest] : kNoCounterpart)
    if (kt == name)
      throw Error::bad_input("strategy '" + name + "' is Kernel Tuner's and has no counterpart in ktune; the closest is '" +
                             std::string(closest) + "' (ktune strategies list)");
  const Alias* alias = nullptr;
  for (const Alias& a : kAliases)
    if (a.kernel_tuner == name) alias = &a;
  if (alias) {
    out.name = std::string(alias->ktune);
    out.notes.push_back("strategy '" + name + "' (Kernel Tuner's name) is ktune's '" + out.name + "'");
  }
  for (auto& [key, value] : options) {
    std::string k = key;
    Value v = value;
    for (const OptionAlias& o : kOptionAliases)
      if (o.strategy == out.name && o.kernel_tuner == key) k = std::string(o.ktune);
    bool dropped = false;
    for (std::string_view d : kDropped) dropped = dropped || d == key;
    if (dropped) {
      out.notes.push_back("strategy option '" + key +
                          "' (Kernel Tuner's) is not used: the run's budget (evaluations, time limit) is given "
                          "apart from the strategy");
      continue;
    }
    if (out.name == "genetic_algorithm" && key == "mutation_chance") {  // Kernel Tuner: 1 in mutation_chance
      if (!v.is_number() || v.as_float() < 1)
        throw Error::bad_input("strategy option 'mutation_chance' must be a number >= 1 (Kernel Tuner's 1 in N)");
      k = "mutation_rate";
      v = Value(1.0 / v.as_float());
    }
    if (k == "neighbour") v = lower_choice(v);  // Kernel Tuner writes "Hamming"
    if (k != key) out.notes.push_back("strategy option '" + key + "' (Kernel Tuner's) read as '" + k + "'");
    if (out.options.count(k))
      throw Error::bad_input("strategy option '" + k + "' is given twice (as '" + key + "' and under its own name)");
    out.options[k] = v;
  }
  if (alias && !alias->fixed_option.empty() && !out.options.count(alias->fixed_option))
    out.options[std::string(alias->fixed_option)] = Value(std::string(alias->fixed_value));
  return out;
}

}  // namespace ktune
