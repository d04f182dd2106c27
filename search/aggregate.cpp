// A comparison over many recorded spaces (a manifest of recordings):
// each strategy's medians and scores over the spaces, and the
// points where it falls behind exact random search, each with its sign test.
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "search/compare.h"

namespace ktune {

std::vector<AggregateRow> aggregate(const std::vector<LabelledResult>& spaces, double tolerance) {
  std::vector<AggregateRow> rows;
  auto row_of = [&](const std::string& name) -> AggregateRow& {
    for (AggregateRow& r : rows)
      if (r.name == name) return r;
    rows.push_back({});
    rows.back().name = name;
    return rows.back();
  };
  std::map<std::string, std::map<uint64_t, std::vector<double>>> at;  // name -> budget -> per-space medians
  std::map<std::string, std::map<double, std::vector<double>>> at_time;
  std::map<std::string, std::pair<double, size_t>> p_time;  // name -> (sum, spaces)
  for (const LabelledResult& sp : spaces)
    for (const StrategyComparison& s : sp.result.strategies) {
      AggregateRow& r = row_of(s.name);
      r.min_p_score = r.spaces == 0 ? s.p_score : std::min(r.min_p_score, s.p_score);
      r.mean_p_score += s.p_score;
      ++r.spaces;
      if (s.p_score_time) p_time[s.name].first += *s.p_score_time, ++p_time[s.name].second;
      for (size_t i = 0; i < s.fraction_at_time.size() && i < sp.result.random_at_time.size(); ++i) {
        const double t = s.fraction_at_time[i].first;
        const double f = s.fraction_at_time[i].second.median.value_or(0.0);
        const double rf = sp.result.random_at_time[i].second.median.value_or(0.0);
        at_time[s.name][t].push_back(f);
        if (f > rf + tolerance) ++r.time_ahead;
        else if (f >= rf - tolerance) ++r.time_level;
        else {
          ++r.time_behind;
          std::ostringstream label;
          label << sp.label << "@" << t << "s";
          r.time_behind_at.push_back(label.str());
        }
      }
      for (const auto& [b, spread] : s.fraction_at_budget) {
        const double f = spread.median.value_or(0.0);
        at[s.name][b].push_back(f);
        for (const RandomAtBudget& ra : sp.result.random_exact) {
          if (ra.budget != b) continue;
          if (f > ra.median_fraction + tolerance) ++r.ahead;
          else if (f >= ra.median_fraction - tolerance) ++r.level;
          else {
            ++r.behind;
            r.behind_at.push_back(sp.label + "@" + std::to_string(b));
            size_t reached = 0;
            for (const auto& [budget, n] : s.runs_at_random_median)
              if (budget == b) reached = n;
            r.behind_p.push_back(sign_test_p(reached, s.runs));
            if (r.behind_p.back() < 0.05) ++r.behind_significant;
          }
        }
      }
    }
  for (AggregateRow& r : rows) {
    r.mean_p_score /= static_cast<double>(std::max<size_t>(r.spaces, 1));
    for (auto& [b, v] : at[r.name]) {
      std::vector<std::optional<double>> xs(v.begin(), v.end());
      r.median_fraction_at_budget.emplace_back(b, spread_of(std::move(xs)).median.value_or(0.0));
    }
    for (auto& [t, v] : at_time[r.name]) {
      std::vector<std::optional<double>> xs(v.begin(), v.end());
      r.median_fraction_at_time.emplace_back(t, spread_of(std::move(xs)).median.value_or(0.0));
    }
    if (auto it = p_time.find(r.name); it != p_time.end() && it->second.second > 0)
      r.mean_p_score_time = it->second.first / double(it->second.second);
  }
  return rows;
}

double sign_test_p(size_t k, size_t n) {
  if (k >= n) return 1.0;
  const double dn = static_cast<double>(n);
  const double log_all = std::lgamma(dn + 1) - dn * std::log(2.0);  // log(n! / 2^n)
  double sum = 0;
  for (size_t i = 0; i <= k; ++i) {
    const double di = static_cast<double>(i);
    sum += std::exp(log_all - std::lgamma(di + 1) - std::lgamma(dn - di + 1));
  }
  return std::min(1.0, sum);
}

}  // namespace ktune
