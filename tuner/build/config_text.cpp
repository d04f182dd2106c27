#include "tuner/build/config_text.h"

#include <algorithm>
#include <map>

#include "ktune/error.h"

namespace ktune {

namespace {

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

std::vector<Value> parse_config_option(const Spec& spec, const std::string& text) {
  const auto& params = spec.space().parameters();
  std::map<std::string, std::string> given;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = trim(text.substr(pos, comma - pos));
    pos = comma + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) throw Error::bad_input("configuration: expected name=value, got '" + item + "'");
    given[trim(item.substr(0, eq))] = trim(item.substr(eq + 1));
  }
  // A name that is no parameter first: a misspelt one is what is wrong, not
  // the parameter it leaves without a value.
  for (const auto& [name, value] : given) {
    if (std::any_of(params.begin(), params.end(), [&](const Parameter& p) { return p.name == name; })) continue;
    std::string listed;
    for (const Parameter& p : params) listed += (listed.empty() ? "" : ", ") + p.name;
    throw Error::bad_input("configuration: unknown parameter '" + name + "'; the parameters: " + listed);
  }
  std::vector<Value> values;
  for (const Parameter& p : params) {
    auto it = given.find(p.name);
    if (it == given.end()) throw Error::bad_input("configuration: no value for parameter '" + p.name + "'");
    const Value* match = nullptr;
    for (const Value& v : p.values)
      if (v.str() == it->second || v.repr() == it->second) match = &v;
    if (!match) {
      std::string listed;
      for (const Value& v : p.values) listed += (listed.empty() ? "" : ", ") + v.str();
      throw Error::bad_input("configuration: " + p.name + "=" + it->second + " is not one of its values: " + listed);
    }
    values.push_back(*match);
    given.erase(it);
  }
  return values;
}

}  // namespace ktune
