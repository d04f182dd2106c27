#include "db/interchange/kerneltuner.h"

#include <algorithm>
#include <cmath>
#include <string_view>

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

constexpr const char* kErrorNames[] = {"InvalidConfig", "CompilationFailedConfig", "RuntimeFailedConfig"};
constexpr Status kErrorStatus[] = {Status::Invalid, Status::CompileError, Status::RuntimeError};

std::optional<Status> error_status(const Json& v) {
  if (!v.is_string()) return std::nullopt;
  const auto& s = v.get_ref<const std::string&>();
  for (int i = 0; i < 3; ++i)
    if (s == kErrorNames[i]) return kErrorStatus[i];
  return std::nullopt;
}

const char* error_name(Status s) {
  switch (s) {
    case Status::Invalid: return kErrorNames[0];
    case Status::CompileError: return kErrorNames[1];
    default: return kErrorNames[2];
  }
}

// Closes an interrupted file: strip one trailing comma, add "}\n}".
std::string close_interrupted(std::string_view body) {
  auto trim = [&] {
    while (!body.empty() && std::isspace(static_cast<unsigned char>(body.back()))) body.remove_suffix(1);
  };
  trim();
  if (!body.empty() && body.back() == ',') body.remove_suffix(1);
  trim();
  return std::string(body) + "}\n}";
}

// An interrupted run leaves a file cut short, and only then is it repaired:
// damage anywhere before the end is the file's error, at its place.
LocatedJson parse_possibly_interrupted(const std::string& text, const std::string& src, ResultSet& rs) {
  std::optional<Error> error, ignored;
  bool at_end = false, again = false;
  if (auto j = LocatedJson::try_parse(text, src, error, at_end)) return std::move(*j);
  if (!at_end) throw *error;
  if (auto j = LocatedJson::try_parse(close_interrupted(text), src, ignored, again)) {
    rs.truncated = true;
    return std::move(*j);
  }
  // Killed in the middle of writing a record: each record is one line that
  // starts with '\n"', so drop the last one and close again.
  size_t cache = text.find("\"cache\"");
  size_t last = text.rfind("\n\"");
  if (cache != std::string::npos && last != std::string::npos && last > cache) {
    if (auto j = LocatedJson::try_parse(close_interrupted(std::string_view(text).substr(0, last)), src, ignored, again)) {
      rs.truncated = true;
      rs.dropped = 1;
      return std::move(*j);
    }
  }
  throw *error;  // pointing at the original damage
}

[[noreturn]] void refuse(const SourceLocation& where, const std::string& why) { throw Error::bad_input(why, where); }

ProblemSize read_problem_size(const LocatedJson& doc, const Json& j) {
  // Unknown: "callable", or a string (or list holding one) naming a tunable
  // parameter, which sets each configuration's grid (Kernel Tuner's
  // reduction example: "num_blocks").
  if (j.is_null() || j.is_string()) return {};
  if (j.is_array() && std::any_of(j.begin(), j.end(), [](const Json& x) { return x.is_string(); })) return {};
  auto extent = [&](const Json& x) -> int64_t {
    if (auto v = extent_value(x)) return *v;
    refuse(doc.where(x).line ? doc.where(x) : doc.where(j),
           "problem_size extent " + x.dump() + " is not a positive integer below 2^63");
  };
  ProblemSize ps;
  if (j.is_number()) {
    ps.push_back(extent(j));
  } else if (j.is_array()) {
    for (const Json& x : j) ps.push_back(extent(x));
  } else {
    refuse(doc.where(j), "problem_size must be an int, a list of ints, \"callable\" or a parameter's name, not " +
                             j.dump());
  }
  try {
    return canonical_problem_size(ps);
  } catch (const Error& e) {
    refuse(doc.where(j), e.message());
  }
}

// A name the file gives (device_name, kernel_name): absent or a string.
std::string optional_name(const LocatedJson& doc, const Json& header, const char* key) {
  auto it = header.find(key);
  if (it == header.end()) return "";
  if (!it->is_string()) refuse(doc.where(*it), std::string(key) + " must be a string, not " + it->dump());
  return it->get<std::string>();
}

