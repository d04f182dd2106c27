// Portability of one kernel's configurations across devices (portability.h).
#include "db/portability.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

namespace ktune::db {

std::map<std::string, size_t> DeviceSeries::latest() const {
  std::map<std::string, size_t> out;
  for (size_t i = 0; i < rows.size(); ++i) out[rows[i].config_key] = i;  // rows are in the order stored
  return out;
}

std::vector<KernelSeries> load_series(Store& store, const Filter& f) {
  Filter all = f;
  all.status.reset();
  all.run_id.reset();
  all.sort = Filter::Sort::Id;
  all.limit = 0;
  std::map<std::string, int> cc;
  for (const DeviceRow& d : store.devices()) cc[d.info.name] = d.info.cc_major * 10 + d.info.cc_minor;
  std::vector<ResultRow> rows = store.results(all);
  // The newest kernel record of each name decides the parameter list.
  std::map<std::string, int64_t> newest;
  for (const ResultRow& r : rows) newest[r.kernel] = std::max(newest[r.kernel], r.series.kernel_id);
  std::map<std::string, std::vector<std::string>> names;
  for (const auto& [name, id] : newest)
    if (std::optional<KernelInfo> info = store.kernel(id)) names[name] = info->param_names;
  using Key = std::pair<std::string, std::string>;  // kernel, problem size key
  std::map<Key, KernelSeries> by_key;
  std::map<Key, std::map<std::string, DeviceSeries>> devices;
  for (ResultRow& r : rows) {
    auto n = names.find(r.kernel);
    if (n == names.end() || r.param_names != n->second) continue;
    const Key key{r.kernel, problem_size_key(r.problem_size)};
    KernelSeries& ks = by_key[key];
    if (ks.kernel.empty()) {
      ks.kernel = r.kernel;
      ks.problem_size = r.problem_size;
      ks.param_names = n->second;
    }
    const std::string device = r.replayed ? r.device + " (replay)" : r.device;
    DeviceSeries& ds = devices[key][device];
    if (ds.device.empty()) {
      ds.device = device;
      ds.compute_capability = cc[r.device];
      ds.replayed = r.replayed;
    }
    ds.rows.push_back(std::move(r));
  }
  std::vector<KernelSeries> out;
  for (auto& [key, ks] : by_key) {
    for (auto& [name, ds] : devices[key]) ks.devices.push_back(std::move(ds));
    out.push_back(std::move(ks));
  }
  std::sort(out.begin(), out.end(), [](const KernelSeries& a, const KernelSeries& b) {
    return std::tie(a.kernel, a.problem_size) < std::tie(b.kernel, b.problem_size);
  });
  return out;
}

DeviceResults device_results(const DeviceSeries& s) {
  DeviceResults d;
  d.device = s.device;
  d.compute_capability = s.compute_capability;
  for (const auto& [key, i] : s.latest()) {
    const ResultRow& r = s.rows[i];
    ConfigResult c;
    c.config = r.eval.config;
    c.status = r.eval.status;
    if (r.eval.status == Status::Ok && r.eval.time_ms && std::isfinite(*r.eval.time_ms) && *r.eval.time_ms > 0)
      c.time_ms = r.eval.time_ms;
    else if (r.eval.status == Status::Ok)
      c.status = Status::RuntimeError;  // ok without a usable time: nothing to compare
    d.configs.emplace(key, std::move(c));
  }
  return d;
}

namespace {

// The fastest measured configuration; ties go to the smaller key (map order).
const std::pair<const std::string, ConfigResult>* optimum_of(const DeviceResults& d) {
  const std::pair<const std::string, ConfigResult>* best = nullptr;
  for (const auto& kv : d.configs)
    if (kv.second.time_ms && (!best || *kv.second.time_ms < *best->second.time_ms)) best = &kv;
  return best;
}

// Numbers by value, before strings; strings as text.
bool value_less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return a.as_float() < b.as_float();
  if (a.is_number() != b.is_number()) return a.is_number();
  return a.str() < b.str();
}

ParameterDeviceEffect effect_of(const DeviceResults& d, size_t param, double optimum) {
  struct Group {
    Value value;
    size_t count = 0;
    double fastest = 0;
    double log_sum = 0;
  };
  std::map<std::string, Group> per_value;  // by the value's str()
  double total = 0;
  size_t n = 0;
  for (const auto& [key, c] : d.configs) {
    if (!c.time_ms || param >= c.config.size()) continue;
    const Value& v = c.config[param];
    auto [it, fresh] = per_value.try_emplace(v.str(), Group{v, 0, *c.time_ms, 0});
    Group& g = it->second;
    ++g.count;
    g.fastest = std::min(g.fastest, *c.time_ms);
    const double l = std::log(*c.time_ms);
    g.log_sum += l;
    total += l;
    ++n;
  }
  ParameterDeviceEffect e;
  if (n == 0) return e;
  const double mean = total / static_cast<double>(n);
  double ss_total = 0, ss_between = 0;
  for (const auto& [key, c] : d.configs)
    if (c.time_ms && param < c.config.size()) ss_total += std::pow(std::log(*c.time_ms) - mean, 2);
  for (const auto& [text, g] : per_value) {
    const double m = g.log_sum / static_cast<double>(g.count);
    ss_between += static_cast<double>(g.count) * (m - mean) * (m - mean);
    e.values.push_back({g.value, g.count, g.fastest / optimum});
    e.worst_best_ratio = std::max(e.worst_best_ratio, g.fastest / optimum);
  }
  std::sort(e.values.begin(), e.values.end(),
            [](const ValueEffect& a, const ValueEffect& b) { return value_less(a.value, b.value); });
  // Relative to the total: below rounding noise counts as no variance at all.
  e.variance_explained = ss_total > 1e-24 ? std::clamp(ss_between / ss_total, 0.0, 1.0) : 0.0;
  return e;
}

}  // namespace

