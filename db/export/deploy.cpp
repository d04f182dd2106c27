// Deployment exports: collecting the best results, ktune JSON and Kernel
// Launcher wisdom files. The C++ header lives in header.cpp.
#include "db/export/deploy.h"
#include "db/json_value.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "db/export/header.h"
#include "db/portability.h"
#include "ktune/error.h"

namespace ktune::db {
namespace {

using Json = nlohmann::ordered_json;

// One spelling of values as JSON for the whole library (db/json_value.h).
Json value_json(const Value& v) { return detail::to_json(v); }

bool entry_less(const DeployEntry& a, const DeployEntry& b) {
  return std::tie(a.device, a.problem_size) < std::tie(b.device, b.problem_size);
}

// A rival row for the same (device, problem size) replaces the kept one only
// when strictly faster, so ties keep the first seen (rows come sorted).
void keep_fastest(std::vector<DeployEntry>& entries, DeployEntry e) {
  for (DeployEntry& have : entries) {
    if (have.device == e.device && have.problem_size == e.problem_size) {
      if (e.time_ms < have.time_ms) have = std::move(e);
      return;
    }
  }
  entries.push_back(std::move(e));
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error::failed("cannot write " + path);
  out << text;
  out.close();
  if (!out) throw Error::failed("cannot write " + path);
}

}  // namespace

int64_t problem_size_total(const ProblemSize& ps) {
  if (ps.empty()) return 0;
  int64_t t = 1;
  for (int64_t e : ps) t *= e;
  return t;
}

std::vector<DeployKernel> collect_deploy(Store& store, const Filter& f) {
  std::map<std::string, int> cc;
  for (const DeviceRow& d : store.devices()) cc[d.info.name] = d.info.cc_major * 10 + d.info.cc_minor;
  std::vector<ResultRow> rows = store.best(f);
  // The newest kernel record of each name decides the parameter list.
  std::map<std::string, int64_t> newest;
  for (const ResultRow& r : rows) newest[r.kernel] = std::max(newest[r.kernel], r.series.kernel_id);
  std::map<std::string, DeployKernel> kernels;
  for (const auto& [name, id] : newest) {
    std::optional<KernelInfo> info = store.kernel(id);
    if (!info) continue;
    kernels[name] = DeployKernel{name, info->param_names, info->param_types, {}};
  }
  for (ResultRow& r : rows) {
    auto it = kernels.find(r.kernel);
    if (it == kernels.end() || r.param_names != it->second.param_names || !r.eval.time_ms) continue;
    DeployEntry e{r.device, cc[r.device], r.problem_size, std::move(r.eval.config), *r.eval.time_ms,
                  r.eval.timestamp, r.run_id, r.config_key, r.replayed};
    keep_fastest(it->second.entries, std::move(e));
  }
  // The fallback for devices the results do not know: per problem size, the
  // configuration measured on every device with the smallest worst ratio.
  for (const KernelSeries& series : load_series(store, f)) {
    auto it = kernels.find(series.kernel);
    if (it == kernels.end() || series.param_names != it->second.param_names) continue;
    std::vector<DeviceResults> devices;
    for (const DeviceSeries& d : series.devices) devices.push_back(device_results(d));
    const Portability p = compute_portability(series.param_names, devices);
    if (!p.portable) continue;
    DeployPortable dp{series.problem_size, p.portable->config, p.portable->config_key, p.portable->worst,
                      p.portable->pp, {}};
    for (const DeviceOptimum& d : p.devices) dp.devices.push_back(d.device);
    it->second.portable.push_back(std::move(dp));
  }
  std::vector<DeployKernel> out;
  for (auto& [name, k] : kernels) {
    if (k.entries.empty()) continue;
    std::sort(k.entries.begin(), k.entries.end(), entry_less);
    std::sort(k.portable.begin(), k.portable.end(),
              [](const DeployPortable& a, const DeployPortable& b) { return a.problem_size < b.problem_size; });
    out.push_back(std::move(k));
  }
  return out;
}

std::vector<DeployEntry> best_per_arch(const DeployKernel& k) {
  std::map<std::pair<int, ProblemSize>, DeployEntry> best;
  for (const DeployEntry& e : k.entries) {
    if (e.compute_capability == 0) continue;
    auto key = std::make_pair(e.compute_capability, e.problem_size);
    auto it = best.find(key);
    if (it == best.end() || e.time_ms < it->second.time_ms) best[key] = e;
  }
  std::vector<DeployEntry> out;
  for (auto& [key, e] : best) out.push_back(e);
  return out;
}

const DeployEntry& most_often_winner(const DeployKernel& k) {
  std::map<std::string, int> wins;
  for (const DeployEntry& e : k.entries) ++wins[e.config_key];
  const DeployEntry* best = &k.entries.front();
  for (const DeployEntry& e : k.entries) {
    int we = wins[e.config_key], wb = wins[best->config_key];
    if (we > wb || (we == wb && e.config_key < best->config_key)) best = &e;
  }
  return *best;
}

namespace {

int64_t distance(int64_t a, int64_t b) { return a > b ? a - b : b - a; }

}  // namespace

const DeployPortable* nearest_portable(const DeployKernel& k, int64_t total) {
  const DeployPortable* pick = nullptr;
  for (const DeployPortable& p : k.portable) {
    const int64_t t = problem_size_total(p.problem_size);
    if (!pick) {
      pick = &p;
      continue;
    }
    const int64_t d = distance(t, total), dp = distance(problem_size_total(pick->problem_size), total);
    if (d < dp || (d == dp && t < problem_size_total(pick->problem_size))) pick = &p;
  }
  return pick;
}

const DeployPortable* widest_portable(const DeployKernel& k) {
  const DeployPortable* pick = nullptr;
  for (const DeployPortable& p : k.portable)
    if (!pick || p.devices.size() > pick->devices.size() ||
        (p.devices.size() == pick->devices.size() &&
         problem_size_total(p.problem_size) > problem_size_total(pick->problem_size)))
      pick = &p;
  return pick;
}

std::string deploy_json(const std::vector<DeployKernel>& kernels) {
  Json ks = Json::array();
  for (const DeployKernel& k : kernels) {
    Json entries = Json::array();
    for (const DeployEntry& e : k.entries) {
      Json config = Json::object();
      for (size_t i = 0; i < k.param_names.size() && i < e.config.size(); ++i)
        config[k.param_names[i]] = value_json(e.config[i]);
      entries.push_back({{"device", e.device}, {"compute_capability", e.compute_capability},
                         {"problem_size", e.problem_size}, {"config", config}, {"time_ms", e.time_ms},
                         {"timestamp", e.timestamp},
                         {"run_id", e.run_id ? Json(*e.run_id) : Json(nullptr)}});
      if (e.replayed) entries.back()["replay"] = true;
    }
    Json portable = Json::array();
    for (const DeployPortable& p : k.portable) {
      Json config = Json::object();
      for (size_t i = 0; i < k.param_names.size() && i < p.config.size(); ++i)
        config[k.param_names[i]] = value_json(p.config[i]);
      portable.push_back({{"problem_size", p.problem_size}, {"config", config}, {"worst", p.worst}, {"pp", p.pp},
                          {"devices", p.devices}});
    }
    ks.push_back({{"name", k.name}, {"parameters", k.param_names}, {"entries", entries}, {"portable", portable}});
  }
  return Json{{"kernels", ks}}.dump(2) + "\n";
}

namespace {

const Json& member(const Json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) throw Error::bad_input(std::string("exported results: '") + key + "' missing", SourceLocation{where});
  return *it;
}

}  // namespace

