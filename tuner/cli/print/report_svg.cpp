#include "tuner/cli/print/report_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace ktune::report {
namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                    "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
constexpr const char* kBars = "#4c78a8";      // histogram bars
constexpr const char* kOptimum = "#2ca02c";   // the device's optimum
constexpr const char* kPortable = "#ff7f0e";  // the most portable configuration
constexpr const char* kRandom = "#555555";    // random search's expectation

std::string label(double v) { return sig(v, 3); }

// A "nice" step (1, 2 or 5 times a power of ten) giving about `count` ticks.
double nice_step(double range, int count) {
  if (!(range > 0)) return 1;
  const double raw = range / count;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw * 0.999) return m * p;
  return 10 * p;
}

// Ticks of a log axis over [lo, hi] (> 0): 1, 2, 5 times powers of ten, or
// only the powers where those are too many.
std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> out;
  for (const std::vector<double>& mult : {std::vector<double>{1, 2, 5}, std::vector<double>{1}}) {
    out.clear();
    for (double p = std::pow(10.0, std::floor(std::log10(lo))); p <= hi * 1.0001; p *= 10)
      for (double m : mult)
        if (m * p >= lo * 0.9999 && m * p <= hi * 1.0001) out.push_back(m * p);
    if (out.size() <= 8) break;
  }
  if (out.size() < 3) {  // a narrow range: evenly spaced nice values
    out.clear();
    const double step = nice_step(hi - lo, 4);
    for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi * 1.0001; t += step) out.push_back(t);
  }
  return out;
}

// One plot area in an SVG: maps data to pixels on linear or log axes.
struct Frame {
  double width = 520, height = 270;
  double left = 62, right = 16, top = 34, bottom = 46;
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  bool xlog = false, ylog = false;

  double w() const { return width - left - right; }
  double h() const { return height - top - bottom; }
  double fx(double v) const {
    const double t = xlog ? (std::log(v) - std::log(x0)) / (std::log(x1) - std::log(x0)) : (v - x0) / (x1 - x0);
    return left + w() * (std::isfinite(t) ? t : 0);
  }
  double fy(double v) const {
    const double t = ylog ? (std::log(v) - std::log(y0)) / (std::log(y1) - std::log(y0)) : (v - y0) / (y1 - y0);
    return top + h() - h() * (std::isfinite(t) ? t : 0);
  }
};

void svg_open(std::ostringstream& o, const Frame& f, const std::string& cls, const std::string& title) {
  o << "<svg class=\"" << cls << "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << f.width << "\" height=\""
    << f.height << "\" viewBox=\"0 0 " << f.width << ' ' << f.height << "\" role=\"img\" aria-label=\"" << esc(title)
    << "\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"" << f.left << "\" y=\"20\" "
    << "font-size=\"13\" font-weight=\"bold\">" << esc(title) << "</text>\n";
}

void axes(std::ostringstream& o, const Frame& f, const std::string& xlabel, const std::string& ylabel,
          const std::vector<double>& xticks, const std::vector<double>& yticks) {
  o << "<rect x=\"" << f.left << "\" y=\"" << f.top << "\" width=\"" << f.w() << "\" height=\"" << f.h()
    << "\" fill=\"none\" stroke=\"#444\"/>\n";
  for (double t : yticks) {
    const double y = f.fy(t);
    o << "<line x1=\"" << f.left << "\" x2=\"" << num(f.left + f.w()) << "\" y1=\"" << num(y) << "\" y2=\"" << num(y)
      << "\" stroke=\"#e4e4e4\"/><text x=\"" << f.left - 6 << "\" y=\"" << num(y + 4)
      << "\" text-anchor=\"end\" font-size=\"11\">" << label(t) << "</text>\n";
  }
  for (double t : xticks) {
    const double x = f.fx(t);
    o << "<line x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\"" << num(f.top + f.h()) << "\" y2=\""
      << num(f.top + f.h() + 4) << "\" stroke=\"#444\"/><text x=\"" << num(x) << "\" y=\"" << num(f.top + f.h() + 17)
      << "\" text-anchor=\"middle\" font-size=\"11\">" << label(t) << "</text>\n";
  }
  o << "<text x=\"" << num(f.left + f.w() / 2) << "\" y=\"" << num(f.height - 8)
    << "\" text-anchor=\"middle\" font-size=\"12\">" << esc(xlabel) << "</text>\n<text transform=\"translate(14,"
    << num(f.top + f.h() / 2) << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"12\">" << esc(ylabel)
    << "</text>\n";
}

