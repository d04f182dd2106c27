// A plain SVG line chart of a strategy comparison: the median fraction of the
// optimum reached (y, 0 to 1) against evaluations (x, 1 to max_fevals), one
// line per strategy, with axes, ticks and a legend. Hand-written SVG, no
// dependencies; the output opens in any browser.
#pragma once

#include <string>

#include "search/compare.h"

namespace ktune {

std::string svg_plot(const CompareResult& result, const std::string& title);
// Writes svg_plot() to path; Error::failed when the file cannot be written.
void write_svg_plot(const CompareResult& result, const std::string& title, const std::string& path);

}  // namespace ktune
