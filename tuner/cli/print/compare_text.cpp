#include "tuner/cli/print/compare_text.h"

#include <sstream>

#include "tuner/cli/print/table.h"

namespace ktune {
namespace {

// Evaluations to a fraction: the median, or "never".
std::string median_text(const Spread& s) { return s.median ? fixed(*s.median, 0) : "never"; }

// A row's cells at the budgets of 20, 50, 100 and 200 evaluations: the median
// fraction of the optimum, "-" where the runs have none.
void budget_cells(std::vector<std::string>& row, const std::vector<std::pair<uint64_t, Spread>>& at) {
  for (uint64_t b : {20, 50, 100, 200}) {
    std::string cell = "-";
    for (const auto& [budget, spread] : at)
      if (budget == b && spread.median) cell = fixed(*spread.median, 3);
    row.push_back(cell);
  }
}

}  // namespace

std::string seconds_text(double s) {
  std::ostringstream o;
  o << s << "s";
  return o.str();
}

void print_time_table(const CompareResult& r, std::ostream& out) {
  std::vector<std::string> head{"strategy"};
  for (const auto& [t, s] : r.random_at_time) head.push_back("at " + seconds_text(t));
  for (const char* h : {"P over time", "evals", "GPU busy"}) head.push_back(h);
  Table t(head);
  for (const StrategyComparison& s : r.strategies) {
    std::vector<std::string> row{s.name};
    for (const auto& [budget, spread] : s.fraction_at_time) row.push_back(spread.median ? fixed(*spread.median, 3) : "0");
    row.push_back(s.p_score_time ? fixed(*s.p_score_time, 3) : "-");
    row.push_back(fixed(s.mean_timed_evals, 0));
    row.push_back(fixed(100 * s.gpu_busy_share, 0) + "%");
    t.add(row);
  }
  std::vector<std::string> row{"random search, on the clock"};
  for (const auto& [budget, spread] : r.random_at_time) row.push_back(spread.median ? fixed(*spread.median, 3) : "0");
  for (const char* c : {"0 (by definition)", "-", "-"}) row.push_back(c);
  t.add(row);
  out << "\nat wall-clock budgets (predicted, ReplayClock): median fraction of the optimum; P over time: as the "
         "P-score, best-so-far at 50 times up to the largest budget against random search's; evals and GPU busy: "
         "mean over the runs to the largest budget\n";
  t.print(out);
}

void print_compare(const Spec& spec, const std::string& device, const std::string& data, size_t runs,
                   const CompareResult& r, const std::string& prior, size_t compile_slots, std::ostream& out) {
  out << "REPLAY of recorded measurements: " << spec.kernel.name << " on " << device << " ("
            << data << ")\n"
            << "space: " << r.valid << " valid configurations (" << r.recorded << " recorded, " << r.failed
            << " of them failed); optimum " << (r.partial ? "of the recorded part " : "") << fixed(r.optimum, 5) << " "
            << (spec.objective == "time" ? "ms" : spec.objective) << "; " << runs << " runs per strategy, budget "
            << r.max_fevals << "\n";
  if (r.partial)
    out << "a PARTIAL recording: strategies keep to the " << r.recorded << " recorded configurations; the optimum, "
              << "the fractions and random search are those of the recorded part, not of the space\n";
  if (!prior.empty()) out << "prior given to the strategies: " << prior << "\n";
  out << "\n";
  Table t({"strategy", "evals to 90%", "to 95%", "to 98%", "at 50 evals", "at 100 evals", "P-score", "predicted s/run"});
  for (const auto& s : r.strategies) {
    std::vector<std::string> row{s.name};
    for (const auto& [f, spread] : s.evals_to_fraction) row.push_back(median_text(spread));
    for (uint64_t b : {uint64_t{50}, uint64_t{100}}) {
      std::string cell = "-";
      for (const auto& [budget, spread] : s.fraction_at_budget)
        if (budget == b && spread.median) cell = fixed(100 * *spread.median, 1) + "%";
      row.push_back(cell);
    }
    row.push_back(fixed(s.p_score, 3));
    row.push_back(fixed(s.mean_time_s, 1));
    t.add(row);
  }
  {
    std::vector<std::string> row{"random search, exact"};
    for (const RandomToFraction& rt : r.random_exact_to_fraction) row.push_back(std::to_string(rt.median));
    for (uint64_t b : {uint64_t{50}, uint64_t{100}}) {
      std::string cell = "-";
      for (const RandomAtBudget& ra : r.random_exact)
        if (ra.budget == b) cell = fixed(100 * ra.median_fraction, 1) + "%";
      row.push_back(cell);
    }
    row.push_back("0 (by definition)");
    row.push_back("-");
    t.add(row);
  }
  t.print(out);
  out << "(medians over runs; 'never': not reached in more than half the runs; the exact row is random search "
               "without replacement, computed, not sampled, its evaluations to a fraction not cut at the budget; "
               "predicted s/run: the wall time a live run of the budget would take, on "
            << compile_slots << " compile processes and one GPU, the strategy's own time included)\n";
  if (!r.random_at_time.empty()) print_time_table(r, out);
}

void print_manifest_space(const LabelledResult& sp, std::ostream& out) {
  const CompareResult& r = sp.result;
  out << sp.label << ": " << r.valid << " valid configurations (" << r.recorded << " recorded, " << r.failed
            << " failed), " << r.random_exact_to_fraction[1].qualifying << " within 95% of the optimum\n";
  Table t({"strategy", "at 20", "at 50", "at 100", "at 200", "evals to 90%", "to 95%", "P-score"});
  for (const StrategyComparison& s : r.strategies) {
    std::vector<std::string> row{s.name};
    budget_cells(row, s.fraction_at_budget);
    for (const auto& [f, spread] : s.evals_to_fraction) row.push_back(median_text(spread));
    row.push_back(fixed(s.p_score, 3));
    t.add(row);
  }
  std::vector<std::string> row{"random search, exact"};
  for (uint64_t b : {20, 50, 100, 200}) {
    std::string cell = "-";
    for (const RandomAtBudget& ra : r.random_exact)
      if (ra.budget == b) cell = fixed(ra.median_fraction, 3);
    row.push_back(cell);
  }
  for (const RandomToFraction& rt : r.random_exact_to_fraction) row.push_back(std::to_string(rt.median));
  row.push_back("0");
  t.add(row);
  t.print(out);
  if (!r.random_at_time.empty()) print_time_table(r, out);
  out << '\n';
}

void print_aggregate(const std::vector<AggregateRow>& agg, size_t spaces, size_t runs, std::ostream& out) {
  out << "over " << spaces << " spaces (" << runs << " runs each): median over spaces of the median "
            << "fraction of the optimum; (space, budget) points against random search, exact\n";
  Table t({"strategy", "at 20", "at 50", "at 100", "at 200", "mean P", "lowest P", "ahead/level/behind"});
  for (const AggregateRow& r : agg) {
    std::vector<std::string> row{r.name};
    for (uint64_t b : {20, 50, 100, 200}) {
      std::string cell = "-";
      for (const auto& [budget, v] : r.median_fraction_at_budget)
        if (budget == b) cell = fixed(v, 3);
      row.push_back(cell);
    }
    row.push_back(fixed(r.mean_p_score, 3));
    row.push_back(fixed(r.min_p_score, 3));
    row.push_back(std::to_string(r.ahead) + "/" + std::to_string(r.level) + "/" + std::to_string(r.behind));
    t.add(row);
  }
  t.print(out);
  if (!agg.empty() && !agg.front().median_fraction_at_time.empty()) {
    std::vector<std::string> head{"strategy"};
    for (const auto& [s, v] : agg.front().median_fraction_at_time) head.push_back("at " + seconds_text(s));
    for (const char* h : {"mean P over time", "ahead/level/behind random"}) head.push_back(h);
    Table tt(head);
    for (const AggregateRow& r : agg) {
      std::vector<std::string> row{r.name};
      for (const auto& [s, v] : r.median_fraction_at_time) row.push_back(fixed(v, 3));
      row.push_back(r.mean_p_score_time ? fixed(*r.mean_p_score_time, 3) : "-");
      row.push_back(std::to_string(r.time_ahead) + "/" + std::to_string(r.time_level) + "/" +
                    std::to_string(r.time_behind));
      tt.add(row);
    }
    out << "\nat wall-clock budgets (predicted): median over spaces of the median fraction; (space, budget) "
                 "points against random search on the same clock\n";
    tt.print(out);
    for (const AggregateRow& r : agg)
      if (!r.time_behind_at.empty()) {
        out << r.name << " behind random search in time at:";
        for (const std::string& b : r.time_behind_at) out << ' ' << b;
        out << '\n';
      }
  }
  for (const AggregateRow& r : agg)
    if (!r.behind_at.empty()) {
      out << r.name << " behind random search at " << r.behind_at.size()
                << (r.behind_at.size() == 1 ? " point, " : " points, ") << r.behind_significant
                << " by more than chance (sign test, p < 0.05):";
      for (size_t i = 0; i < r.behind_at.size(); ++i)
        out << ' ' << r.behind_at[i] << " (p " << fixed(r.behind_p[i], 3) << ")";
      out << '\n';
    }
}

}  // namespace ktune