void read_header(const LocatedJson& doc, ResultSet& rs) {
  const Json& j = doc.root();
  auto cache = j.is_object() ? j.find("cache") : j.end();
  if (!j.is_object() || cache == j.end() || !cache->is_object())
    refuse(doc.where(j), "not a Kernel Tuner cache file (no \"cache\" object)");
  rs.format = "kernel-tuner";
  rs.device_name = optional_name(doc, j, "device_name");
  rs.kernel_name = optional_name(doc, j, "kernel_name");
  if (auto ps = j.find("problem_size"); ps != j.end()) rs.problem_size = read_problem_size(doc, *ps);
  const Json no_params = Json::object();
  auto tp_it = j.find("tune_params");
  const Json& tp = tp_it != j.end() ? *tp_it : no_params;
  if (!tp.is_object()) refuse(doc.where(tp), "tune_params must be an object of value lists, not " + tp.dump());
  if (auto keys = j.find("tune_params_keys"); keys != j.end()) {
    if (!keys->is_array()) refuse(doc.where(*keys), "tune_params_keys must be a list of names");
    for (const Json& k : *keys) {
      if (!k.is_string() || k.get_ref<const std::string&>().empty())
        refuse(doc.where(*keys), "tune_params_keys must be a list of names, and holds " + k.dump());
      if (std::find(rs.param_names.begin(), rs.param_names.end(), k.get<std::string>()) != rs.param_names.end())
        refuse(doc.where(*keys), "tune_params_keys names " + k.dump() + " twice");
      rs.param_names.push_back(k.get<std::string>());
    }
  } else {
    for (const auto& [k, v] : tp.items()) rs.param_names.push_back(k);
  }
  for (const std::string& name : rs.param_names) {
    std::vector<Value> domain;
    if (auto values = tp.find(name); values != tp.end()) {
      if (!values->is_array()) refuse(doc.where(*values), "tune_params \"" + name + "\" must be a list of values");
      for (const Json& x : *values) {
        std::optional<Value> v = parameter_value(x);
        if (!v) refuse(doc.where(*values), "tune_params \"" + name + "\" holds " + x.dump() +
                                               ", which is not a number, bool or string");
        domain.push_back(*v);
      }
    }
    rs.param_values.push_back(domain);
  }
  auto obj = j.find("objective");
  if (obj == j.end()) {
    rs.objectives = {"time"};
  } else if (obj->is_string()) {
    rs.objectives = {obj->get<std::string>()};
  } else if (obj->is_array()) {
    for (const Json& o : *obj) {
      if (!o.is_string()) refuse(doc.where(*obj), "objective must be a name or a list of names, and holds " + o.dump());
      rs.objectives.push_back(o.get<std::string>());
    }
  } else {
    refuse(doc.where(*obj), "objective must be a name or a list of names, not " + obj->dump());
  }
  if (rs.objectives.empty()) rs.objectives = {"time"};
}

// Value from the text Kernel Tuner printed in a key (str() of the value).
Value value_from_key_part(const std::string& s, ValueType t) {
  try {
    size_t used = 0;
    if (t == ValueType::Int || t == ValueType::Float) {
      int64_t i = std::stoll(s, &used);
      if (used == s.size()) return Value(i);
    }
    if (t == ValueType::Float) {
      double d = std::stod(s, &used);
      if (used == s.size() && std::isfinite(d)) return Value(d);
    }
  } catch (const std::exception&) {
  }
  if (t == ValueType::Bool && (s == "True" || s == "False")) return Value(s == "True");
  return Value(s);
}

std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> parts(1);
  for (char c : key) {
    if (c == ',') parts.emplace_back();
    else parts.back() += c;
  }
  return parts;
}

// A record's key that is neither a parameter, an observer field nor a metric.
bool is_known_field(const std::string& k) {
  static const char* known[] = {"time", "times", "timestamp", "__error__", "ktune_status", "ktune_reason"};
  if (std::any_of(std::begin(known), std::end(known), [&](const char* n) { return k == n; })) return true;
  for (const EvaluationField& f : evaluation_fields())
    if (!is_observer(f) && *f.kernel_tuner && k == f.kernel_tuner) return true;
  return false;
}

// A time field of the record, when there is one: a number of milliseconds, at
// least 0 (a negative or missing time is no measurement).
std::optional<double> duration(const LocatedJson& doc, const Json& rec, const char* name, const std::string& record) {
  auto it = rec.find(name);
  if (it == rec.end()) return std::nullopt;
  return duration_value(*it, record + ": " + name, doc.where(*it));
}

void read_config(const LocatedJson& doc, const std::string& key, const Json& rec, const ResultSet& rs,
                 const std::string& record, Evaluation& e) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < rs.param_names.size(); ++i) {
    std::optional<Value> v;
    if (auto it = rec.find(rs.param_names[i]); it != rec.end()) {
      v = parameter_value(*it);
      if (!v) refuse(doc.where(*it), record + ": " + rs.param_names[i] + " = " + it->dump() +
                                         " is not a number, bool or string");
    } else {
      if (parts.empty()) parts = split_key(key);
      if (parts.size() != rs.param_names.size())
        refuse(doc.where(rec), record + " has no value for " + rs.param_names[i]);
      v = value_from_key_part(parts[i], rs.param_types[i]);
    }
    e.config.push_back(detail::coerce(*v, rs.param_types[i]));
  }
  // The key is what Kernel Tuner looks a configuration up by, the values what
  // ktune stores: a record where they disagree would be found under one and
  // kept as the other.
  if (const std::string made = config_key(e.config); made != key)
    refuse(doc.where(rec), record + ": its parameter values make the key \"" + made +
                               "\"; a record and its key must name the same configuration");
}