std::vector<DeployKernel> parse_deploy_json(const std::string& text, const std::string& where) {
  const Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    throw Error::bad_input("not a ktune JSON export (`ktune export --format json`)", SourceLocation{where});
  std::vector<DeployKernel> out;
  try {
    for (const Json& jk : member(doc, "kernels", where)) {
      DeployKernel k;
      k.name = member(jk, "name", where).get<std::string>();
      k.param_names = member(jk, "parameters", where).get<std::vector<std::string>>();
      k.param_types.assign(k.param_names.size(), ValueType::Int);
      for (const Json& je : member(jk, "entries", where)) {
        DeployEntry e;
        e.device = member(je, "device", where).get<std::string>();
        e.compute_capability = member(je, "compute_capability", where).get<int>();
        e.problem_size = member(je, "problem_size", where).get<ProblemSize>();
        const Json& config = member(je, "config", where);
        for (size_t i = 0; i < k.param_names.size(); ++i) {
          std::optional<Value> v = detail::value_from_json(member(config, k.param_names[i].c_str(), where));
          if (!v) throw Error::bad_input("exported results: value of '" + k.param_names[i] + "' in kernel '" +
                                             k.name + "' is not a scalar", SourceLocation{where});
          k.param_types[i] = v->type();
          e.config.push_back(std::move(*v));
        }
        e.time_ms = member(je, "time_ms", where).get<double>();
        e.timestamp = je.value("timestamp", std::string());
        if (auto it = je.find("run_id"); it != je.end() && it->is_number_integer()) e.run_id = it->get<int64_t>();
        e.config_key = config_key(e.config);
        e.replayed = je.value("replay", false);
        k.entries.push_back(std::move(e));
      }
      std::sort(k.entries.begin(), k.entries.end(), entry_less);
      // Optional: exports written before the portable fallback have none.
      if (auto it = jk.find("portable"); it != jk.end()) {
        for (const Json& jp : *it) {
          DeployPortable p;
          p.problem_size = member(jp, "problem_size", where).get<ProblemSize>();
          const Json& config = member(jp, "config", where);
          for (size_t i = 0; i < k.param_names.size(); ++i) {
            std::optional<Value> v = detail::value_from_json(member(config, k.param_names[i].c_str(), where));
            if (!v) throw Error::bad_input("exported results: portable value of '" + k.param_names[i] +
                                               "' in kernel '" + k.name + "' is not a scalar", SourceLocation{where});
            p.config.push_back(std::move(*v));
          }
          p.config_key = config_key(p.config);
          p.worst = member(jp, "worst", where).get<double>();
          p.pp = member(jp, "pp", where).get<double>();
          p.devices = jp.value("devices", std::vector<std::string>{});
          k.portable.push_back(std::move(p));
        }
      }
      out.push_back(std::move(k));
    }
  } catch (const Json::exception& e) {
    throw Error::bad_input(std::string("exported results: ") + e.what(), SourceLocation{where});
  }
  return out;
}

