// SearchSpace: construction and validation, sizing, indexed access,
// neighbours and value/key conversion. The walk lives in enum.cpp,
// sampling in sample.cpp.
#include "search/space/space.h"

#include <cmath>
#include <unordered_set>

#include "search/space/impl.h"

namespace ktune {

namespace {

struct ValueHash {
  size_t operator()(const Value& v) const { return v.hash(); }
};

void validate_values(const Parameter& p) {
  if (p.values.empty()) throw Error::bad_input("parameter '" + p.name + "' has no values", p.where);
  if (p.values.size() > UINT32_MAX)
    throw Error::bad_input("parameter '" + p.name + "' has more than 2^32 values", p.where);
  std::unordered_set<Value, ValueHash> seen;
  for (const Value& v : p.values) {
    if (v.is_list()) {
      throw Error::bad_input("parameter '" + p.name + "': value " + v.repr() +
                                 " is a list; a parameter value must be an int, float, bool or str",
                             p.where);
    }
    // NaN equals nothing, itself included, and neither it nor an infinity
    // can be passed to a kernel as a literal.
    if (v.is_float() && !std::isfinite(v.as_float()))
      throw Error::bad_input("parameter '" + p.name + "': value " + v.repr() + " is not a finite number", p.where);
    // Two equal values would make two configurations with one cache key.
    if (!seen.insert(v).second)
      throw Error::bad_input("parameter '" + p.name + "' lists the value " + v.repr() + " twice", p.where);
  }
}

void validate_parameters(const std::vector<Parameter>& params,
                         const std::map<std::string, Value, std::less<>>& constants) {
  std::unordered_set<std::string> names;
  for (const Parameter& p : params) {
    if (p.name.empty()) throw Error::bad_input("a tunable parameter has an empty name", p.where);
    if (!names.insert(p.name).second)
      throw Error::bad_input("tunable parameter '" + p.name + "' is declared twice", p.where);
    if (constants.count(p.name))
      throw Error::bad_input("tunable parameter '" + p.name + "' has the name of a constant", p.where);
    validate_values(p);
  }
}

}  // namespace

SearchSpace::SearchSpace(std::vector<Parameter> parameters, std::vector<expr::Expression> restrictions,
                         std::map<std::string, Value, std::less<>> constants)
    : impl_(std::make_shared<Impl>()) {
  Impl& s = *impl_;
  validate_parameters(parameters, constants);
  s.params = std::move(parameters);
  s.restrictions = std::move(restrictions);
  expr::Scope scope;
  for (size_t i = 0; i < s.params.size(); ++i) scope.slots[s.params[i].name] = static_cast<int>(i);
  scope.constants = std::move(constants);
  s.checks_of.resize(s.params.size());
  std::vector<ValueType> slot_types;
  for (const Parameter& p : s.params) slot_types.push_back(p.type);
  for (size_t i = 0; i < s.restrictions.size(); ++i) {
    const expr::Expression& r = s.restrictions[i];
    expr::CompiledExpr c = r.compile(scope);
    if (std::string gives = c.never_bool(slot_types); !gives.empty())
      throw Error::bad_input("a restriction must give True or False, but '" + r.text() + "' gives " + gives +
                                 " (a comparison such as '... == 0' is one)",
                             r.where());
    if (c.is_constant()) {
      // Fixed truth value: decide once. It names no parameter, so an error
      // in it is the spec's, not a configuration's.
      try {
        c.eval({});
      } catch (const Error& e) {
        throw Error::bad_input("restriction '" + r.text() + "' names no parameter and cannot be evaluated: " +
                                   e.message(),
                               e.where());
      }
      if (c.truth({}) != expr::CompiledExpr::Truth::True) s.empty = true;
      continue;
    }
    for (int slot : c.slots_used()) s.checks_of[slot].push_back(static_cast<int>(s.checks.size()));
    s.checks.push_back(std::move(c));
    s.check_restriction.push_back(i);
  }
  s.plan();
  s.cartesian = decimal_product(s.params);
  for (const Parameter& p : s.params) s.cartesian_approx *= static_cast<double>(p.values.size());
}

const std::vector<Parameter>& SearchSpace::parameters() const { return impl_->params; }
const std::vector<expr::Expression>& SearchSpace::restrictions() const { return impl_->restrictions; }

int SearchSpace::parameter_index(std::string_view name) const {
  for (size_t i = 0; i < impl_->params.size(); ++i)
    if (impl_->params[i].name == name) return static_cast<int>(i);
  return -1;
}

std::string SearchSpace::cartesian_size() const { return impl_->cartesian; }
double SearchSpace::cartesian_size_approx() const { return impl_->cartesian_approx; }

uint64_t SearchSpace::count_valid() const {
  const Impl& s = *impl_;
  if (s.empty) return 0;
  const uint64_t e = s.count_enumerated();
  if (e == 0) return 0;
  uint64_t total = 0;
  if (s.free_overflow || __builtin_mul_overflow(e, s.free_product, &total)) {
    throw Error::failed("the search space has more than 2^64 valid configurations (" + std::to_string(e) +
                        " valid combinations of its restricted parameters times the " +
                        "unrestricted ones); sample it instead");
  }
  return total;
}

bool SearchSpace::is_valid(const Config& c) const {
  const Impl& s = *impl_;
  if (s.empty || !s.well_formed(c)) return false;
  std::vector<Value> slots;
  s.bind(c, slots);
  for (const expr::CompiledExpr& check : s.checks)
    if (check.truth(slots) != expr::CompiledExpr::Truth::True) return false;
  return true;
}

std::vector<SearchSpace::RaisedRestriction> SearchSpace::raised_restrictions() const {
  const Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.tally_mutex);
  std::vector<RaisedRestriction> out;
  if (!s.published) return out;
  const Impl::Tally& t = *s.published;
  for (size_t c = 0; c < s.checks.size(); ++c)
    if (t.raised[c] > 0) out.push_back({s.check_restriction[c], t.raised[c], t.tested[c], t.example[c]});
  return out;
}