// The tuner's own figures and the timestamp, common to every record.
Evaluation finish_record(const LocatedJson& doc, const Json& rec, const std::string& record, Evaluation e) {
  // The tuner's own figures (compile_time, ...): times are durations, the
  // rest (ktune_stopped_early) numbers.
  for (const EvaluationField& f : evaluation_fields()) {
    if (is_observer(f) || !*f.kernel_tuner) continue;
    auto it = rec.find(f.kernel_tuner);
    if (it == rec.end()) continue;
    if (f.kind != EvaluationField::Kind::Sampling) {
      f.set(e, duration_value(*it, record + ": " + f.kernel_tuner, doc.where(*it)));
    } else if (it->is_number()) {
      f.set(e, it->get<double>());
    } else {
      refuse(doc.where(*it), record + ": " + f.kernel_tuner + " must be a number, not " + it->dump());
    }
  }
  if (auto it = rec.find("timestamp"); it != rec.end()) {
    if (!it->is_string()) refuse(doc.where(*it), record + ": timestamp must be a string, not " + it->dump());
    e.timestamp = it->get<std::string>();
  }
  return e;
}

Evaluation read_record(const LocatedJson& doc, const std::string& key, const Json& rec, const ResultSet& rs) {
  const std::string record = "record \"" + key + "\"";
  if (!rec.is_object()) refuse(doc.where(rec), record + " is not an object");
  Evaluation e;
  read_config(doc, key, rec, rs, record, e);
  std::optional<Status> failed;
  for (const auto& [k, v] : rec.items()) {
    if (std::find(rs.param_names.begin(), rs.param_names.end(), k) != rs.param_names.end()) continue;
    if (!failed) failed = error_status(v);
    if (is_known_field(k) || !v.is_number()) continue;
    if (!take_observer_field(e, k, v.get<double>())) e.metrics[k] = v.get<double>();
  }
  if (auto it = rec.find("ktune_status"); it != rec.end()) {
    std::optional<Status> s = it->is_string() ? status_from_string(it->get<std::string>()) : std::nullopt;
    if (!s) refuse(doc.where(*it), record + ": ktune_status " + it->dump() + " is not a ktune status");
    failed = *s;
  }
  if (failed && *failed != Status::Ok) {
    e.status = *failed;
    if (auto it = rec.find("ktune_reason"); it != rec.end()) {
      if (!it->is_string()) refuse(doc.where(*it), record + ": ktune_reason must be a string, not " + it->dump());
      e.reason = it->get<std::string>();
    }
  } else {
    // A record that failed says so (an error name); any other is a measurement
    // and has its time, or it is refused: never stored as ok without one. A
    // cache of another objective may record that instead (Kernel Tuner's
    // hyper-parameter tuning: `score`, no time); its value is then the
    // measurement, kept with the metrics.
    auto time = rec.find("time");
    const std::string& objective = rs.objectives.front();
    if (time == rec.end() && objective != "time") {
      auto o = rec.find(objective);
      if (o == rec.end() || !o->is_number())
        refuse(doc.where(rec), record + " has neither a time nor a number for the cache's objective '" + objective +
                                   "', and names no failure (__error__)");
      return finish_record(doc, rec, record, std::move(e));
    }
    if (time == rec.end()) refuse(doc.where(rec), record + " has no time and names no failure (__error__)");
    if (!time->is_number())
      refuse(doc.where(*time), record + ": time " + time->dump() +
                                   " is neither a number nor one of Kernel Tuner's failures (InvalidConfig, "
                                   "CompilationFailedConfig, RuntimeFailedConfig)");
    e.time_ms = e.mean_ms = duration(doc, rec, "time", record);
    if (auto it = rec.find("times"); it != rec.end()) {
      if (!it->is_array()) refuse(doc.where(*it), record + ": times must be a list of numbers, not " + it->dump());
      for (size_t i = 0; i < it->size(); ++i)
        e.samples.push_back(
            duration_value((*it)[i], record + ": times[" + std::to_string(i) + "]", doc.where(*it)));
    }
    e.complete_stats();
  }
  return finish_record(doc, rec, record, std::move(e));
}

