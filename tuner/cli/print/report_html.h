// `ktune report`: one self-contained HTML page of the results database, its
// plots inline SVG written here (no script, no stylesheet or font fetched,
// nothing beside the file). Per kernel and problem size:
//  * with two devices or more, the portability heatmap (db/portability.h:
//    time on a device of another's optimum / its own optimum), the most
//    portable configuration with its worst ratio and PP, and the parameters
//    on which the optima differ;
//  * per device (named as stored): the distribution of measured times (a
//    histogram on a log axis, the optimum and the most portable configuration
//    marked), each run's best-so-far against the exact expectation of random
//    search without replacement over the same measured configurations
//    (search/compare.h random_expected_best), the fastest configurations with
//    their compiler figures and metrics, and the effect of each parameter.
// The same database gives the same bytes.
#pragma once

#include <string>
#include <vector>

#include "db/portability.h"
#include "db/roofline.h"

namespace ktune {

struct ReportOptions {
  std::string title = "ktune report";
  std::string source;       // shown in the page: where the results came from
  size_t top = 10;          // fastest configurations listed per device
  size_t max_runs = 6;      // runs drawn per device (the latest; longer ones first on ties)
  // The devices' roofs: profiled configurations (`ktune profile`) then show
  // their achieved occupancy and roofline position. nullptr: not shown.
  const db::Roofs* roofs = nullptr;
};

std::string report_html(const std::vector<db::KernelSeries>& kernels, const ReportOptions& options = {});

}  // namespace ktune
