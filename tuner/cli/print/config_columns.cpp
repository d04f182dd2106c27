#include "tuner/cli/print/config_columns.h"

#include <algorithm>

namespace ktune {

ConfigColumns::ConfigColumns(std::vector<std::string> names, const std::vector<std::vector<Value>>& values)
    : names_(std::move(names)), shown_(names_.size(), true), fixed_values_(names_.size()) {
  bool any_varies = false;
  for (size_t i = 0; i < names_.size() && i < values.size(); ++i) {
    std::vector<std::string> distinct;
    for (const Value& v : values[i])
      if (std::find(distinct.begin(), distinct.end(), v.str()) == distinct.end()) distinct.push_back(v.str());
    if (distinct.size() == 1) {
      shown_[i] = false;
      fixed_values_[i] = distinct.front();
    } else {
      any_varies = true;
    }
  }
  if (!any_varies) std::fill(shown_.begin(), shown_.end(), true);
}

ConfigColumns ConfigColumns::of_rows(std::vector<std::string> names, const std::vector<std::vector<Value>>& configs) {
  std::vector<std::vector<Value>> values(names.size());
  if (configs.size() >= 2)
    for (const std::vector<Value>& c : configs)
      for (size_t i = 0; i < values.size() && i < c.size(); ++i) values[i].push_back(c[i]);
  return ConfigColumns(std::move(names), values);
}

std::string ConfigColumns::key(const std::vector<Value>& config) const {
  std::string key;
  for (size_t i = 0; i < config.size(); ++i) {
    if (i < shown_.size() && !shown_[i]) continue;
    if (!key.empty()) key += ',';
    key += config[i].str();
  }
  return key;
}

std::string ConfigColumns::names() const {
  std::string out;
  for (size_t i = 0; i < names_.size(); ++i)
    if (shown_[i]) out += (out.empty() ? "" : ",") + names_[i];
  return out;
}

std::string ConfigColumns::left_out() const {
  std::string out;
  for (size_t i = 0; i < names_.size(); ++i)
    if (!shown_[i]) out += (out.empty() ? "" : ", ") + names_[i] + "=" + fixed_values_[i];
  return out.empty() ? out : "the same in every configuration, not shown: " + out;
}

}  // namespace ktune
