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

Json roofline_json(const db::Roofline& r) {
  Json j = {{"dram_bytes", r.dram_bytes}, {"dram_gbs", r.dram_gbs}};
  if (r.flop_per_byte) j["flop_per_byte"] = *r.flop_per_byte;
  if (r.gflops) j["gflops"] = *r.gflops;
  if (!r.bound.empty()) j["bound"] = r.bound;
  if (r.of_roof) j["of_roof"] = *r.of_roof;
  return j;
}

}  // namespace ktune::cli