void vertical_marker(std::ostringstream& o, const Frame& f, double x, const char* colour, const std::string& text,
                     int row) {
  const double px = f.fx(x);
  o << "<line class=\"marker\" x1=\"" << num(px) << "\" x2=\"" << num(px) << "\" y1=\"" << f.top << "\" y2=\""
    << num(f.top + f.h()) << "\" stroke=\"" << colour << "\" stroke-width=\"2\" stroke-dasharray=\"5,3\"/>\n"
    << "<text x=\"" << num(std::min(px + 4, f.left + f.w() - 4)) << "\" y=\"" << num(f.top + 14 + 14.0 * row)
    << "\" font-size=\"11\" fill=\"" << colour << "\"" << (px + 4 > f.left + f.w() * 0.6 ? " text-anchor=\"end\"" : "")
    << ">" << esc(text) << "</text>\n";
}

// Heat colour of a ratio: pale green at 1, red at 2 and beyond (log scale).
std::string heat(double ratio) {
  const double t = std::clamp(std::log(ratio) / std::log(2.0), 0.0, 1.0);
  const int r = int(232 + (214 - 232) * t), g = int(245 + (39 - 245) * t), b = int(233 + (40 - 233) * t);
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", r, g, b);
  return buf;
}

}  // namespace

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string sig(double v, int digits) {
  char buf[64];
  if (v == 0 || !std::isfinite(v) || std::fabs(v) >= 1e7 || std::fabs(v) < 1e-4) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
  }
  const int decimals = std::max(0, digits - 1 - int(std::floor(std::log10(std::fabs(v)))));
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string out = buf;
  if (out.find('.') != std::string::npos) {  // 0.200 -> 0.2, 2.00 -> 2
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  return out;
}

std::string histogram_svg(const std::vector<double>& times, double optimum, std::optional<double> portable,
                          const std::string& title) {
  Frame f;
  f.xlog = true;
  const double lo = times.front(), hi = times.back();
  f.x0 = lo / 1.02;
  f.x1 = hi * 1.02;
  if (f.x1 <= f.x0 * 1.05) f.x0 = lo / 1.05, f.x1 = hi * 1.05;
  const size_t bins = std::clamp<size_t>(size_t(2 * std::sqrt(double(times.size()))), 8, 40);
  std::vector<size_t> count(bins, 0);
  const double l0 = std::log(f.x0), l1 = std::log(f.x1);
  for (double t : times) {
    const size_t b = std::min(bins - 1, size_t((std::log(t) - l0) / (l1 - l0) * double(bins)));
    ++count[b];
  }
  const size_t most = *std::max_element(count.begin(), count.end());
  f.y0 = 0;
  const double ystep = nice_step(double(most), 5);
  f.y1 = std::ceil(double(most) / ystep) * ystep;
  std::ostringstream o;
  svg_open(o, f, "plot histogram", title);
  std::vector<double> yticks;
  for (double t = 0; t <= f.y1 + 1e-9; t += ystep) yticks.push_back(t);
  axes(o, f, "time (ms, log scale)", "configurations", log_ticks(f.x0, f.x1), yticks);
  for (size_t b = 0; b < bins; ++b) {
    if (!count[b]) continue;
    const double xa = std::exp(l0 + (l1 - l0) * double(b) / double(bins));
    const double xb = std::exp(l0 + (l1 - l0) * double(b + 1) / double(bins));
    const double y = f.fy(double(count[b]));
    o << "<rect class=\"bar\" x=\"" << num(f.fx(xa) + 0.5) << "\" y=\"" << num(y) << "\" width=\""
      << num(std::max(1.0, f.fx(xb) - f.fx(xa) - 1)) << "\" height=\"" << num(f.top + f.h() - y) << "\" fill=\""
      << kBars << "\"><title>" << count[b] << " configurations, " << label(xa) << "-" << label(xb)
      << " ms</title></rect>\n";
  }
  vertical_marker(o, f, optimum, kOptimum, "optimum " + label(optimum) + " ms", 0);
  if (portable) vertical_marker(o, f, *portable, kPortable, "most portable " + label(*portable) + " ms", 1);
  o << "</svg>\n";
  return o.str();
}

