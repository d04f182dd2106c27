// `ktune strategies compare` as text tables: one space's comparison (each
// strategy's evaluations to 90/95/98% of the optimum, its fractions at fixed
// budgets, P-score and predicted time, against exact random search), the
// wall-clock budgets, and a manifest's spaces with their aggregate.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "search/compare.h"
#include "tuner/spec/spec.h"

namespace ktune {

// A time budget as the tables and the JSON name it: "10s".
std::string seconds_text(double s);
// The time budgets of one space: each strategy's median fraction at each,
// its score over time, what its runs measured and the GPU's busy share;
// random search on the same clock last.
void print_time_table(const CompareResult& r, std::ostream& out);
// One space's comparison: the space (`data` recorded on `device`, `runs` runs
// per strategy), the strategies and random search exact, and the time
// budgets where given. `prior`: the prior given to the strategies, described
// ("" for none); `compile_slots`: the compile processes the predicted time
// stands for.
void print_compare(const Spec& spec, const std::string& device, const std::string& data, size_t runs,
                   const CompareResult& r, const std::string& prior, size_t compile_slots, std::ostream& out);
// One space of a manifest: each strategy and random search at the budgets.
void print_manifest_space(const LabelledResult& sp, std::ostream& out);
// Over a manifest's `spaces` spaces: each strategy's median fractions and
// scores, and where it falls behind random search.
void print_aggregate(const std::vector<AggregateRow>& agg, size_t spaces, size_t runs, std::ostream& out);

}  // namespace ktune
