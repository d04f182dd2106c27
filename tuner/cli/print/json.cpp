#include "tuner/cli/print/json.h"

#include <charconv>

#include "db/json_value.h"

namespace ktune::cli {

Json to_json(const Value& v) { return db::detail::to_json(v); }

Json big_integer_json(const std::string& decimal) {
  uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(decimal.data(), decimal.data() + decimal.size(), n);
  if (ec == std::errc() && ptr == decimal.data() + decimal.size()) return n;
  return std::stod(decimal);
}

Json config_json(const SearchSpace& space, const Config& c) {
  Json j = Json::object();
  const auto values = space.values(c);
  for (size_t i = 0; i < values.size(); ++i) j[space.parameters()[i].name] = to_json(values[i]);
  return j;
}

Json configs_json(const SearchSpace& space, const std::vector<Config>& cs) {
  Json a = Json::array();
  for (const Config& c : cs) a.push_back(config_json(space, c));
  return a;
}

}  // namespace ktune::cli
