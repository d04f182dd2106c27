#include "db/interchange/t4.h"

#include <algorithm>
#include <cmath>

#include "db/interchange/json_located.h"
#include "db/json_value.h"
#include "ktune/error.h"

namespace ktune::db {

using detail::duration_value;
using detail::extent_value;
using detail::Json;
using detail::LocatedJson;
using detail::parameter_value;

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
  // "miliseconds": how Kernel Tuner spelled it in the T4 files it wrote from
  // late 2024 (the benchmark hub's recordings have it).
  if (unit == "ms" || unit == "milliseconds" || unit == "miliseconds" || unit.empty()) return 1;
  if (unit == "s" || unit == "seconds") return 1e3;
  if (unit == "us" || unit == "microseconds") return 1e-3;
  if (unit == "ns" || unit == "nanoseconds") return 1e-6;
  throw Error::bad_input("unknown time unit \"" + unit + "\"", where);
}

[[noreturn]] void refuse(const SourceLocation& where, const std::string& why) { throw Error::bad_input(why, where); }

std::optional<double> time_field(const LocatedJson& doc, const Json& times, std::initializer_list<const char*> names,
                                 double factor, const std::string& result, const SourceLocation& where) {
  for (const char* n : names) {
    auto it = times.find(n);
    if (it != times.end())
      return duration_value(*it, result + ": times." + n, doc.where(*it, doc.where(times, where)), factor);
  }
  return std::nullopt;
}

std::string string_field(const LocatedJson& doc, const Json& obj, const char* key, const std::string& what,
                         const SourceLocation& where) {
  auto it = obj.find(key);
  if (it == obj.end()) return "";
  if (!it->is_string()) refuse(doc.where(*it, where), what + "." + key + " must be a string, not " + it->dump());
  return it->get<std::string>();
}

void read_measurements(const LocatedJson& doc, const Json& ms, double factor, const std::string& result,
                       const SourceLocation& where, Evaluation& e) {
  if (!ms.is_array()) refuse(doc.where(ms, where), result + ": measurements must be a list, not " + ms.dump());
  for (size_t i = 0; i < ms.size(); ++i) {
    const Json& m = ms[i];
    const std::string what = result + ": measurements[" + std::to_string(i) + "]";
    if (!m.is_object()) refuse(doc.where(ms, where), what + " must be an object, not " + m.dump());
    auto name = m.find("name");
    auto v = m.find("value");
    if (name == m.end() || !name->is_string()) refuse(doc.where(ms, where), what + " has no name");
    // A failed result's measurement may be the failure's name in place of a
    // number (Kernel Tuner writes "RuntimeFailedConfig", "CompilationFailedConfig"):
    // its reason. A number is what a result that ran must have.
    if (v != m.end() && v->is_string() && e.status != Status::Ok && e.status != Status::WrongResult) {
      if (e.reason.empty()) e.reason = v->get<std::string>();
      continue;
    }
    if (v == m.end() || !v->is_number()) refuse(doc.where(ms, where), what + " has no numeric value");
    const std::string unit = string_field(doc, m, "unit", what, doc.where(ms, where));
    if (*name == "time") {
      e.time_ms = duration_value(*v, what + " (time)", doc.where(ms, where),
                                 unit.empty() ? factor : unit_factor_to_ms(unit, doc.where(ms, where)));
      continue;
    }
    const double value = v->get<double>();
    if (!take_observer_field(e, name->get<std::string>(), value)) e.metrics[name->get<std::string>()] = value;
  }
}

