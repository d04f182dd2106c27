#include "db/json_value.h"

#include <charconv>
#include <cmath>

namespace ktune::db::detail {

Json to_json(const Value& v) {
  switch (v.type()) {
    case ValueType::Int: return v.as_int();
    case ValueType::Float: return v.as_float();
    case ValueType::Bool: return v.as_bool();
    case ValueType::String: return v.as_string();
    case ValueType::List: {
      Json a = Json::array();
      for (const Value& x : v.as_list()) a.push_back(to_json(x));
      return a;
    }
  }
  return nullptr;
}

std::optional<Value> value_from_json(const Json& j) {
  switch (j.type()) {
    case Json::value_t::boolean: return Value(j.get<bool>());
    case Json::value_t::number_integer: return Value(j.get<int64_t>());
    case Json::value_t::number_unsigned: return Value(static_cast<int64_t>(j.get<uint64_t>()));
    case Json::value_t::number_float: return Value(j.get<double>());
    case Json::value_t::string: return Value(j.get<std::string>());
    case Json::value_t::array: {
      ValueList l;
      for (const Json& x : j) {
        auto v = value_from_json(x);
        if (!v) return std::nullopt;
        l.push_back(*v);
      }
      return Value(std::move(l));
    }
    default: return std::nullopt;
  }
}

Value coerce(const Value& v, ValueType type) {
  if (type == ValueType::Int && v.is_float() && std::floor(v.as_float()) == v.as_float() &&
      std::abs(v.as_float()) < 9e15)
    return Value(static_cast<int64_t>(v.as_float()));
  return v;
}

Json number_json(double v) {
  if (std::isfinite(v) && std::floor(v) == v && std::abs(v) < 1e15) return static_cast<int64_t>(v);
  return v;
}

std::string config_to_json(const std::vector<Value>& config) {
  Json a = Json::array();
  for (const Value& v : config) a.push_back(to_json(v));
  return a.dump();
}

std::vector<Value> config_from_json(const std::string& text) {
  std::vector<Value> out;
  Json a = Json::parse(text, nullptr, false);
  if (!a.is_array()) return out;
  for (const Json& x : a) out.push_back(value_from_json(x).value_or(Value(std::string())));
  return out;
}

// Written by hand: called once per stored evaluation, and to_chars gives the
// same shortest round-trip digits as the JSON library, without a DOM.
std::string samples_to_json(const std::vector<double>& samples) {
  std::string out = "[";
  char buf[32];
  for (size_t i = 0; i < samples.size(); ++i) {
    if (i) out += ',';
    if (!std::isfinite(samples[i])) {
      out += "null";
      continue;
    }
    auto r = std::to_chars(buf, buf + sizeof buf, samples[i]);
    out.append(buf, r.ptr);
  }
  return out + "]";
}

std::vector<double> samples_from_json(const std::string& text) {
  std::vector<double> out;
  if (text.empty()) return out;
  Json a = Json::parse(text, nullptr, false);
  if (!a.is_array()) return out;
  for (const Json& x : a)
    if (x.is_number()) out.push_back(x.get<double>());
  return out;
}

std::string metrics_to_json(const std::map<std::string, double>& metrics) {
  Json o = Json::object();
  for (const auto& [k, v] : metrics) o[k] = v;
  return o.dump();
}

std::map<std::string, double> metrics_from_json(const std::string& text) {
  std::map<std::string, double> out;
  if (text.empty()) return out;
  Json o = Json::parse(text, nullptr, false);
  if (!o.is_object()) return out;
  for (const auto& [k, v] : o.items())
    if (v.is_number()) out[k] = v.get<double>();
  return out;
}

ValueType infer_type(const std::vector<Value>& values) {
  bool all_bool = !values.empty(), all_int = !values.empty(), all_num = true;
  for (const Value& v : values) {
    all_bool = all_bool && v.is_bool();
    all_int = all_int && v.is_int();
    all_num = all_num && (v.is_int() || v.is_float());
  }
  if (all_bool) return ValueType::Bool;
  if (all_int) return ValueType::Int;
  if (all_num && !values.empty()) return ValueType::Float;
  return ValueType::String;
}

std::optional<ValueType> value_type_from_name(const std::string& name) {
  for (ValueType t : {ValueType::Int, ValueType::Float, ValueType::Bool, ValueType::String, ValueType::List})
    if (name == type_name(t)) return t;
  return std::nullopt;
}

}  // namespace ktune::db::detail
