// `ktune strategies compare --json`: a CompareResult as JSON,
// {"optimum":..., "random_exact":{"10":{"median":...,"mean":...}},
//  "strategies":[{"name":..., "evals_to_fraction":{"0.9":{"median":...}}, ...}]}.
#pragma once

#include <string>

#include "search/compare.h"

namespace ktune {

std::string to_json(const CompareResult& result);

}  // namespace ktune
