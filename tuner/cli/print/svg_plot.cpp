#include "tuner/cli/print/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace ktune {
namespace {

constexpr double kWidth = 760, kHeight = 460;
constexpr double kLeft = 70, kRight = 200, kTop = 40, kBottom = 50;  // margins; the legend sits on the right
constexpr const char* kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#000000", "#aec7e8"};

std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// A "nice" tick step (1, 2 or 5 times a power of ten) giving about `count` ticks.
double tick_step(double range, int count) {
  const double raw = range / count;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

void axes(std::ostringstream& o, double x_max) {
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  o << "<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\"" << w << "\" height=\"" << h
    << "\" fill=\"none\" stroke=\"#333\"/>\n";
  for (int i = 0; i <= 10; i += 2) {
    const double y = kTop + h - h * i / 10.0;
    o << "<line x1=\"" << kLeft << "\" x2=\"" << kLeft + w << "\" y1=\"" << y << "\" y2=\"" << y
      << "\" stroke=\"#ddd\"/>\n<text x=\"" << kLeft - 8 << "\" y=\"" << y + 4
      << "\" text-anchor=\"end\" font-size=\"12\">" << i / 10.0 << "</text>\n";
  }
  const double step = tick_step(std::max(x_max - 1, 1.0), 8);
  for (double t = 0; t <= x_max; t += step) {
    if (t < 1) continue;
    const double x = kLeft + w * (t - 1) / std::max(x_max - 1, 1.0);
    o << "<line x1=\"" << x << "\" x2=\"" << x << "\" y1=\"" << kTop + h << "\" y2=\"" << kTop + h + 5
      << "\" stroke=\"#333\"/>\n<text x=\"" << x << "\" y=\"" << kTop + h + 20
      << "\" text-anchor=\"middle\" font-size=\"12\">" << t << "</text>\n";
  }
  o << "<text x=\"" << kLeft + w / 2 << "\" y=\"" << kHeight - 10
    << "\" text-anchor=\"middle\" font-size=\"13\">evaluations</text>\n"
    << "<text transform=\"translate(18," << kTop + h / 2
    << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"13\">median fraction of optimum</text>\n";
}

}  // namespace

std::string svg_plot(const CompareResult& result, const std::string& title) {
  std::ostringstream o;
  o.precision(5);
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
    << "\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << kLeft << "\" y=\"24\" font-size=\"15\">" << escaped(title) << "</text>\n";
  size_t x_max = 1;
  for (const StrategyComparison& s : result.strategies) x_max = std::max(x_max, s.median_curve.size());
  axes(o, static_cast<double>(x_max));
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  for (size_t i = 0; i < result.strategies.size(); ++i) {
    const StrategyComparison& s = result.strategies[i];
    // Past the palette, the colours come again dashed, so that no two lines look alike.
    const char* colour = kColours[i % std::size(kColours)];
    static constexpr const char* kDashes[] = {"", " stroke-dasharray=\"7,4\"", " stroke-dasharray=\"2,3\""};
    const char* dash = kDashes[(i / std::size(kColours)) % std::size(kDashes)];
    o << "<polyline fill=\"none\" stroke=\"" << colour << "\"" << dash << " stroke-width=\"1.8\" points=\"";
    for (size_t k = 0; k < s.median_curve.size(); ++k) {
      const double x = kLeft + w * static_cast<double>(k) / std::max<double>(static_cast<double>(x_max) - 1, 1);
      const double y = kTop + h - h * std::clamp(s.median_curve[k], 0.0, 1.0);
      o << (k ? " " : "") << x << "," << y;
    }
    o << "\"/>\n";
    const double ly = kTop + 10 + 20.0 * static_cast<double>(i);
    o << "<line x1=\"" << kWidth - kRight + 15 << "\" x2=\"" << kWidth - kRight + 40 << "\" y1=\"" << ly
      << "\" y2=\"" << ly << "\" stroke=\"" << colour << "\"" << dash << " stroke-width=\"3\"/>\n<text x=\""
      << kWidth - kRight + 46 << "\" y=\"" << ly + 4 << "\" font-size=\"12\">" << escaped(s.name) << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

void write_svg_plot(const CompareResult& result, const std::string& title, const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  f << svg_plot(result, title);
  if (!f.good()) throw Error::failed("cannot write the plot to '" + path + "'");
}

}  // namespace ktune
