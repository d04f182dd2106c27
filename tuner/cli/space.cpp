// `ktune space SPEC`: the parameters, the Cartesian size, the exact number of
// valid configurations and how long counting took; optionally a sample.
#include <CLI/CLI.hpp>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "tuner/cli/cli.h"
#include "tuner/cli/print/json.h"
#include "tuner/spec/spec.h"
#include "tuner/cli/print/table.h"

namespace ktune::cli {
namespace {

struct SpaceOptions {
  std::string spec;
  std::vector<std::string> sets;  // --set NAME=VALUE: spec constants overridden
  bool json = false;
  size_t sample = 0;
  uint64_t seed = 1;
};

std::string abbreviated_values(const Parameter& p) {
  std::string s;
  for (size_t i = 0; i < p.values.size(); ++i) {
    if (i == 6 && p.values.size() > 8) {
      s += ", ... " + p.values.back().repr();
      break;
    }
    s += (i ? ", " : "") + p.values[i].repr();
  }
  return "[" + s + "]";
}

int run_space(const SpaceOptions& o) {
  const Spec spec = load_spec(o.spec, set_option(o.sets));
  for (const std::string& n : spec.notes) std::cerr << "ktune: note: " << n << '\n';
  const SearchSpace& space = spec.space();
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t valid = space.count_valid();
  const double count_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  for (const std::string& n : restriction_notes(spec)) std::cerr << "ktune: note: " << n << '\n';
  std::vector<Config> samples;
  if (o.sample > 0 && valid > 0) {
    std::mt19937_64 rng(o.seed);
    samples = space.sample(o.sample, rng, true);
  }
  if (o.json) {
    Json j = Json::object();
    j["spec"] = spec.path;
    j["kernel"] = spec.kernel.name;
    j["parameters"] = Json::array();
    for (const Parameter& p : space.parameters()) {
      Json values = Json::array();
      for (const Value& v : p.values) values.push_back(to_json(v));
      j["parameters"].push_back({{"name", p.name}, {"type", type_name(p.type)}, {"values", values}});
    }
    j["restrictions"] = Json::array();
    for (const auto& r : spec.restrictions) j["restrictions"].push_back(r.text());
    j["device_limits"] = spec.device_limits;
    j["cartesian"] = big_integer_json(space.cartesian_size());
    j["cartesian_exact"] = space.cartesian_size();
    j["valid"] = valid;
    j["count_ms"] = count_ms;
    if (!samples.empty()) j["sample"] = configs_json(space, samples);
    std::cout << j.dump(2) << '\n';
  } else {
    std::cout << "spec:        " << spec.path << "\nkernel:      " << spec.kernel.name << "\n\n";
    Table t({"parameter", "type", "values", "count"});
    for (const Parameter& p : space.parameters())
      t.add({p.name, type_name(p.type), abbreviated_values(p), std::to_string(p.values.size())});
    t.print(std::cout);
    std::cout << "\nrestrictions: " << spec.restrictions.size() << '\n';
    for (const auto& r : spec.restrictions) std::cout << "  " << r.text() << '\n';
    for (const std::string& l : spec.device_limits) std::cout << "device limit: " << l << '\n';
    std::cout << "cartesian:   " << space.cartesian_size() << '\n'
              << "valid:       " << valid << "  (counted in " << fixed(count_ms, 1) << " ms)\n";
    if (!samples.empty()) {
      std::cout << "\nsample (seed " << o.seed << "):\n";
      for (const Config& c : samples) std::cout << "  " << space.config_key(c) << '\n';
    }
  }
  if (valid == 0) {
    std::cerr << "ktune: " << spec.path << ": no valid configuration: every configuration breaks a restriction\n";
    return 1;
  }
  return 0;
}

}  // namespace

void add_space_command(CLI::App& app, CommandResult& result) {
  auto o = std::make_shared<SpaceOptions>();
  CLI::App* sub = app.add_subcommand("space", "Show a spec's search space: parameters, Cartesian size, valid count");
  sub->add_option("spec", o->spec, "tuning spec (YAML or T1 JSON)")->required();
  sub->add_option("--set", o->sets, "override a constant of the spec: NAME=VALUE (repeatable)");
  sub->add_flag("--json", o->json, "machine-readable output");
  sub->add_option("--sample", o->sample, "also print N uniformly sampled valid configurations");
  sub->add_option("--seed", o->seed, "seed for --sample");
  sub->callback([o, &result] { result.exit_status = run_space(*o); });
}

}  // namespace ktune::cli
