// Private to search/space/: the state behind a SearchSpace and the
// constraint-aware walk over it.
//
// The parameters split in two groups. *Enumerated* ones are named by at least
// one non-constant restriction; they are bound one by one in `order` and each
// restriction is tested at the depth (`checks_at`) where its last parameter is
// bound, so a failing prefix prunes its whole subtree. *Free* ones are named by
// no restriction: every combination of them is valid, so they are never walked,
// only multiplied in (mixed radix, parameters() order, last one fastest).
//
// A valid configuration's global index is  e * free_product + f,  where e is
// the rank of its enumerated part in walk order and f its free part's rank.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "search/space/space.h"

namespace ktune::space_detail {

// Rows of value indices packed into fixed-width bit fields, most significant
// first, so that comparing packed words lexicographically compares the rows.
// Rows pushed in ascending order can then be found by binary search.
class RowStore {
 public:
  // One radix (number of values) per field.
  explicit RowStore(const std::vector<uint32_t>& radices);

  // REQUIRES: row is greater than every row pushed before.
  void push(const uint32_t* row);
  void get(uint64_t i, uint32_t* row) const;
  std::optional<uint64_t> find(const uint32_t* row) const;
  uint64_t size() const { return rows_; }
  size_t bytes() const { return data_.size() * sizeof(uint64_t); }

 private:
  struct Field {
    uint32_t word = 0;
    uint32_t shift = 0;
    uint64_t mask = 0;
  };
  void pack(const uint32_t* row, uint64_t* out) const;

  std::vector<Field> fields_;
  size_t stride_ = 0;  // uint64 words per row (0 when every radix is 1)
  uint64_t rows_ = 0;
  std::vector<uint64_t> data_;
};

}  // namespace ktune::space_detail

namespace ktune {

struct SearchSpace::Impl {
  std::vector<Parameter> params;
  std::vector<expr::Expression> restrictions;
  std::vector<expr::CompiledExpr> checks;       // the non-constant restrictions
  std::vector<size_t> check_restriction;        // per check: its index in restrictions
  std::vector<std::vector<int>> checks_of;      // per parameter: checks naming it
  bool empty = false;                           // a constant restriction is false

  std::vector<int> order;                       // enumerated parameters, binding order
  std::vector<std::vector<int>> checks_at;      // per depth: checks completed there
  std::vector<int> free_params;                 // parameters() order
  uint64_t free_product = 1;                    // exact product of free sizes...
  bool free_overflow = false;                   // ...unless it exceeds 2^64
  double enumerated_product = 1;                // Cartesian size of the enumerated part

  std::string cartesian;                        // exact, decimal
  double cartesian_approx = 1;

  // Lazily computed; see count_enumerated() and store().
  mutable std::once_flag count_once;
  mutable uint64_t enumerated_count = 0;
  mutable std::atomic<bool> count_ready{false};
  mutable std::once_flag store_once;
  mutable std::unique_ptr<space_detail::RowStore> rows;
  mutable std::atomic<bool> store_ready{false};
  mutable bool store_too_big = false;

  // Number of valid enumerated parts (walks once, with pruning).
  uint64_t count_enumerated() const;
  // The valid enumerated parts in walk order. Throws Error::failed when there
  // are more than max_materialise().
  const space_detail::RowStore& store() const;

  // What one walk saw of checks that raised (see raised_restrictions()): the
  // first walk to finish publishes its tally, so the figures count each
  // combination once whichever of counting and indexing walked first.
  struct Tally {
    std::vector<uint64_t> tested, raised;  // per check
    std::vector<std::string> example;      // per check: the first that raised
  };
  mutable std::mutex tally_mutex;
  mutable std::optional<Tally> published;
  void publish(Tally t) const;

  // Fills `slots` (one per parameter) with the values of c.
  void bind(const Config& c, std::vector<Value>& slots) const;
  // Every check in `which` holds; a walk passes its tally.
  bool passes(const std::vector<int>& which, const std::vector<Value>& slots, Tally* tally = nullptr) const;
  // True when c has one in-range index per parameter.
  bool well_formed(const Config& c) const;
  void require_well_formed(const Config& c, const char* what) const;

  // Visits every valid enumerated part (indices per depth) in walk order,
  // publishing what raised when it finishes.
  template <class Visit>
  void walk(Visit&& visit) const;

  // Uniform valid configurations drawn from the Cartesian product, each
  // parameter drawn in binding order and the draw abandoned at the first
  // failing check (which keeps it uniform). Throws Error::failed when the
  // acceptance rate is too low to finish.
  std::vector<Config> sample_by_rejection(size_t n, std::mt19937_64& rng, bool unique) const;
  // True when sampling should go through the materialised valid set.
  bool prefers_index() const;

  // Chooses the binding order of the enumerated parameters and the depth at
  // which each check is tested (fills order, checks_at, free_params, products).
  void plan();
};

// Exact decimal product of the value-list sizes (any number of digits).
std::string decimal_product(const std::vector<Parameter>& params);

template <class Visit>
void SearchSpace::Impl::walk(Visit&& visit) const {
  const size_t depth = order.size();
  std::vector<Value> slots(params.size());
  for (size_t p = 0; p < params.size(); ++p) slots[p] = params[p].values.front();
  std::vector<uint32_t> idx(depth, 0);
  if (empty) return;
  if (depth == 0) {
    visit(idx.data());
    return;
  }
  Tally tally;
  tally.tested.assign(checks.size(), 0);
  tally.raised.assign(checks.size(), 0);
  tally.example.assign(checks.size(), {});
  // Iterative depth-first walk: idx[d] is the next value to try at depth d.
  size_t d = 0;
  idx[0] = 0;
  while (true) {
    const auto& values = params[order[d]].values;
    if (idx[d] >= values.size()) {
      if (d == 0) break;
      --d;
      ++idx[d];
      continue;
    }
    slots[order[d]] = values[idx[d]];
    if (!passes(checks_at[d], slots, &tally)) {
      ++idx[d];
      continue;
    }
    if (d + 1 == depth) {
      visit(idx.data());
      ++idx[d];
    } else {
      ++d;
      idx[d] = 0;
    }
  }
  publish(std::move(tally));
}

}  // namespace ktune
