// The charts of `ktune report` (report_html.cpp) as inline SVG: a device's
// measured times as a histogram on a log axis, each run's best-so-far against
// random search, the portability heat map and one parameter's effect; with
// the text helpers the page and its charts share.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "db/portability.h"
#include "search/expr/value.h"

namespace ktune::report {

// Text made safe inside HTML and SVG (< > & " ').
std::string esc(const std::string& s);
// `v` with `digits` decimals.
std::string num(double v, int digits = 1);
// A number with `digits` significant digits, without an exponent in the
// usual range (1547, 0.1301, 2.5).
std::string sig(double v, int digits = 3);

// The measured times of one device (ascending) as a histogram on a log axis,
// the optimum and the most portable configuration's time marked.
std::string histogram_svg(const std::vector<double>& times, double optimum, std::optional<double> portable,
                          const std::string& title);

// One run's curve: its label and its best time after each evaluation.
struct RunCurve {
  std::string label;
  std::vector<std::optional<double>> best;  // best time after k evaluations (none before a success)
};

// Each run's best-so-far / optimum against random search's expectation.
std::string convergence_svg(const std::vector<RunCurve>& runs, const std::vector<double>& random, double optimum,
                            const std::string& title);
// Time on a device of another's optimum / its own optimum, coloured by ratio.
std::string heatmap_svg(const db::Portability& p);
// One parameter's effect on one device: per value, fastest time / optimum,
// on a y axis up to `y_max` shared by the device's parameters.
std::string effect_svg(const std::string& name, const db::ParameterDeviceEffect& e, const Value& at_optimum,
                       double y_max);

}  // namespace ktune::report