std::string convergence_svg(const std::vector<RunCurve>& runs, const std::vector<double>& random, double optimum,
                            const std::string& title) {
  Frame f;
  f.width = 600;
  f.right = 170;  // the legend
  size_t n = random.size();
  for (const RunCurve& r : runs) n = std::max(n, r.best.size());
  f.xlog = n > 40;
  f.x0 = 1;
  f.x1 = std::max<double>(double(n), 2);
  f.ylog = true;
  f.y0 = 1;
  double top = 1.1;
  if (!random.empty()) top = std::max(top, random.front() / optimum);
  for (const RunCurve& r : runs)
    for (const auto& b : r.best)
      if (b) top = std::max(top, std::min(*b / optimum, 1e6));
  f.y1 = top * 1.05;
  std::ostringstream o;
  svg_open(o, f, "plot convergence", title);
  std::vector<double> xticks;
  if (f.xlog) xticks = log_ticks(f.x0, f.x1);
  else
    for (double t = 1, s = nice_step(f.x1 - 1, 8); t <= f.x1 + 1e-9; t = (t == 1 && s > 1 ? s : t + s))
      xticks.push_back(t);
  axes(o, f, std::string("evaluations") + (f.xlog ? " (log scale)" : ""), "best so far / optimum (log)", xticks,
       log_ticks(f.y0, f.y1));
  auto polyline = [&](const std::vector<std::optional<double>>& ys, const char* colour, const char* extra,
                      const char* cls) {
    std::string points;
    double last_x = -1e9, last_y = -1e9;
    for (size_t k = 0; k < ys.size(); ++k) {
      if (!ys[k]) continue;
      const double x = f.fx(double(k + 1)), y = f.fy(*ys[k] / optimum);
      // A point within half a pixel of the last one drawn adds nothing (long runs on a log axis).
      if (std::fabs(x - last_x) < 0.5 && std::fabs(y - last_y) < 0.5 && k + 1 < ys.size()) continue;
      last_x = x, last_y = y;
      points.append(points.empty() ? "" : " ").append(num(x)).append(",").append(num(y));
    }
    if (points.empty()) return;
    o << "<polyline class=\"" << cls << "\" fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\" " << extra
      << " points=\"" << points << "\"/>\n";
  };
  std::vector<std::optional<double>> r(random.begin(), random.end());
  polyline(r, kRandom, "stroke-dasharray=\"6,4\"", "random");
  for (size_t i = 0; i < runs.size(); ++i)
    polyline(runs[i].best, kPalette[i % std::size(kPalette)], "", "run");
  const double lx = f.width - f.right + 12;
  auto legend = [&](size_t row, const char* colour, const std::string& text, bool dashed) {
    const double y = f.top + 8 + 18.0 * double(row);
    o << "<line x1=\"" << num(lx) << "\" x2=\"" << num(lx + 22) << "\" y1=\"" << num(y) << "\" y2=\"" << num(y)
      << "\" stroke=\"" << colour << "\" stroke-width=\"3\"" << (dashed ? " stroke-dasharray=\"6,4\"" : "")
      << "/><text x=\"" << num(lx + 27) << "\" y=\"" << num(y + 4) << "\" font-size=\"11\">" << esc(text)
      << "</text>\n";
  };
  legend(0, kRandom, "random search (exact)", true);
  for (size_t i = 0; i < runs.size(); ++i) legend(i + 1, kPalette[i % std::size(kPalette)], runs[i].label, false);
  o << "</svg>\n";
  return o.str();
}

