#include "tuner/tune/configs_from.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "ktune/error.h"
#include "tuner/tune/replay_evaluator.h"

namespace ktune {
namespace {

class ListedStrategy : public Strategy {
 public:
  explicit ListedStrategy(std::vector<Config> configs) : configs_(std::move(configs)) {}
  std::vector<Config> propose(size_t max_batch) override {
    const size_t n = std::min(max_batch, configs_.size() - next_);
    std::vector<Config> out(configs_.begin() + static_cast<std::ptrdiff_t>(next_),
                            configs_.begin() + static_cast<std::ptrdiff_t>(next_ + n));
    next_ += n;
    return out;
  }
  void observe(std::span<const Observation>) override {}

 private:
  std::vector<Config> configs_;
  size_t next_ = 0;
};

std::string joined(const std::set<std::string>& items) {
  std::string s;
  for (const std::string& i : items) s.append(s.empty() ? "" : "; ").append(i);
  return s.empty() ? "none" : s;
}

}  // namespace

std::string ConfigsFrom::describe() const {
  return "the " + std::to_string(configs.size()) + " fastest of " + std::to_string(measured) + " configuration" +
         (measured == 1 ? "" : "s") + " " + device + " measured" +
         (outside ? " (" + std::to_string(outside) + " more not valid in this spec's space)" : "");
}

ConfigsFrom configs_from(const Spec& spec, db::Store& store, const std::string& device, size_t top) {
  const SearchSpace& space = spec.space();
  const db::ProblemSize size = spec_problem_size(spec);
  db::Filter f;
  f.kernel = spec.kernel.name;
  f.sort = db::Filter::Sort::Id;
  // The latest evaluation of each configuration on `device` at this size,
  // its values in the spec's parameter order.
  std::map<std::string, std::pair<std::vector<Value>, std::optional<double>>> latest;
  std::set<std::string> elsewhere;  // "device [size]" holding the kernel, for the message
  for (db::ResultRow& r : store.results(f)) {
    std::vector<Value> values;
    for (const Parameter& p : space.parameters()) {
      const auto it = std::find(r.param_names.begin(), r.param_names.end(), p.name);
      if (it == r.param_names.end() || r.param_names.size() != space.parameters().size()) break;
      values.push_back(r.eval.config.at(size_t(it - r.param_names.begin())));
    }
    if (values.size() != space.parameters().size()) continue;  // another kernel of that name
    if (r.device != device || r.problem_size != size) {
      elsewhere.insert(r.device + " " + db::problem_size_key(r.problem_size));
      continue;
    }
    std::optional<double> time;
    if (r.eval.status == db::Status::Ok) time = r.eval.time_ms;
    latest[r.config_key] = {std::move(values), time};
  }
  ConfigsFrom out;
  out.device = device;
  std::vector<std::pair<double, const std::vector<Value>*>> ranked;
  for (const auto& [key, v] : latest)
    if (v.second) ranked.emplace_back(*v.second, &v.first);
  out.measured = ranked.size();
  if (ranked.empty())
    throw Error::bad_input("configurations from another device: " + device +
                           " has no successful measurement of kernel '" +
                           spec.kernel.name + "' at problem size " + db::problem_size_key(size) +
                           " in " + store.path() + " (it holds the kernel on: " + joined(elsewhere) + ")");
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [time, values] : ranked) {
    if (out.configs.size() == top) break;
    const std::optional<Config> c = space.config_of(*values);
    if (c && space.is_valid(*c)) out.configs.push_back(*c);
    else ++out.outside;
  }
  if (out.configs.empty())
    throw Error::bad_input("configurations from another device: none of the configurations " + device +
                           " measured is valid in the spec's space (" + spec.path + ")");
  return out;
}

ListedConfigs configs_listed_in(const Spec& spec, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error::bad_input(path + ": cannot read the list of configurations");
  nlohmann::json list;
  try {
    list = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error::bad_input(path + ": not JSON: " + e.what());
  }
  if (!list.is_array()) throw Error::bad_input(path + ": expected a JSON list of configurations");
  const SearchSpace& space = spec.space();
  const auto& params = space.parameters();
  ListedConfigs out;
  for (size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& entry = list[i];
    const std::string where = path + ": configuration " + std::to_string(i + 1);
    if (!entry.is_object()) throw Error::bad_input(where + ": expected an object of parameter: value");
    for (const auto& [name, value] : entry.items())
      if (space.parameter_index(name) < 0) throw Error::bad_input(where + ": unknown parameter '" + name + "'");
    std::vector<Value> values;
    std::string text;
    for (const auto& p : params) {
      const auto it = entry.find(p.name);
      if (it == entry.end()) throw Error::bad_input(where + ": no value for parameter '" + p.name + "'");
      if (it->is_boolean()) {
        values.emplace_back(it->get<bool>());
      } else if (it->is_number_integer()) {
        values.emplace_back(it->get<int64_t>());
      } else if (it->is_number()) {
        values.emplace_back(it->get<double>());
      } else if (it->is_string()) {
        values.emplace_back(it->get<std::string>());
      } else {
        throw Error::bad_input(where + ": the value of '" + p.name + "' is no number, bool or string");
      }
      text.append(text.empty() ? "" : ", ").append(p.name + "=" + values.back().str());
    }
    const std::optional<Config> c = space.config_of(values);
    if (!c) throw Error::bad_input(where + " (" + text + "): a value is not in its parameter's list");
    if (!space.is_valid(*c)) {
      if (!out.outside++) out.first_outside = text;
      continue;
    }
    out.configs.push_back(*c);
  }
  return out;
}

std::unique_ptr<Strategy> listed_strategy(std::vector<Config> configs) {
  return std::make_unique<ListedStrategy>(std::move(configs));
}

}  // namespace ktune
