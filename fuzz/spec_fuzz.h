// Loading a spec from fuzzed text and using it as the commands do.
#pragma once

#include <string>

#include "tuner/spec/spec.h"

namespace ktune::fuzz {

// Spaces up to this many combinations are counted and walked; larger ones
// only sampled, so that one input stays well under libFuzzer's time limit.
constexpr double kMaxWalked = 4096;

inline void load_and_use(const std::string& text, Spec::Format format) {
  // A folder that does not exist: files the spec names are missing (notes),
  // never read, so an input cannot reach the machine's files.
  const std::string path = format == Spec::Format::Yaml ? "/nonexistent-ktune-fuzz/spec.yaml"
                                                        : "/nonexistent-ktune-fuzz/spec.json";
  const Spec spec = load_spec_text(text, path, format);
  const SearchSpace& space = spec.space();
  if (space.cartesian_size_approx() > kMaxWalked) return;
  const uint64_t valid = space.count_valid();
  (void)restriction_notes(spec);
  for (uint64_t i = 0; i < valid && i < 64; ++i) {
    const std::vector<Value> config = space.values(space.at(i));
    const LaunchResult launch = spec.geometry(config);
    if (launch.ok()) (void)spec.defines(config, *launch.launch);
    (void)spec.name_expression(config);
    (void)spec.evaluate_metrics(config, 1.5);
    (void)space.config_key(space.at(i));
  }
}

}  // namespace ktune::fuzz