std::string heatmap_svg(const db::Portability& p) {
  const size_t n = p.devices.size();
  size_t longest = 10, longest_row = 10;
  for (const auto& d : p.devices) longest = std::max(longest, d.device.size());
  longest_row = longest;
  if (p.portable) longest_row = std::max(longest_row, p.portable->config_key.size() + 15);
  const double label_w = std::min(460.0, 7.0 * double(longest_row) + 16), cell_w = 96, cell_h = 34;
  const double top = 40 + std::min(240.0, 5.2 * double(longest));
  const size_t rows = n + (p.portable ? 1 : 0);
  const double width = std::max(label_w + cell_w * double(n) + 60, 640.0), height = top + cell_h * double(rows) + 50;
  std::ostringstream o;
  o << "<svg class=\"plot heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width, 0) << "\" height=\""
    << num(height, 0) << "\" viewBox=\"0 0 " << num(width, 0) << ' ' << num(height, 0)
    << "\" role=\"img\" aria-label=\"portability matrix\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"8\" y=\"18\" font-size=\"13\" font-weight=\"bold\">time on the column's device of the row's "
       "optimum / that device's optimum</text>\n";
  for (size_t b = 0; b < n; ++b) {
    const double x = label_w + cell_w * (double(b) + 0.5);
    o << "<text transform=\"translate(" << num(x) << "," << num(top - 8) << ") rotate(-35)\" font-size=\"12\">"
      << esc(p.devices[b].device) << "</text>\n";
  }
  auto row = [&](size_t r, const std::string& name, const std::vector<std::pair<std::optional<double>, std::string>>& cells,
                 bool bold) {
    const double y = top + cell_h * double(r);
    o << "<text x=\"" << num(label_w - 8) << "\" y=\"" << num(y + cell_h / 2 + 4)
      << "\" text-anchor=\"end\" font-size=\"12\"" << (bold ? " font-weight=\"bold\"" : "") << ">" << esc(name)
      << "</text>\n";
    for (size_t b = 0; b < cells.size(); ++b) {
      const double x = label_w + cell_w * double(b);
      const auto& [ratio, text] = cells[b];
      o << "<rect class=\"cell\" x=\"" << num(x + 1) << "\" y=\"" << num(y + 1) << "\" width=\"" << num(cell_w - 2)
        << "\" height=\"" << num(cell_h - 2) << "\" fill=\"" << (ratio ? heat(*ratio) : "#d9d9d9") << "\""
        << (ratio ? "" : " stroke=\"#999\" stroke-dasharray=\"3,3\"") << "/><text x=\"" << num(x + cell_w / 2)
        << "\" y=\"" << num(y + cell_h / 2 + 4) << "\" text-anchor=\"middle\" font-size=\"" << (ratio ? 13 : 10)
        << "\"" << (ratio && *ratio > 1.45 ? " fill=\"white\"" : "") << ">" << esc(text) << "</text>\n";
    }
  };
  for (size_t a = 0; a < n; ++a) {
    std::vector<std::pair<std::optional<double>, std::string>> cells;
    for (const db::PortabilityCell& c : p.matrix[a]) {
      if (c.ratio) cells.emplace_back(c.ratio, num(*c.ratio, 3));
      else if (c.state == db::CellState::Failed) cells.emplace_back(std::nullopt, std::string("failed: ") + db::to_string(c.status));
      else cells.emplace_back(std::nullopt, "not measured");
    }
    row(a, p.devices[a].device, cells, false);
  }
  if (p.portable) {
    std::vector<std::pair<std::optional<double>, std::string>> cells;
    for (double r : p.portable->ratios) cells.emplace_back(r, num(r, 3));
    row(n, "most portable: " + p.portable->config_key, cells, true);
  }
  o << "<text x=\"8\" y=\"" << num(height - 14) << "\" font-size=\"11\" fill=\"#555\">rows: the optimum of each "
    << "device (and the most portable configuration); grey: never measured there, or failed</text>\n</svg>\n";
  return o.str();
}

std::string effect_svg(const std::string& name, const db::ParameterDeviceEffect& e, const Value& at_optimum,
                       double y_max) {
  Frame f;
  f.width = std::max(210.0, 40.0 * double(e.values.size()) + 80);
  f.height = 196;
  f.left = 48;
  f.right = 10;
  f.top = 42;
  f.bottom = 40;
  f.ylog = true;
  f.y0 = 1;
  f.y1 = y_max;
  std::ostringstream o;
  svg_open(o, f, "plot effect", name);
  o << "<text x=\"" << f.left << "\" y=\"34\" font-size=\"11\" fill=\"#555\">explains "
    << num(100 * e.variance_explained, 0) << "% of the variance</text>\n";
  axes(o, f, "value", "best / optimum", {}, log_ticks(f.y0, f.y1));
  const double slot = f.w() / double(std::max<size_t>(1, e.values.size()));
  for (size_t i = 0; i < e.values.size(); ++i) {
    const db::ValueEffect& v = e.values[i];
    const double x = f.left + slot * double(i);
    const double y = f.fy(std::max(v.best_ratio, 1.0005));
    const bool best = v.value == at_optimum;
    o << "<rect class=\"bar\" x=\"" << num(x + slot * 0.15) << "\" y=\"" << num(y) << "\" width=\"" << num(slot * 0.7)
      << "\" height=\"" << num(f.top + f.h() - y) << "\" fill=\"" << (best ? kOptimum : kBars) << "\"><title>"
      << esc(name) << " = " << esc(v.value.str()) << ": " << v.configs << " configurations, fastest "
      << num(v.best_ratio, 3) << " x the optimum</title></rect>\n<text x=\"" << num(x + slot / 2) << "\" y=\""
      << num(f.top + f.h() + 15) << "\" text-anchor=\"middle\" font-size=\"11\"" << (best ? " font-weight=\"bold\"" : "")
      << ">" << esc(v.value.str()) << "</text>\n<text x=\"" << num(x + slot / 2) << "\" y=\"" << num(y - 3)
      << "\" text-anchor=\"middle\" font-size=\"9\">" << num(v.best_ratio, 2) << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace ktune::report
