// What tuner/cli.h shares between the commands: the results database's
// path and duration options.
#include "tuner/cli.h"

#include <cmath>
#include <cstdlib>

#include "search/error.h"
#include "tuner/spec.h"

namespace ktune::cli {

std::string ResultsOptions::resolved_db() const {
  if (!db.empty()) return db;
  if (const char* env = std::getenv("KTUNE_DB"); env && *env) return env;
  return "ktune.db";
}

double duration_option(const std::string& option, const std::string& text) {
  if (auto seconds = parse_duration(text)) return *seconds;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (!text.empty() && end && *end == 0 && v > 0 && std::isfinite(v)) return v;
  throw Error::bad_input(option + ": '" + text + "' is not a duration (e.g. 90, 90s, 10m, 1.5h)");
}

}  // namespace ktune::cli
