// Written by hand so that every number is printed as Python prints it
// (python_float_repr), as Kernel Tuner's own JSON files print theirs.
#include "tuner/cli/print/compare_json.h"

#include <cmath>
#include <sstream>

namespace ktune {
namespace {

std::string number(double x) {
  if (!std::isfinite(x)) return "null";
  return python_float_repr(x);
}
std::string number(const std::optional<double>& x) { return x ? number(*x) : "null"; }

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string spread(const Spread& s) {
  std::ostringstream o;
  o << "{\"median\":" << number(s.median) << ",\"q25\":" << number(s.q25) << ",\"q75\":" << number(s.q75)
    << ",\"min\":" << number(s.min) << ",\"max\":" << number(s.max) << ",\"reached\":" << s.reached << "}";
  return o.str();
}

template <class K>
std::string keyed(const std::vector<std::pair<K, Spread>>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ",";
    out += quoted(Value(items[i].first).str()) + ":" + spread(items[i].second);
  }
  return out + "}";
}

// {"0.9": median, ...}: the shape the command's contract promises (null = not reached).
std::string medians(const std::vector<std::pair<double, Spread>>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i)
    out.append(i ? "," : "").append(quoted(Value(items[i].first).str())).append(":").append(
        number(items[i].second.median));
  return out + "}";
}

}  // namespace

std::string to_json(const CompareResult& r) {
  std::ostringstream o;
  o << "{\"optimum\":" << number(r.optimum) << ",\"valid\":" << r.valid << ",\"recorded\":" << r.recorded
    << ",\"partial\":" << (r.partial ? "true" : "false") << ",\"interrupted\":" << (r.interrupted ? "true" : "false")
    << ",\"failed\":" << r.failed
    << ",\"max_fevals\":" << r.max_fevals << ",\"higher_is_better\":" << (r.higher_is_better ? "true" : "false")
    << ",\"random_exact\":{\"fraction_at_budget\":{";
  for (size_t i = 0; i < r.random_exact.size(); ++i)
    o << (i ? "," : "") << quoted(std::to_string(r.random_exact[i].budget)) << ":{\"median\":"
      << number(r.random_exact[i].median_fraction) << ",\"mean\":" << number(r.random_exact[i].mean_fraction) << "}";
  o << "},\"evals_to_fraction\":{";
  for (size_t i = 0; i < r.random_exact_to_fraction.size(); ++i) {
    const RandomToFraction& rt = r.random_exact_to_fraction[i];
    o << (i ? "," : "") << quoted(Value(rt.fraction).str()) << ":{\"median\":" << rt.median
      << ",\"mean\":" << number(rt.mean) << ",\"qualifying\":" << rt.qualifying << "}";
  }
  o << "}},\"random_at_time\":" << keyed(r.random_at_time) << ",\"strategies\":[";
  for (size_t i = 0; i < r.strategies.size(); ++i) {
    const StrategyComparison& s = r.strategies[i];
    if (i) o << ",";
    o << "{\"name\":" << quoted(s.name) << ",\"p_score\":" << number(s.p_score)
      << ",\"p_score_runs\":" << spread(s.p_score_runs) << ",\"max_evals_used\":" << s.max_evals_used
      << ",\"mean_time_s\":" << number(s.mean_time_s)
      << ",\"p_score_time\":" << (s.p_score_time ? number(*s.p_score_time) : std::string("null"))
      << ",\"gpu_busy_share\":" << number(s.gpu_busy_share) << ",\"mean_timed_evals\":" << number(s.mean_timed_evals)
      << ",\"evals_to_fraction\":" << medians(s.evals_to_fraction)
      << ",\"evals_to_fraction_spread\":" << keyed(s.evals_to_fraction)
      << ",\"fraction_at_budget\":" << keyed(std::vector<std::pair<int64_t, Spread>>(
                                           s.fraction_at_budget.begin(), s.fraction_at_budget.end()))
      << ",\"runs\":" << s.runs << ",\"runs_at_random_median\":{";
    for (size_t k = 0; k < s.runs_at_random_median.size(); ++k)
      o << (k ? "," : "") << quoted(std::to_string(s.runs_at_random_median[k].first)) << ":"
        << s.runs_at_random_median[k].second;
    o << "},\"fraction_at_time\":" << keyed(s.fraction_at_time) << ",\"median_curve\":[";
    for (size_t k = 0; k < s.median_curve.size(); ++k) o << (k ? "," : "") << number(s.median_curve[k]);
    o << "]}";
  }
  o << "]}";
  return o.str();
}

}  // namespace ktune
