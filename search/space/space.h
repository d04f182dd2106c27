// The search space: typed tunable parameters, restrictions over them, and the
// set of valid configurations.
//
// A configuration is stored compactly as one value index per parameter
// (Config). Construction is constraint-aware: parameters are ordered so that
// restricted ones come first, and each restriction is tested as soon as every
// parameter it names is bound, pruning whole subtrees; parameters that no
// restriction names are never enumerated, only multiplied in. A space too
// large to enumerate still reports its exact Cartesian size at once and can be
// sampled (uniformly among valid configurations) without enumeration.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "search/expr/expr.h"
#include "search/expr/value.h"

namespace ktune {

struct Parameter {
  std::string name;
  std::vector<Value> values;  // in the order the user gave
  ValueType type = ValueType::Int;
  SourceLocation where;  // where it was declared, for messages
};

// Value index per parameter, in parameters() order.
using Config = std::vector<uint32_t>;
// Hashes a Config for unordered containers (the one hash every part of search uses).
struct ConfigHash {
  size_t operator()(const Config& c) const noexcept;
};

enum class NeighbourKind {
  Hamming,   // differs in exactly one parameter (any other value)
  Adjacent,  // differs in one parameter by one position in its value list
  // Hamming, and where a one-parameter change alone is invalid, that change
  // with the one other parameter moved to its nearest value that makes it
  // valid (fewest positions in its value list; every parameter that gets
  // there as near is one neighbour each). Restrictions couple parameters (a
  // block's x and y extents under a thread limit): from (16, 64) under
  // x*y <= 1024 the step to x = 32 is (32, 32), which no Hamming step reaches.
  HammingRepaired,
};

class SearchSpace {
 public:
  // Compiles restrictions against the parameters (slot i = parameter i) and the
  // constants. Throws Error::bad_input for unknown names (with location), an
  // empty value list, duplicate parameter names, a NaN or infinite value, a
  // restriction that can never give a bool (`p % 32`, a string, a list), and
  // one that reads no parameter and raises.
  SearchSpace(std::vector<Parameter> parameters, std::vector<expr::Expression> restrictions,
              std::map<std::string, Value, std::less<>> constants = {});

  const std::vector<Parameter>& parameters() const;
  const std::vector<expr::Expression>& restrictions() const;
  int parameter_index(std::string_view name) const;  // -1 if absent

  // Exact product of the value-list sizes, as a decimal string (may exceed 2^64).
  std::string cartesian_size() const;
  // The same as a double (for ratios and estimates).
  double cartesian_size_approx() const;

  // Exact number of valid configurations. Enumerates (with pruning) on first
  // call and caches. Parameters named by no restriction are multiplied in.
  uint64_t count_valid() const;

  // True when every restriction holds (an evaluation error counts as false).
  bool is_valid(const Config& c) const;

  // A restriction that raised an error (division by zero, `p in 5`, an
  // overflow; see CompiledExpr::truth) for some combinations of the
  // parameters, which therefore count as invalid configurations. Known once
  // the space has been counted (count_valid() or indexed access); empty
  // before, and when none raised.
  struct RaisedRestriction {
    size_t restriction = 0;  // index into restrictions()
    uint64_t count = 0;      // combinations of the restricted parameters it raised for
    uint64_t tested = 0;     // combinations it was tested on
    std::string example;     // the first: "p=0, q=4: division by zero"
  };
  std::vector<RaisedRestriction> raised_restrictions() const;

  // --- Indexed access to the valid set (materialises it on first use). ---
  // REQUIRES: count_valid() fits in memory; throws Error::failed if over `max_materialise()`.
  // Indices follow a fixed order chosen by the constraint-aware walk (stable
  // for a given space), not lexicographic order in parameters(). Only the
  // restricted parameters are stored (bit-packed); unrestricted ones are
  // mapped by mixed-radix arithmetic. at() of an index >= size() throws Error::failed.
  uint64_t size() const { return count_valid(); }
  Config at(uint64_t index) const;
  std::optional<uint64_t> index_of(const Config& c) const;

  // Uniform random valid configurations, distinct when unique=true (up to the
  // number of valid ones). Works without enumerating huge spaces (rejection).
  std::vector<Config> sample(size_t n, std::mt19937_64& rng, bool unique = true) const;

  // Valid neighbours of c.
  std::vector<Config> neighbours(const Config& c, NeighbourKind kind) const;

  // Parameter values of a configuration, in parameters() order.
  std::vector<Value> values(const Config& c) const;
  // ktune::config_key (search/expr/value.h) of the configuration's values.
  std::string config_key(const Config& c) const;
  // Finds the value index of each named value; nullopt if any value is not in its list.
  std::optional<Config> config_of(const std::vector<Value>& values) const;

  static constexpr uint64_t max_materialise() { return uint64_t{1} << 31; }

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace ktune
