// JSON spellings shared by the commands' --json output: values keep their
// Python type (int, float, bool, string), configurations are objects keyed by
// parameter name, and integers beyond 64 bits stay exact.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "db/roofline.h"
#include "search/space/space.h"
#include "search/expr/value.h"

namespace ktune::cli {

// Ordered, so configurations list their parameters in the spec's order.
using Json = nlohmann::ordered_json;

Json to_json(const Value& v);
// An unsigned integer from its decimal text; beyond 64 bits a double (the text
// is reported beside it where exactness matters).
Json big_integer_json(const std::string& decimal);
Json config_json(const SearchSpace& space, const Config& c);
Json configs_json(const SearchSpace& space, const std::vector<Config>& cs);
// A roofline position (db/roofline.h): only the members that are known.
Json roofline_json(const db::Roofline& r);

}  // namespace ktune::cli