Config SearchSpace::at(uint64_t index) const {
  const Impl& s = *impl_;
  // Materialise first: the count then comes from the store, not a second walk.
  const space_detail::RowStore& rows = s.store();
  const uint64_t total = count_valid();
  if (index >= total) {
    throw Error::failed("configuration index " + std::to_string(index) + " is out of range (the space has " +
                        std::to_string(total) + " valid configurations)");
  }
  Config c(s.params.size(), 0);
  std::vector<uint32_t> row(s.order.size());
  rows.get(index / s.free_product, row.data());
  for (size_t d = 0; d < s.order.size(); ++d) c[s.order[d]] = row[d];
  uint64_t f = index % s.free_product;
  for (size_t k = s.free_params.size(); k-- > 0;) {
    const int p = s.free_params[k];
    const uint64_t n = s.params[p].values.size();
    c[p] = static_cast<uint32_t>(f % n);
    f /= n;
  }
  return c;
}

std::optional<uint64_t> SearchSpace::index_of(const Config& c) const {
  const Impl& s = *impl_;
  if (!is_valid(c)) return std::nullopt;  // cheap, and spares materialising
  const space_detail::RowStore& rows = s.store();
  count_valid();  // throws if indices would not fit in 64 bits
  std::vector<uint32_t> row(s.order.size());
  for (size_t d = 0; d < s.order.size(); ++d) row[d] = c[s.order[d]];
  const std::optional<uint64_t> e = rows.find(row.data());
  if (!e) return std::nullopt;
  uint64_t f = 0;
  for (int p : s.free_params) f = f * s.params[p].values.size() + c[p];
  return *e * s.free_product + f;
}