ResultSet parse_cache(const std::string& text, const std::string& src) {
  ResultSet rs;
  const LocatedJson doc = parse_possibly_interrupted(text, src, rs);
  read_header(doc, rs);
  const Json& cache = doc.root()["cache"];
  if (rs.param_names.empty() && !cache.empty())
    refuse(doc.where(doc.root()), "Kernel Tuner cache names no parameters (no tune_params_keys or tune_params)");
  // Types come from tune_params; without them, from the records' own values.
  for (size_t i = 0; i < rs.param_names.size(); ++i) {
    std::vector<Value> seen = rs.param_values[i];
    if (seen.empty())
      for (const auto& [k, rec] : cache.items())
        if (rec.is_object() && rec.contains(rs.param_names[i]))
          if (auto v = parameter_value(rec[rs.param_names[i]])) seen.push_back(*v);
    rs.param_types.push_back(detail::infer_type(seen));
    for (Value& v : rs.param_values[i]) v = detail::coerce(v, rs.param_types[i]);
  }
  rs.evaluations.reserve(cache.size());
  for (const auto& [key, rec] : cache.items()) rs.evaluations.push_back(read_record(doc, key, rec, rs));
  return rs;
}

}  // namespace

ResultSet parse_kernel_tuner(const std::string& text, const std::string& src) {
  try {
    return parse_cache(text, src);
  } catch (const Json::exception& e) {  // a case the checks above missed: still the file's error, never ktune's
    throw Error::bad_input(std::string("unreadable Kernel Tuner cache: ") + e.what(), SourceLocation{src});
  }
}

ResultSet read_kernel_tuner(const std::string& path) { return parse_kernel_tuner(read_text_file(path), path); }

namespace {

Json record_json(const ResultSet& rs, const Evaluation& e) {
  Json r = Json::object();
  for (size_t i = 0; i < rs.param_names.size() && i < e.config.size(); ++i)
    r[rs.param_names[i]] = detail::to_json(e.config[i]);
  if (e.status == Status::Ok) {
    if (e.mean_ms || e.time_ms) r["time"] = e.mean_ms ? *e.mean_ms : *e.time_ms;
    Json times = Json::array();
    for (double t : e.samples) times.push_back(t);
    r["times"] = times;
  } else {
    r["time"] = error_name(e.status);
    r["__error__"] = error_name(e.status);
  }
  for (const EvaluationField& f : evaluation_fields())
    if (!is_observer(f) && *f.kernel_tuner)
      if (std::optional<double> v = f.get(e)) r[f.kernel_tuner] = *v;
  if (!e.timestamp.empty()) r["timestamp"] = e.timestamp;
  for_each_observer_field(e, [&](const char* name, double v, const char*) { r[name] = detail::number_json(v); });
  for (const auto& [k, v] : e.metrics) r[k] = detail::number_json(v);
  if (e.status == Status::Timeout || e.status == Status::WrongResult) r["ktune_status"] = to_string(e.status);
  if (e.status != Status::Ok && !e.reason.empty()) r["ktune_reason"] = e.reason;
  return r;
}

}  // namespace

std::string format_kernel_tuner(const ResultSet& rs) {
  Json header = Json::object();
  header["device_name"] = rs.device_name;
  header["kernel_name"] = rs.kernel_name;
  if (rs.problem_size.size() == 1) header["problem_size"] = rs.problem_size[0];
  else if (!rs.problem_size.empty()) header["problem_size"] = rs.problem_size;
  header["tune_params_keys"] = rs.param_names;
  Json tp = Json::object();
  auto domains = parameter_domains(rs);
  for (size_t i = 0; i < rs.param_names.size(); ++i) {
    Json vals = Json::array();
    for (const Value& v : domains[i]) vals.push_back(detail::to_json(v));
    tp[rs.param_names[i]] = vals;
  }
  header["tune_params"] = tp;
  if (rs.objectives.size() > 1) header["objective"] = rs.objectives;
  else header["objective"] = rs.objectives.empty() ? "time" : rs.objectives[0];

  // A cache holds one record per key: the latest evaluation wins, at the
  // place of the first.
  std::vector<std::string> order;
  std::map<std::string, const Evaluation*> latest;
  for (const Evaluation& e : rs.evaluations) {
    std::string key = config_key(e.config);
    if (!latest.count(key)) order.push_back(key);
    latest[key] = &e;
  }
  std::string out = "{\n";
  for (const auto& [k, v] : header.items()) out += "  " + Json(k).dump() + ": " + v.dump() + ",\n";
  out += "  \"cache\": {";
  for (size_t i = 0; i < order.size(); ++i)
    out += (i ? ",\n" : "\n") + Json(order[i]).dump() + ": " + record_json(rs, *latest[order[i]]).dump();
  out += "\n}\n}\n";
  return out;
}

void write_kernel_tuner(const ResultSet& rs, const std::string& path) {
  write_text_file(path, format_kernel_tuner(rs));
}

}  // namespace ktune::db
