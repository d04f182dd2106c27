// A configuration of a spec from the text a user writes ("k=v,k=v"), the
// form `ktune compile --config`, `ktune run --config` and `ktune profile
// --config` take before the configuration is built.
#pragma once

#include <string>
#include <vector>

#include "search/expr/value.h"
#include "tuner/spec/spec.h"

namespace ktune {

// Parses "k=v,k=v" into configuration values matching the spec's parameters
// (each value must be one of the parameter's listed values, compared as
// Python's str()). Throws Error::bad_input naming the problem.
std::vector<Value> parse_config_option(const Spec& spec, const std::string& text);

}  // namespace ktune
