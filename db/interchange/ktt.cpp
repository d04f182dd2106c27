#include "db/interchange/ktt.h"

#include <algorithm>

#include "db/interchange/json_located.h"
#include "db/json_value.h"
#include "ktune/error.h"

namespace ktune::db {

using detail::duration_value;
using detail::Json;
using detail::LocatedJson;
using detail::parameter_value;

namespace {

[[noreturn]] void refuse(const SourceLocation& where, const std::string& why) { throw Error::bad_input(why, where); }

// KTT's TimeUnit (Nanoseconds, Microseconds, Milliseconds, Seconds) in ms.
double unit_factor_to_ms(const std::string& unit, const SourceLocation& where) {
  if (unit == "Milliseconds") return 1;
  if (unit == "Microseconds") return 1e-3;
  if (unit == "Nanoseconds") return 1e-6;
  if (unit == "Seconds") return 1e3;
  refuse(where, "Metadata.TimeUnit \"" + unit +
                    "\" is none of KTT's (Nanoseconds, Microseconds, Milliseconds, Seconds)");
}

struct StatusName {
  const char* name;
  Status status;
};
constexpr StatusName kStatus[] = {{"Ok", Status::Ok},
                                  {"ComputationFailed", Status::RuntimeError},
                                  {"CompilationFailed", Status::CompileError},
                                  {"ValidationFailed", Status::WrongResult},
                                  {"DeviceLimitsExceeded", Status::Invalid}};

const Json& member(const Json& obj, const char* key, const std::string& what, const SourceLocation& where) {
  auto it = obj.find(key);
  if (it == obj.end()) refuse(where, what + " has no " + key);
  return *it;
}

// The compiler's figures of the first kernel run: KTT names memories as
// OpenCL does (local memory is CUDA's shared memory, private memory its
// local memory).
void read_compilation(const Json& r, Evaluation& e) {
  auto runs = r.find("ComputationResults");
  if (runs == r.end() || !runs->is_array() || runs->empty() || !(*runs)[0].is_object()) return;
  auto data = (*runs)[0].find("CompilationData");
  if (data == (*runs)[0].end() || !data->is_object()) return;
  auto integer = [&](const char* key) -> std::optional<int64_t> {
    auto it = data->find(key);
    if (it == data->end() || !it->is_number_integer()) return std::nullopt;
    return it->get<int64_t>();
  };
  e.registers = integer("RegistersCount");
  e.shared_bytes = integer("LocalMemorySize");
  e.local_bytes = integer("PrivateMemorySize");
}

}  // namespace

ResultSet parse_ktt(const std::string& text, const std::string& src) {
  const LocatedJson doc(text, src);
  const Json& j = doc.root();
  const SourceLocation top = doc.where(j);
  if (!j.is_object() || !j.contains("Results") || !j["Results"].is_array())
    refuse(top, "not a KTT output file (no \"Results\" list)");
  ResultSet rs;
  rs.format = "ktt";
  double factor = 1;
  if (auto meta = j.find("Metadata"); meta != j.end()) {
    if (!meta->is_object()) refuse(doc.where(*meta, top), "Metadata must be an object, not " + meta->dump());
    if (auto d = meta->find("Device"); d != meta->end() && d->is_string()) rs.device_name = d->get<std::string>();
    if (auto u = meta->find("TimeUnit"); u != meta->end()) {
      if (!u->is_string()) refuse(doc.where(*u, top), "Metadata.TimeUnit must be a string, not " + u->dump());
      factor = unit_factor_to_ms(u->get<std::string>(), doc.where(*u, top));
    } else {
      refuse(doc.where(*meta, top), "Metadata has no TimeUnit: the durations' unit is unknown");
    }
  } else {
    refuse(top, "a KTT output file without Metadata: the durations' unit is unknown");
  }
  const Json& results = j["Results"];
  std::vector<std::vector<Value>> seen;
  for (size_t i = 0; i < results.size(); ++i) {
    const Json& r = results[i];
    const std::string what = "Results[" + std::to_string(i) + "]";
    const SourceLocation where = doc.where(r, top);
    if (!r.is_object()) refuse(where, what + " must be an object, not " + r.dump().substr(0, 60));
    if (rs.kernel_name.empty())
      if (auto k = r.find("KernelName"); k != r.end() && k->is_string()) rs.kernel_name = k->get<std::string>();
    const Json& config = member(r, "Configuration", what, where);
    if (!config.is_array()) refuse(doc.where(config, where), what + ": Configuration must be a list of {Name, Value}");
    Evaluation e;
    std::vector<std::string> names;
    for (const Json& p : config) {
      if (!p.is_object() || !p.contains("Name") || !p["Name"].is_string() || !p.contains("Value"))
        refuse(doc.where(p, where), what + ": a Configuration entry needs a Name and a Value, not " + p.dump());
      std::optional<Value> v = parameter_value(p["Value"]);
      if (!v) refuse(doc.where(p, where), what + ": " + p["Name"].get<std::string>() + " = " + p["Value"].dump() +
                                               " is not a number, bool or string");
      names.push_back(p["Name"].get<std::string>());
      e.config.push_back(*v);
    }
    if (i == 0) {
      rs.param_names = names;
      seen.resize(names.size());
    } else if (names != rs.param_names) {
      refuse(where, what + " names other parameters than Results[0] (or in another order)");
    }
    for (size_t k = 0; k < e.config.size(); ++k) seen[k].push_back(e.config[k]);
    const Json& status = member(r, "Status", what, where);
    const std::string s = status.is_string() ? status.get<std::string>() : status.dump();
    const auto found =
        std::find_if(std::begin(kStatus), std::end(kStatus), [&](const StatusName& n) { return s == n.name; });
    if (found == std::end(kStatus))
      refuse(doc.where(status, where), what + ": unknown Status " + status.dump() +
                                           " (expected Ok, ComputationFailed, CompilationFailed, ValidationFailed or "
                                           "DeviceLimitsExceeded)");
    e.status = found->status;
    if (e.status == Status::Ok) {
      // Stored as ok, a result is a measurement: never one without its time.
      auto d = r.find("TotalDuration");
      if (d == r.end()) refuse(where, what + " is Ok but has no TotalDuration");
      e.time_ms = duration_value(*d, what + ": TotalDuration", doc.where(*d, where), factor);
      e.mean_ms = e.time_ms;
    } else {
      e.reason = "KTT: " + s;
    }
    read_compilation(r, e);
    rs.evaluations.push_back(std::move(e));
  }
  for (size_t k = 0; k < seen.size(); ++k) {
    rs.param_types.push_back(detail::infer_type(seen[k]));
    for (Evaluation& e : rs.evaluations) e.config[k] = detail::coerce(e.config[k], rs.param_types.back());
  }
  rs.objectives = {"time"};
  return rs;
}

}  // namespace ktune::db