Evaluation read_result(const LocatedJson& doc, const Json& r, const ResultSet& rs, double factor, size_t index) {
  const SourceLocation where = doc.where(r, SourceLocation{doc.source()});
  const std::string result = "results[" + std::to_string(index) + "]";
  if (!r.is_object()) refuse(where, result + " is not an object");
  for (const char* req : {"configuration", "times", "invalidity"})
    if (!r.contains(req)) refuse(where, result + " has no \"" + req + "\"");
  Evaluation e;
  const Json& cfg = r["configuration"];
  if (!cfg.is_object()) refuse(doc.where(cfg, where), result + ": configuration must be an object");
  for (size_t i = 0; i < rs.param_names.size(); ++i) {
    auto it = cfg.find(rs.param_names[i]);
    if (it == cfg.end())
      refuse(doc.where(cfg, where), result + ": configuration has no value for " + rs.param_names[i]);
    std::optional<Value> v = parameter_value(*it);
    if (!v) refuse(doc.where(cfg, where), result + ": " + rs.param_names[i] + " = " + it->dump() +
                                              " is not a number, bool or string");
    e.config.push_back(detail::coerce(*v, rs.param_types[i]));
  }
  const Json& invalidity = r["invalidity"];
  const std::string inv = invalidity.is_string() ? invalidity.get<std::string>() : invalidity.dump();
  auto found = std::find_if(std::begin(kInvalidity), std::end(kInvalidity),
                            [&](const InvalidityName& i) { return invalidity.is_string() && inv == i.name; });
  if (found == std::end(kInvalidity))
    refuse(doc.where(invalidity, where),
           result + ": unknown invalidity " + invalidity.dump() +
               " (expected correct, compile, runtime, constraints, timeout or correctness)");
  e.status = found->status;
  if (auto c = r.find("correctness"); c != r.end()) {
    if (!c->is_number()) refuse(doc.where(*c, where), result + ": correctness must be a number, not " + c->dump());
    if (e.status == Status::Ok && c->get<double>() == 0) e.status = Status::WrongResult;
  }

  const Json& t = r["times"];
  if (!t.is_object()) refuse(doc.where(t, where), result + ": times must be an object, not " + t.dump());
  for (const EvaluationField& f : evaluation_fields())
    if (!is_observer(f) && *f.t4) f.set(e, time_field(doc, t, {f.t4}, factor, result, where));
  // Other producers' spellings of times ktune writes under T4's own names.
  if (!e.compile_ms) e.compile_ms = time_field(doc, t, {"compilation"}, factor, result, where);
  e.benchmark_ms = time_field(doc, t, {"benchmark"}, factor, result, where);
  if (auto it = t.find("runtimes"); it != t.end()) {
    if (!it->is_array()) refuse(doc.where(t, where), result + ": times.runtimes must be a list, not " + it->dump());
    for (size_t i = 0; i < it->size(); ++i)
      e.samples.push_back(duration_value((*it)[i], result + ": times.runtimes[" + std::to_string(i) + "]",
                                         doc.where(t, where), factor));
  }
  if (auto m = r.find("measurements"); m != r.end()) read_measurements(doc, *m, factor, result, where, e);
  // Stored as ok, a result is a measurement: never one without its time, or
  // without its objective where that is another (Kernel Tuner's
  // hyper-parameter tuning: objectives ["score"], a measurement of it, no time).
  if (e.status == Status::Ok && !e.time_ms) {
    std::string objective = "time";
    if (auto o = r.find("objectives"); o != r.end() && o->is_array() && !o->empty() && (*o)[0].is_string())
      objective = (*o)[0].get<std::string>();
    if (objective == "time")
      refuse(where, result + " is correct but has no time measurement (measurements: {\"name\": \"time\", ...})");
    if (!e.metrics.count(objective))
      refuse(where, result + " is correct but has no measurement of its objective '" + objective +
                        "' (measurements: {\"name\": \"" + objective + "\", ...})");
  }
  if (e.status != Status::Ok) {
    e.time_ms.reset();
    e.samples.clear();
  }
  e.complete_stats();
  e.timestamp = string_field(doc, r, "timestamp", result, where);
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
      if (auto val = parameter_value(v)) seen[static_cast<size_t>(pos - rs.param_names.begin())].push_back(*val);
    }
  }
  for (const auto& s : seen) rs.param_types.push_back(detail::infer_type(s));
}

ResultSet parse_results(const std::string& text, const std::string& src) {
  const LocatedJson doc(text, src);
  const Json& j = doc.root();
  if (!j.is_object() || !j.contains("results") || !j["results"].is_array())
    refuse(doc.where(j), "not a T4 results file (no \"results\" list)");
  ResultSet rs;
  rs.format = "t4";
  const Json no_metadata = Json::object();
  const Json& meta = j.contains("metadata") ? j["metadata"] : no_metadata;
  if (!meta.is_object()) refuse(doc.where(meta), "metadata must be an object, not " + meta.dump());
  const SourceLocation meta_where = doc.where(meta, doc.where(j));
  std::string unit = string_field(doc, meta, "timeunit", "metadata", meta_where);
  double factor = unit_factor_to_ms(unit.empty() ? "milliseconds" : unit, meta_where);
  rs.device_name = string_field(doc, meta, "device_name", "metadata", meta_where);
  rs.kernel_name = string_field(doc, meta, "kernel_name", "metadata", meta_where);
  if (auto ps = meta.find("problem_size"); ps != meta.end()) {
    if (!ps->is_array()) refuse(doc.where(*ps, meta_where), "metadata.problem_size must be a list of extents");
    for (const Json& x : *ps) {
      std::optional<int64_t> v = extent_value(x);
      if (!v) refuse(doc.where(*ps, meta_where),
                     "metadata.problem_size extent " + x.dump() + " is not a positive integer below 2^63");
      rs.problem_size.push_back(*v);
    }
    try {
      rs.problem_size = canonical_problem_size(rs.problem_size);
    } catch (const Error& e) {
      refuse(doc.where(*ps, meta_where), e.message());
    }
  }
  const Json& results = j["results"];
  read_parameters(results, rs);
  for (size_t i = 0; i < results.size(); ++i) {
    const Json& r = results[i];
    rs.evaluations.push_back(read_result(doc, r, rs, factor, i));
    if (rs.objectives.empty() && r.contains("objectives") && r["objectives"].is_array())
      for (const Json& o : r["objectives"])
        if (o.is_string()) rs.objectives.push_back(o.get<std::string>());
  }
  if (rs.objectives.empty()) rs.objectives = {"time"};
  return rs;
}

}  // namespace

ResultSet parse_t4(const std::string& text, const std::string& src) {
  try {
    return parse_results(text, src);
  } catch (const Json::exception& e) {  // a case the checks above missed: still the file's error, never ktune's
    throw Error::bad_input(std::string("unreadable T4 file: ") + e.what(), SourceLocation{src});
  }
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