const char* to_string(DeployMatch m) {
  switch (m) {
    case DeployMatch::ExactDevice: return "exact device";
    case DeployMatch::SameComputeCapability: return "same compute capability";
    case DeployMatch::SameMajor: return "same major architecture";
    case DeployMatch::MostPortable: return "most portable";
    case DeployMatch::MostOften: return "most often best";
  }
  return "?";
}

DeploySelection select_deploy(const DeployKernel& k, const std::string& device_name, int cc, int64_t total) {
  const DeployEntry* pick = nullptr;
  for (const DeployEntry& e : k.entries)
    if (e.device == device_name &&
        (!pick || distance(problem_size_total(e.problem_size), total) <
                      distance(problem_size_total(pick->problem_size), total)))
      pick = &e;
  if (pick) return {*pick, DeployMatch::ExactDevice, std::nullopt};
  // The same passes, order and tie rule as the header's select(cc, total).
  const std::vector<DeployEntry> arch = best_per_arch(k);
  for (int pass = 0; pass < 2 && !pick; ++pass) {
    for (const DeployEntry& e : arch) {
      const bool match = pass == 0 ? e.compute_capability == cc : e.compute_capability / 10 == cc / 10;
      if (!match) continue;
      if (!pick) {
        pick = &e;
        continue;
      }
      const int64_t da = distance(e.compute_capability, cc), db = distance(pick->compute_capability, cc);
      const bool closer = da != db ? da < db
                                   : distance(problem_size_total(e.problem_size), total) <
                                         distance(problem_size_total(pick->problem_size), total);
      if (closer) pick = &e;
    }
    if (pick) return {*pick, pass == 0 ? DeployMatch::SameComputeCapability : DeployMatch::SameMajor, std::nullopt};
  }
  if (const DeployPortable* p = nearest_portable(k, total)) {
    DeployEntry e;
    e.problem_size = p->problem_size;
    e.config = p->config;
    e.config_key = p->config_key;
    return {std::move(e), DeployMatch::MostPortable, *p};
  }
  return {most_often_winner(k), DeployMatch::MostOften, std::nullopt};
}

