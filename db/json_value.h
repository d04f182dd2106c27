// ktune::Value and Evaluation parts as JSON, the one encoding shared by the
// store's JSON columns, the interchange formats and the command line's --json.
//
// JSON keeps a value's type: 2 is an int, 2.0 a float, true a bool. Objects
// are nlohmann::ordered_json so files keep their key order (parameter order).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ktune/error.h"
#include "search/expr/value.h"

namespace ktune::db::detail {

using Json = nlohmann::ordered_json;

Json to_json(const Value& v);
// std::nullopt for null, objects and other values no parameter can hold.
std::optional<Value> value_from_json(const Json& j);
// An integral float given for an int parameter (128.0) becomes the int;
// anything else is kept as written. Ints among a float parameter's values stay
// ints, as in Python, so Kernel Tuner's keys ("2", not "2.0") come out alike.
Value coerce(const Value& v, ValueType type);

// An integral double as a JSON integer (num_regs: 32, not 32.0), else as is.
Json number_json(double v);

std::string config_to_json(const std::vector<Value>& config);
std::vector<Value> config_from_json(const std::string& text);

std::string samples_to_json(const std::vector<double>& samples);
std::vector<double> samples_from_json(const std::string& text);
std::string metrics_to_json(const std::map<std::string, double>& metrics);
std::map<std::string, double> metrics_from_json(const std::string& text);

// The type a parameter is given from the values it takes: bool if all are
// bool, int if all are int, float if all are numbers and one is a float,
// else string.
ValueType infer_type(const std::vector<Value>& values);
std::optional<ValueType> value_type_from_name(const std::string& name);

// Files are read with their locations through LocatedJson (db/interchange/json_located.h).

}  // namespace ktune::db::detail
