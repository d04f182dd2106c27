#include "db/kerneltuner.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "db/json_value.h"
#include "ktune/error.h"

namespace ktune::db {

using detail::Json;

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

Json parse_possibly_interrupted(const std::string& text, const std::string& src, ResultSet& rs) {
  Json j = Json::parse(text, nullptr, false);
  if (!j.is_discarded()) return j;
  rs.truncated = true;
  j = Json::parse(close_interrupted(text), nullptr, false);
  if (!j.is_discarded()) return j;
  // Killed in the middle of writing a record: each record is one line that
  // starts with '\n"', so drop the last one and close again.
  size_t cache = text.find("\"cache\"");
  size_t last = text.rfind("\n\"");
  if (cache != std::string::npos && last != std::string::npos && last > cache) {
    j = Json::parse(close_interrupted(std::string_view(text).substr(0, last)), nullptr, false);
    if (!j.is_discarded()) {
      rs.dropped = 1;
      return j;
    }
  }
  return detail::parse_json(text, src);  // throws, pointing at the original damage
}

ProblemSize read_problem_size(const Json& j, const std::string& src) {
  if (j.is_null() || j.is_string()) return {};  // absent or "callable": unknown
  auto extent = [&](const Json& x) {
    if (x.is_number_integer()) return x.get<int64_t>();
    if (x.is_number_float() && std::floor(x.get<double>()) == x.get<double>())
      return static_cast<int64_t>(x.get<double>());
    throw Error::bad_input("problem_size must hold integers, got " + x.dump(), {src});
  };
  ProblemSize ps;
  if (j.is_number()) {
    ps.push_back(extent(j));
  } else if (j.is_array()) {
    for (const Json& x : j) ps.push_back(extent(x));
  } else {
    throw Error::bad_input("problem_size must be an int, a list or \"callable\", got " + j.dump(), {src});
  }
  try {
    return canonical_problem_size(ps);
  } catch (const Error& e) {
    throw Error::bad_input(e.message(), {src});
  }
}

void read_header(const Json& j, const std::string& src, ResultSet& rs) {
  if (!j.is_object() || !j.contains("cache") || !j["cache"].is_object())
    throw Error::bad_input("not a Kernel Tuner cache file (no \"cache\" object)", {src});
  rs.format = "kernel-tuner";
  rs.device_name = j.value("device_name", "");
  rs.kernel_name = j.value("kernel_name", "");
  rs.problem_size = read_problem_size(j.value("problem_size", Json()), src);
  const Json& tp = j.contains("tune_params") ? j["tune_params"] : Json::object();
  if (j.contains("tune_params_keys")) {
    for (const Json& k : j["tune_params_keys"]) rs.param_names.push_back(k.get<std::string>());
  } else {
    for (const auto& [k, v] : tp.items()) rs.param_names.push_back(k);
  }
  for (const std::string& name : rs.param_names) {
    std::vector<Value> domain;
    if (tp.contains(name) && tp[name].is_array())
      for (const Json& x : tp[name])
        if (auto v = detail::value_from_json(x)) domain.push_back(*v);
    rs.param_values.push_back(domain);
  }
  const Json obj = j.value("objective", Json("time"));
  if (obj.is_string()) rs.objectives = {obj.get<std::string>()};
  else if (obj.is_array())
    for (const Json& o : obj) rs.objectives.push_back(o.get<std::string>());
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
    if (t == ValueType::Float) return Value(std::stod(s));
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

std::optional<double> number(const Json& rec, const char* name) {
  auto it = rec.find(name);
  if (it == rec.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

void read_config(const std::string& key, const Json& rec, const ResultSet& rs, const std::string& src,
                 Evaluation& e) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < rs.param_names.size(); ++i) {
    auto it = rec.find(rs.param_names[i]);
    std::optional<Value> v = it != rec.end() ? detail::value_from_json(*it) : std::nullopt;
    if (!v) {
      if (parts.empty()) parts = split_key(key);
      if (parts.size() != rs.param_names.size())
        throw Error::bad_input("record \"" + key + "\" has no value for " + rs.param_names[i], {src});
      v = value_from_key_part(parts[i], rs.param_types[i]);
    }
    e.config.push_back(detail::coerce(*v, rs.param_types[i]));
  }
}

Evaluation read_record(const std::string& key, const Json& rec, const ResultSet& rs, const std::string& src) {
  if (!rec.is_object()) throw Error::bad_input("record \"" + key + "\" is not an object", {src});
  Evaluation e;
  read_config(key, rec, rs, src, e);
  std::optional<Status> failed;
  for (const auto& [k, v] : rec.items()) {
    if (std::find(rs.param_names.begin(), rs.param_names.end(), k) != rs.param_names.end()) continue;
    if (!failed) failed = error_status(v);
    if (is_known_field(k) || !v.is_number()) continue;
    if (!take_observer_field(e, k, v.get<double>())) e.metrics[k] = v.get<double>();
  }
  if (auto it = rec.find("ktune_status"); it != rec.end() && it->is_string())
    if (auto s = status_from_string(it->get<std::string>())) failed = *s;
  if (failed && *failed != Status::Ok) {
    e.status = *failed;
    e.reason = rec.value("ktune_reason", "");
  } else {
    e.time_ms = e.mean_ms = number(rec, "time");
    if (auto it = rec.find("times"); it != rec.end() && it->is_array())
      for (const Json& t : *it)
        if (t.is_number()) e.samples.push_back(t.get<double>());
    e.complete_stats();
  }
  for (const EvaluationField& f : evaluation_fields())
    if (!is_observer(f) && *f.kernel_tuner) f.set(e, number(rec, f.kernel_tuner));
  e.timestamp = rec.value("timestamp", "");
  return e;
}

}  // namespace

ResultSet parse_kernel_tuner(const std::string& text, const std::string& src) {
  ResultSet rs;
  Json j = parse_possibly_interrupted(text, src, rs);
  read_header(j, src, rs);
  const Json& cache = j["cache"];
  if (rs.param_names.empty() && !cache.empty())
    throw Error::bad_input("Kernel Tuner cache names no parameters (no tune_params_keys or tune_params)", {src});
  // Types come from tune_params; without them, from the records' own values.
  for (size_t i = 0; i < rs.param_names.size(); ++i) {
    std::vector<Value> seen = rs.param_values[i];
    if (seen.empty())
      for (const auto& [k, rec] : cache.items())
        if (rec.is_object() && rec.contains(rs.param_names[i]))
          if (auto v = detail::value_from_json(rec[rs.param_names[i]])) seen.push_back(*v);
    rs.param_types.push_back(detail::infer_type(seen));
    for (Value& v : rs.param_values[i]) v = detail::coerce(v, rs.param_types[i]);
  }
  rs.evaluations.reserve(cache.size());
  for (const auto& [key, rec] : cache.items()) rs.evaluations.push_back(read_record(key, rec, rs, src));
  return rs;
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
