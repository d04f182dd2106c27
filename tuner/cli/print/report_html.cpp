// The HTML report (report_html.h): hand-written SVG and a little CSS.
#include "tuner/cli/print/report_html.h"

#include "tuner/cli/print/profile.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "search/compare.h"
#include "tuner/cli/print/report_svg.h"

namespace ktune {
namespace {

using namespace report;

std::string anchor(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  return out;
}

std::string opt_text(const std::optional<double>& v, int digits) { return v ? num(*v, digits) : "-"; }
std::string opt_text(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "-"; }

const char* kStyle = R"(body{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px}h2{font-size:19px;border-bottom:2px solid #4c78a8;padding-bottom:4px;margin-top:40px}
h3{font-size:16px;margin-top:28px}h4{font-size:14px;margin:16px 0 6px}
.row{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}
svg.plot{border:1px solid #ddd}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:3px 7px}
th{background:#f0f4f8}td.n{text-align:right;font-variant-numeric:tabular-nums}
.note{color:#555;font-size:13px}code{background:#f4f4f4;padding:1px 3px}
nav li{margin:2px 0}
)";

// A device's runs, in the order stored: each evaluation in turn, the best so
// far, against random search over the same measured `times` (and `failed`).
// Closes the row the histogram opened.
void run_curves(std::ostringstream& o, const db::DeviceSeries& ds, const ReportOptions& opt,
                const std::vector<double>& times, size_t failed, double best_ms) {
  std::map<int64_t, RunCurve> runs;  // by run id (-1: rows outside a run)
  for (const db::ResultRow& r : ds.rows) {
    const int64_t id = r.run_id.value_or(-1);
    RunCurve& c = runs[id];
    std::optional<double> b = c.best.empty() ? std::nullopt : c.best.back();
    if (r.eval.status == db::Status::Ok && r.eval.time_ms && *r.eval.time_ms > 0)
      b = b ? std::min(*b, *r.eval.time_ms) : *r.eval.time_ms;
    c.best.push_back(b);
  }
  std::vector<RunCurve> shown;
  for (auto it = runs.rbegin(); it != runs.rend() && shown.size() < opt.max_runs; ++it) {
    it->second.label = (it->first < 0 ? std::string("no run") : "run " + std::to_string(it->first)) + ", " +
                       std::to_string(it->second.best.size()) + " evals";
    shown.push_back(std::move(it->second));
  }
  std::reverse(shown.begin(), shown.end());
  // Random search over the same measured configurations (failures included
  // in n, counting as the slowest success until one is drawn).
  const std::vector<double> random = random_expected_best(times, times.size() + failed, times.size() + failed);
  o << convergence_svg(shown, random, best_ms, "best so far per run vs random search") << "</div>\n";
  if (runs.size() > shown.size())
    o << "<p class=\"note\">" << runs.size() - shown.size() << " earlier runs not drawn.</p>\n";
}

// A device's fastest configurations, with what the compiler and the metrics said.
void fastest_table(std::ostringstream& o, const db::KernelSeries& ks, const db::DeviceSeries& ds,
                   const ReportOptions& opt, double best_ms) {
  std::vector<const db::ResultRow*> ranked;
  for (const auto& [key, i] : ds.latest())
    if (ds.rows[i].eval.status == db::Status::Ok && ds.rows[i].eval.time_ms) ranked.push_back(&ds.rows[i]);
  std::stable_sort(ranked.begin(), ranked.end(), [](const db::ResultRow* a, const db::ResultRow* b) {
    return *a->eval.time_ms < *b->eval.time_ms;
  });
  if (ranked.size() > opt.top) ranked.resize(opt.top);
  std::set<std::string> metric_names;
  for (const db::ResultRow* r : ranked)
    for (const auto& [m, v] : r->eval.metrics) metric_names.insert(m);
  o << "<h4>Fastest configurations</h4>\n<table class=\"top\"><tr><th>#</th>";
  for (const std::string& n : ks.param_names) o << "<th>" << esc(n) << "</th>";
  o << "<th>time ms</th><th>/ optimum</th><th>registers</th><th>shared B</th><th>local B</th><th>occupancy</th>"
       "<th>compile ms</th>";
  for (const std::string& m : metric_names) o << "<th>" << esc(m) << "</th>";
  bool profiled = false;
  for (const db::ResultRow* r : ranked) profiled = profiled || (opt.roofs && opt.roofs->of(*r));
  if (profiled) o << "<th>achieved occupancy</th><th>roofline</th>";
  o << "</tr>\n";
  for (size_t i = 0; i < ranked.size(); ++i) {
    const db::Evaluation& e = ranked[i]->eval;
    o << "<tr><td class=\"n\">" << i + 1 << "</td>";
    for (const Value& v : e.config) o << "<td class=\"n\">" << esc(v.str()) << "</td>";
    o << "<td class=\"n\">" << num(*e.time_ms, 4) << "</td><td class=\"n\">" << num(*e.time_ms / best_ms, 3)
      << "</td><td class=\"n\">" << opt_text(e.registers) << "</td><td class=\"n\">" << opt_text(e.shared_bytes)
      << "</td><td class=\"n\">" << opt_text(e.local_bytes) << "</td><td class=\"n\">"
      << (e.occupancy ? num(100 * *e.occupancy, 0) + "%" : "-") << "</td><td class=\"n\">" << opt_text(e.compile_ms, 1)
      << "</td>";
    for (const std::string& m : metric_names) {
      auto it = e.metrics.find(m);
      o << "<td class=\"n\">" << (it == e.metrics.end() ? "-" : sig(it->second, 4)) << "</td>";
    }
    if (profiled)
      o << "<td class=\"n\">" << (e.achieved_occupancy ? num(100 * *e.achieved_occupancy, 0) + "%" : "-")
        << "</td><td>" << esc(cli::roofline_text(opt.roofs->of(*ranked[i]))) << "</td>";
    o << "</tr>\n";
  }
  o << "</table>\n";
}

void device_section(std::ostringstream& o, const db::KernelSeries& ks, const db::DeviceSeries& ds,
                    const db::Portability& p, const ReportOptions& opt) {
  const db::DeviceResults dr = db::device_results(ds);
  const auto opt_it = std::find_if(p.devices.begin(), p.devices.end(),
                                   [&](const db::DeviceOptimum& d) { return d.device == ds.device; });
  o << "<h3 id=\"" << anchor(ks.kernel + "-" + db::problem_size_key(ks.problem_size) + "-" + ds.device) << "\">"
    << esc(ds.device) << (ds.compute_capability ? " (sm_" + std::to_string(ds.compute_capability) + ")" : "")
    << "</h3>\n";
  if (opt_it == p.devices.end()) {
    o << "<p class=\"note\">No successful measurement (" << dr.configs.size() << " configurations failed).</p>\n";
    return;
  }
  const db::DeviceOptimum& best = *opt_it;
  std::vector<double> times;
  size_t failed = 0;
  for (const auto& [key, c] : dr.configs) {
    if (c.time_ms) times.push_back(*c.time_ms);
    else ++failed;
  }
  std::sort(times.begin(), times.end());
  std::optional<double> portable_time;
  if (p.portable)
    if (auto it = dr.configs.find(p.portable->config_key); it != dr.configs.end()) portable_time = it->second.time_ms;
  o << "<p>" << times.size() << " configurations measured" << (failed ? ", " + std::to_string(failed) + " failed" : "")
    << "; optimum <b>" << esc(best.config_key) << "</b> at " << num(best.time_ms, 4) << " ms.</p>\n<div class=\"row\">\n"
    << histogram_svg(times, best.time_ms, portable_time, "measured times");
  run_curves(o, ds, opt, times, failed, best.time_ms);
  fastest_table(o, ks, ds, opt, best.time_ms);

  // The effect of each parameter (db/portability.h), on one scale per device.
  const size_t d = size_t(opt_it - p.devices.begin());
  double y_max = 1.1;
  for (const db::ParameterEffect& e : p.parameters) y_max = std::max(y_max, e.devices[d].worst_best_ratio * 1.08);
  o << "<h4>Effect of each parameter</h4>\n<p class=\"note\">For each value: the fastest configuration with it / the "
       "optimum (what fixing the parameter to that value costs when every other one is tuned), the optimum's value "
       "in green; and the share of the variance of log(time) the parameter's values explain.</p>\n<div class=\"row\">\n";
  for (size_t i = 0; i < p.parameters.size(); ++i)
    o << effect_svg(p.parameters[i].name, p.parameters[i].devices[d], best.config.at(i), y_max);
  o << "</div>\n";
}

void kernel_section(std::ostringstream& o, const db::KernelSeries& ks, const ReportOptions& opt) {
  std::vector<db::DeviceResults> input;
  for (const db::DeviceSeries& d : ks.devices) input.push_back(db::device_results(d));
  const db::Portability p = db::compute_portability(ks.param_names, input);
  const std::string size = db::problem_size_key(ks.problem_size);
  o << "<section class=\"kernel\"><h2 id=\"" << anchor(ks.kernel + "-" + size) << "\">" << esc(ks.kernel)
    << " <small>problem size " << esc(size) << "</small></h2>\n";
  o << "<table><tr><th>device</th><th>measured</th><th>failed</th><th>optimum ms</th><th>optimum ("
    << esc([&] {
         std::string s;
         for (const std::string& n : ks.param_names) s.append(s.empty() ? "" : ",").append(n);
         return s;
       }())
    << ")</th></tr>\n";
  for (const db::DeviceOptimum& d : p.devices)
    o << "<tr><td>" << esc(d.device) << "</td><td class=\"n\">" << d.measured << "</td><td class=\"n\">" << d.failed
      << "</td><td class=\"n\">" << num(d.time_ms, 4) << "</td><td>" << esc(d.config_key) << "</td></tr>\n";
  o << "</table>\n";
  if (p.devices.size() >= 2) {
    o << "<h3>Portability</h3>\n" << heatmap_svg(p);
    if (p.portable) {
      o << "<p>Most portable configuration, of the " << p.common << " measured on every device: <b>"
        << esc(p.portable->config_key) << "</b>, at worst " << num(p.portable->worst, 3)
        << " x a device's optimum; performance portability (harmonic mean of optimum/time, Pennycook et al.) "
        << num(p.portable->pp, 3) << ".</p>\n";
    } else {
      o << "<p>No configuration was measured on every device: no most portable one (<code>ktune tune SPEC "
           "--configs-from DEVICE</code> measures another device's best).</p>\n";
    }
    std::vector<std::string> differ;
    for (const db::ParameterEffect& e : p.parameters)
      if (e.differs) differ.push_back(e.name);
    o << "<p>Parameters on which the optima differ: "
      << (differ.empty() ? std::string("none") : esc([&] {
            std::string s;
            for (const std::string& n : differ) s.append(s.empty() ? "" : ", ").append(n);
            return s;
          }()))
      << ".</p>\n";
  }
  for (const db::DeviceSeries& d : ks.devices) device_section(o, ks, d, p, opt);
  o << "</section>\n";
}

}  // namespace

std::string report_html(const std::vector<db::KernelSeries>& kernels, const ReportOptions& options) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << esc(options.title)
    << "</title>\n<style>" << kStyle << "</style></head>\n<body>\n<h1>" << esc(options.title) << "</h1>\n";
  if (!options.source.empty()) o << "<p class=\"note\">Results from " << esc(options.source) << ".</p>\n";
  o << "<nav><ul>\n";
  for (const db::KernelSeries& ks : kernels) {
    const std::string size = db::problem_size_key(ks.problem_size);
    o << "<li><a href=\"#" << anchor(ks.kernel + "-" + size) << "\">" << esc(ks.kernel) << " " << esc(size) << "</a>: ";
    for (size_t i = 0; i < ks.devices.size(); ++i)
      o << (i ? ", " : "") << "<a href=\"#" << anchor(ks.kernel + "-" + size + "-" + ks.devices[i].device) << "\">"
        << esc(ks.devices[i].device) << "</a>";
    o << "</li>\n";
  }
  o << "</ul></nav>\n";
  for (const db::KernelSeries& ks : kernels) kernel_section(o, ks, options);
  o << "</body></html>\n";
  return o.str();
}

}  // namespace ktune