Portability compute_portability(const std::vector<std::string>& param_names, const std::vector<DeviceResults>& all) {
  Portability p;
  p.param_names = param_names;
  std::vector<const DeviceResults*> devices;
  for (const DeviceResults& d : all) {
    const auto* best = optimum_of(d);
    if (!best) {
      p.left_out.push_back(d.device);
      continue;
    }
    devices.push_back(&d);
    DeviceOptimum o;
    o.device = d.device;
    o.compute_capability = d.compute_capability;
    o.config = best->second.config;
    o.config_key = best->first;
    o.time_ms = *best->second.time_ms;
    for (const auto& [key, c] : d.configs) ++(c.time_ms ? o.measured : o.failed);
    p.devices.push_back(std::move(o));
  }
  const size_t n = devices.size();
  p.matrix.assign(n, std::vector<PortabilityCell>(n));
  for (size_t a = 0; a < n; ++a)
    for (size_t b = 0; b < n; ++b) {
      PortabilityCell& cell = p.matrix[a][b];
      auto it = devices[b]->configs.find(p.devices[a].config_key);
      if (it == devices[b]->configs.end()) continue;
      if (it->second.time_ms) {
        cell.state = CellState::Measured;
        cell.ratio = *it->second.time_ms / p.devices[b].time_ms;
      } else {
        cell.state = CellState::Failed;
        cell.status = it->second.status;
      }
    }
  // The most portable: measured everywhere, smallest worst ratio, then the
  // higher PP, then the smaller key (the first device's map order).
  if (n > 0) {
    for (const auto& [key, c] : devices[0]->configs) {
      if (!c.time_ms) continue;
      std::vector<double> ratios;
      for (size_t b = 0; b < n; ++b) {
        auto it = devices[b]->configs.find(key);
        if (it == devices[b]->configs.end() || !it->second.time_ms) break;
        ratios.push_back(*it->second.time_ms / p.devices[b].time_ms);
      }
      if (ratios.size() != n) continue;
      ++p.common;
      const double worst = *std::max_element(ratios.begin(), ratios.end());
      double inverse = 0;
      for (double r : ratios) inverse += r;  // 1/efficiency = time/optimum
      const double pp = static_cast<double>(n) / inverse;
      if (!p.portable || worst < p.portable->worst || (worst == p.portable->worst && pp > p.portable->pp))
        p.portable = PortableConfig{c.config, key, worst, pp, std::move(ratios)};
    }
  }
  for (size_t i = 0; i < param_names.size(); ++i) {
    ParameterEffect e;
    e.name = param_names[i];
    for (size_t b = 0; b < n; ++b) {
      e.devices.push_back(effect_of(*devices[b], i, p.devices[b].time_ms));
      if (b > 0 && p.devices[b].config.size() > i && p.devices[0].config.size() > i &&
          !(p.devices[b].config[i] == p.devices[0].config[i]))
        e.differs = true;
    }
    p.parameters.push_back(std::move(e));
  }
  return p;
}

}  // namespace ktune::db