std::string wisdom_file_name(const std::string& key) {
  std::string s = key;
  for (char& c : s) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' ||
              c == '-';
    if (!ok) c = '_';
  }
  return s + ".wisdom";
}

std::string wisdom_text(const DeployKernel& k, const std::vector<DeviceRow>& devices) {
  std::map<std::string, const DeviceInfo*> by_name;
  for (const DeviceRow& d : devices) by_name[d.info.name] = &d.info;
  std::string text = Json{{"version", "1.0"}, {"objective", "time"}, {"tunable_parameters", k.param_names},
                          {"key", k.name}}.dump() + "\n";
  for (const DeployEntry& e : k.entries) {
    Json config = Json::array();
    for (const Value& v : e.config) config.push_back(value_json(v));
    // Kernel Launcher always wants three extents; an unknown size reads as 1x1x1.
    std::vector<int64_t> ps = e.problem_size;
    ps.resize(3, 1);
    const DeviceInfo* d = by_name.count(e.device) ? by_name[e.device] : nullptr;
    Json env{{"device_name", e.device},
             {"compute_capability", e.compute_capability},
             {"date", e.timestamp},
             {"cuda_driver_version", d ? d->driver_version : ""},
             {"nvrtc_version", d ? d->nvrtc_version : ""},
             {"host_name", ""}};
    if (e.replayed) env["ktune_replay"] = true;  // recorded elsewhere, replayed by ktune: not a measurement
    text += Json{{"config", config}, {"problem_size", ps}, {"time", e.time_ms}, {"environment", env}}.dump() + "\n";
  }
  return text;
}

std::optional<DeployFormat> deploy_format_from_string(const std::string& s) {
  if (s == "header") return DeployFormat::Header;
  if (s == "json") return DeployFormat::Json;
  if (s == "wisdom") return DeployFormat::Wisdom;
  return std::nullopt;
}

DeploySummary export_deploy(Store& store, const Filter& f, DeployFormat format, const std::string& path,
                            const DeployOptions& options) {
  store.require_known(f);
  std::vector<DeployKernel> kernels = collect_deploy(store, f);
  if (kernels.empty())
    throw Error::failed("no successful results to export" +
                        (f.kernel.empty() ? std::string() : " for kernel " + f.kernel) +
                        (f.device.empty() ? std::string() : " on device " + f.device));
  DeploySummary s;
  s.kernels = kernels.size();
  for (const DeployKernel& k : kernels) s.entries += k.entries.size();
  if (format == DeployFormat::Header) {
    HeaderOptions ho;
    ho.namespace_name = options.header_namespace;
    ho.kernel_tuner_defines = options.kernel_tuner_defines;
    write_text(path, tuned_header(kernels, ho));
    s.files.push_back(path);
  } else if (format == DeployFormat::Json) {
    write_text(path, deploy_json(kernels));
    s.files.push_back(path);
  } else {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (!std::filesystem::is_directory(path)) throw Error::failed("cannot create directory " + path);
    const std::vector<DeviceRow> devices = store.devices();
    std::map<std::string, std::string> taken;  // file name -> kernel
    for (const DeployKernel& k : kernels) {
      // Kernel Launcher finds a file by its key, so a suffixed name would never be read.
      auto [it, fresh] = taken.emplace(wisdom_file_name(k.name), k.name);
      if (!fresh)
        throw Error::bad_input("kernels '" + it->second + "' and '" + k.name + "' both map to wisdom file " +
                               it->first + "; export one of them at a time");
      std::string file = (std::filesystem::path(path) / it->first).string();
      write_text(file, wisdom_text(k, devices));
      s.files.push_back(file);
    }
  }
  return s;
}

}  // namespace ktune::db