std::vector<Config> SearchSpace::neighbours(const Config& c, NeighbourKind kind) const {
  const Impl& s = *impl_;
  s.require_well_formed(c, "neighbours");
  std::vector<Config> out;
  if (s.empty) return out;
  // From a valid c only the restrictions naming the changed parameter can flip.
  const bool base_valid = is_valid(c);
  std::vector<Value> slots;
  s.bind(c, slots);
  auto consider = [&](size_t p, uint32_t j) {
    slots[p] = s.params[p].values[j];
    bool ok = true;
    if (base_valid) {
      ok = s.passes(s.checks_of[p], slots);
    } else {
      for (const expr::CompiledExpr& check : s.checks)
        ok = ok && check.truth(slots) == expr::CompiledExpr::Truth::True;
    }
    if (ok) {
      out.push_back(c);
      out.back()[p] = j;
    }
  };
  // The change of p to j (in slots), invalid alone, repaired by the nearest
  // value of one other parameter q: rings of growing distance over every q at
  // once, so that the first ring with a valid configuration gives all of that
  // distance. From a valid c only the restrictions naming p or q can flip. A
  // configuration reached by repairing p's change with q may also be q's
  // change repaired with p: it is listed once. The rings end where no other
  // parameter has a value that far.
  std::unordered_set<Config, ConfigHash> repaired;
  auto repair = [&](size_t p, uint32_t j) {
    for (int64_t d = 1;; ++d) {
      bool found = false, in_range = false;
      for (size_t q = 0; q < s.params.size(); ++q) {
        if (q == p) continue;
        const int64_t nq = static_cast<int64_t>(s.params[q].values.size());
        for (const int64_t w : {int64_t{c[q]} - d, int64_t{c[q]} + d}) {
          if (w < 0 || w >= nq) continue;
          in_range = true;
          slots[q] = s.params[q].values[w];
          if (s.passes(s.checks_of[p], slots) && s.passes(s.checks_of[q], slots)) {
            found = true;
            Config r = c;
            r[p] = j;
            r[q] = static_cast<uint32_t>(w);
            if (repaired.insert(r).second) out.push_back(std::move(r));
          }
        }
        slots[q] = s.params[q].values[c[q]];
      }
      if (found || !in_range) return;
    }
  };
  for (size_t p = 0; p < s.params.size(); ++p) {
    const uint32_t n = static_cast<uint32_t>(s.params[p].values.size());
    if (kind != NeighbourKind::Adjacent) {
      for (uint32_t j = 0; j < n; ++j) {
        if (j == c[p]) continue;
        const size_t before = out.size();
        consider(p, j);
        if (kind == NeighbourKind::HammingRepaired && out.size() == before && base_valid) repair(p, j);
      }
    } else {
      if (c[p] > 0) consider(p, c[p] - 1);
      if (c[p] + 1 < n) consider(p, c[p] + 1);
    }
    slots[p] = s.params[p].values[c[p]];
  }
  return out;
}

std::vector<Value> SearchSpace::values(const Config& c) const {
  const Impl& s = *impl_;
  s.require_well_formed(c, "values");
  std::vector<Value> out;
  out.reserve(c.size());
  for (size_t p = 0; p < c.size(); ++p) out.push_back(s.params[p].values[c[p]]);
  return out;
}

std::string SearchSpace::config_key(const Config& c) const {
  impl_->require_well_formed(c, "config_key");
  return ktune::config_key(values(c));
}

std::optional<Config> SearchSpace::config_of(const std::vector<Value>& values) const {
  const Impl& s = *impl_;
  if (values.size() != s.params.size()) return std::nullopt;
  Config c(values.size());
  for (size_t p = 0; p < values.size(); ++p) {
    const auto& list = s.params[p].values;
    size_t j = 0;
    while (j < list.size() && !(list[j] == values[p])) ++j;
    if (j == list.size()) return std::nullopt;
    c[p] = static_cast<uint32_t>(j);
  }
  return c;
}

size_t ConfigHash::operator()(const Config& c) const noexcept {
  uint64_t h = 1469598103934665603ull;
  for (uint32_t v : c) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 1099511628211ull;
  }
  return static_cast<size_t>(h);
}


}  // namespace ktune
