#include "db/t4.h"

#include <algorithm>
#include <cmath>

#include "db/json_value.h"
#include "ktune/error.h"

namespace ktune::db {

using detail::Json;

namespace {

struct InvalidityName {
  const char* name;
  Status status;
};
constexpr InvalidityName kInvalidity[] = {{"correct", Status::Ok},         {"compile", Status::CompileError},
                                          {"runtime", Status::RuntimeError}, {"constraints", Status::Invalid},
                                          {"timeout", Status::Timeout},      {"correctness", Status::WrongResult}};

const char* invalidity_name(Status s) {
  for (const auto& i : kInvalidity)
    if (i.status == s) return i.name;
  return "runtime";
}

double unit_factor_to_ms(const std::string& unit, const SourceLocation& where) {
  if (unit == "ms" || unit == "milliseconds" || unit.empty()) return 1;
  if (unit == "s" || unit == "seconds") return 1e3;
  if (unit == "us" || unit == "microseconds") return 1e-3;
  if (unit == "ns" || unit == "nanoseconds") return 1e-6;
  throw Error::bad_input("unknown time unit \"" + unit + "\"", where);
}

std::optional<double> time_field(const Json& times, std::initializer_list<const char*> names, double factor) {
  for (const char* n : names) {
    auto it = times.find(n);
    if (it != times.end() && it->is_number()) return it->get<double>() * factor;
  }
  return std::nullopt;
}

void read_measurements(const Json& ms, double factor, const SourceLocation& where, Evaluation& e) {
  for (const Json& m : ms) {
    if (!m.is_object() || !m.contains("name") || !m["name"].is_string()) continue;
    auto v = m.find("value");
    if (v == m.end() || !v->is_number()) continue;
    std::string name = m["name"].get<std::string>();
    double value = v->get<double>();
    if (name == "time") {
      std::string unit = m.value("unit", "");
      e.time_ms = value * (unit.empty() ? factor : unit_factor_to_ms(unit, where));
    } else if (!take_observer_field(e, name, value)) {
      e.metrics[name] = value;
    }
  }
}

Evaluation read_result(const Json& r, const ResultSet& rs, double factor, const SourceLocation& where) {
  for (const char* req : {"configuration", "times", "invalidity"})
    if (!r.contains(req)) throw Error::bad_input(std::string("result has no \"") + req + "\"", where);
  Evaluation e;
  const Json& cfg = r["configuration"];
  for (size_t i = 0; i < rs.param_names.size(); ++i) {
    auto it = cfg.find(rs.param_names[i]);
    std::optional<Value> v = it != cfg.end() ? detail::value_from_json(*it) : std::nullopt;
    if (!v) throw Error::bad_input("configuration has no value for " + rs.param_names[i], where);
    e.config.push_back(detail::coerce(*v, rs.param_types[i]));
  }
  std::string inv = r["invalidity"].is_string() ? r["invalidity"].get<std::string>() : "";
  auto found = std::find_if(std::begin(kInvalidity), std::end(kInvalidity),
                            [&](const InvalidityName& i) { return inv == i.name; });
  if (found == std::end(kInvalidity))
    throw Error::bad_input("unknown invalidity \"" + inv +
                               "\" (expected correct, compile, runtime, constraints, timeout or correctness)",
                           where);
  e.status = found->status;
  if (e.status == Status::Ok && r.contains("correctness") && r["correctness"].is_number() &&
      r["correctness"].get<double>() == 0)
    e.status = Status::WrongResult;

  const Json& t = r["times"];
  for (const EvaluationField& f : evaluation_fields())
    if (!is_observer(f) && *f.t4) f.set(e, time_field(t, {f.t4}, factor));
  // Other producers' spellings of times ktune writes under T4's own names.
  if (!e.compile_ms) e.compile_ms = time_field(t, {"compilation"}, factor);
  e.benchmark_ms = time_field(t, {"benchmark"}, factor);
  if (auto it = t.find("runtimes"); it != t.end() && it->is_array())
    for (const Json& x : *it)
      if (x.is_number()) e.samples.push_back(x.get<double>() * factor);
  if (r.contains("measurements") && r["measurements"].is_array())
    read_measurements(r["measurements"], factor, where, e);
  if (e.status != Status::Ok) {
    e.time_ms.reset();
    e.samples.clear();
  }
  e.complete_stats();
  e.timestamp = r.value("timestamp", "");
  return e;
}

// Parameter names in order of first appearance; types from all values seen.
void read_parameters(const Json& results, ResultSet& rs) {
  std::vector<std::vector<Value>> seen;
  for (const Json& r : results) {
    if (!r.is_object() || !r.contains("configuration") || !r["configuration"].is_object()) continue;
    for (const auto& [k, v] : r["configuration"].items()) {
      auto pos = std::find(rs.param_names.begin(), rs.param_names.end(), k);
      if (pos == rs.param_names.end()) {
        rs.param_names.push_back(k);
        seen.emplace_back();
        pos = rs.param_names.end() - 1;
      }
      if (auto val = detail::value_from_json(v)) seen[static_cast<size_t>(pos - rs.param_names.begin())].push_back(*val);
    }
  }
  for (const auto& s : seen) rs.param_types.push_back(detail::infer_type(s));
}

}  // namespace

ResultSet parse_t4(const std::string& text, const std::string& src) {
  Json j = detail::parse_json(text, src);
  if (!j.is_object() || !j.contains("results") || !j["results"].is_array())
    throw Error::bad_input("not a T4 results file (no \"results\" list)", {src});
  ResultSet rs;
  rs.format = "t4";
  const Json meta = j.value("metadata", Json::object());
  double factor = unit_factor_to_ms(meta.value("timeunit", "milliseconds"), {src});
  rs.device_name = meta.value("device_name", "");
  rs.kernel_name = meta.value("kernel_name", "");
  if (meta.contains("problem_size") && meta["problem_size"].is_array()) {
    for (const Json& x : meta["problem_size"])
      if (x.is_number_integer()) rs.problem_size.push_back(x.get<int64_t>());
    rs.problem_size = canonical_problem_size(rs.problem_size);
  }
  const Json& results = j["results"];
  read_parameters(results, rs);
  for (size_t i = 0; i < results.size(); ++i) {
    SourceLocation where{src + " (results[" + std::to_string(i) + "])"};
    const Json& r = results[i];
    if (!r.is_object()) throw Error::bad_input("result is not an object", where);
    rs.evaluations.push_back(read_result(r, rs, factor, where));
    if (rs.objectives.empty() && r.contains("objectives") && r["objectives"].is_array())
      for (const Json& o : r["objectives"])
        if (o.is_string()) rs.objectives.push_back(o.get<std::string>());
  }
  if (rs.objectives.empty()) rs.objectives = {"time"};
  return rs;
}

ResultSet read_t4(const std::string& path) { return parse_t4(read_text_file(path), path); }

namespace {

Json result_json(const ResultSet& rs, const Evaluation& e) {
  Json r = Json::object();
  if (!e.timestamp.empty()) r["timestamp"] = e.timestamp;
  Json cfg = Json::object();
  for (size_t i = 0; i < rs.param_names.size() && i < e.config.size(); ++i)
    cfg[rs.param_names[i]] = detail::to_json(e.config[i]);
  r["configuration"] = cfg;
  Json times = Json::object();
  for (const EvaluationField& f : evaluation_fields())
    if (!is_observer(f) && *f.t4)
      if (std::optional<double> v = f.get(e)) times[f.t4] = *v;
  Json runtimes = Json::array();
  for (double x : e.samples) runtimes.push_back(x);
  times["runtimes"] = runtimes;
  r["times"] = times;
  r["invalidity"] = invalidity_name(e.status);
  r["correctness"] = e.status == Status::WrongResult ? 0 : 1;
  Json ms = Json::array();
  if (e.time_ms) ms.push_back({{"name", "time"}, {"value", *e.time_ms}, {"unit", "ms"}});
  for_each_observer_field(e, [&](const char* name, double v, const char* unit) {
    ms.push_back({{"name", name}, {"value", detail::number_json(v)}, {"unit", unit}});
  });
  for (const auto& [k, v] : e.metrics) ms.push_back({{"name", k}, {"value", detail::number_json(v)}, {"unit", ""}});
  r["measurements"] = ms;
  r["objectives"] = rs.objectives.empty() ? std::vector<std::string>{"time"} : rs.objectives;
  return r;
}

}  // namespace

std::string format_t4(const ResultSet& rs) {
  Json j = Json::object();
  j["schema_version"] = "1.0.0";
  Json meta = Json::object();
  meta["timeunit"] = "milliseconds";
  if (!rs.device_name.empty()) meta["device_name"] = rs.device_name;
  if (!rs.kernel_name.empty()) meta["kernel_name"] = rs.kernel_name;
  if (!rs.problem_size.empty()) meta["problem_size"] = rs.problem_size;
  j["metadata"] = meta;
  Json results = Json::array();
  for (const Evaluation& e : rs.evaluations) results.push_back(result_json(rs, e));
  j["results"] = results;
  return j.dump(1) + "\n";
}

void write_t4(const ResultSet& rs, const std::string& path) { write_text_file(path, format_t4(rs)); }

}  // namespace ktune::db
