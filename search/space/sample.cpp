// Uniform sampling of valid configurations: by index over the materialised
// valid set when it is affordable, by rejection over the Cartesian product
// otherwise.
#include <algorithm>
#include <set>
#include <unordered_set>

#include "search/space/impl.h"

namespace ktune {

namespace {

// Up to this many enumerated points a walk takes well under a second, so the
// valid set is materialised and sampled by index.
constexpr double kEnumerateLimit = double(uint64_t{1} << 26);
// Rejection gives up after this many draws plus kDrawsPerSample per sample
// asked for: an acceptance rate below ~1/4096 is hopeless for a tuner.
constexpr uint64_t kMinDraws = uint64_t{1} << 22;
constexpr uint64_t kDrawsPerSample = uint64_t{1} << 12;

uint64_t uniform_below(uint64_t n, std::mt19937_64& rng) {
  return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng);
}

// Indices of n uniform draws from [0, total): distinct when unique (Floyd's
// algorithm, then shuffled so the order is random too).
std::vector<uint64_t> draw_indices(size_t n, uint64_t total, std::mt19937_64& rng, bool unique) {
  std::vector<uint64_t> picks;
  if (!unique) {
    for (size_t i = 0; i < n; ++i) picks.push_back(uniform_below(total, rng));
    return picks;
  }
  if (n >= total) {
    for (uint64_t i = 0; i < total; ++i) picks.push_back(i);
  } else {
    std::unordered_set<uint64_t> chosen;
    for (uint64_t j = total - n; j < total; ++j) {
      const uint64_t t = uniform_below(j + 1, rng);
      const uint64_t pick = chosen.insert(t).second ? t : j;
      if (pick == j) chosen.insert(j);
      picks.push_back(pick);
    }
  }
  std::shuffle(picks.begin(), picks.end(), rng);
  return picks;
}

}  // namespace

bool SearchSpace::Impl::prefers_index() const {
  if (free_overflow) return false;
  if (store_ready.load(std::memory_order_acquire)) return true;
  if (count_ready.load(std::memory_order_acquire)) {
    uint64_t total = 0;
    return enumerated_count <= max_materialise() &&
           !__builtin_mul_overflow(enumerated_count, free_product, &total);
  }
  return enumerated_product <= kEnumerateLimit;
}

std::vector<Config> SearchSpace::Impl::sample_by_rejection(size_t n, std::mt19937_64& rng, bool unique) const {
  std::vector<Value> slots(params.size());
  for (size_t p = 0; p < params.size(); ++p) slots[p] = params[p].values.front();
  std::set<Config> seen;
  std::vector<Config> out;
  Config c(params.size(), 0);
  const uint64_t max_draws = kMinDraws + kDrawsPerSample * n;
  uint64_t draws = 0, accepted = 0;
  while (out.size() < n) {
    if (draws == max_draws) {
      throw Error::failed("cannot sample " + std::to_string(n) + (unique ? " distinct" : "") +
                          " valid configurations: " + std::to_string(accepted) + " valid found in " +
                          std::to_string(draws) + " random draws from the " + cartesian +
                          " points of the Cartesian product. The restrictions admit too small a fraction of "
                          "it to sample by rejection, and it is too large to enumerate");
    }
    ++draws;
    bool ok = true;
    for (size_t d = 0; d < order.size() && ok; ++d) {
      const int p = order[d];
      c[p] = static_cast<uint32_t>(uniform_below(params[p].values.size(), rng));
      slots[p] = params[p].values[c[p]];
      ok = passes(checks_at[d], slots);
    }
    if (!ok) continue;
    for (int p : free_params) c[p] = static_cast<uint32_t>(uniform_below(params[p].values.size(), rng));
    ++accepted;
    if (unique && !seen.insert(c).second) continue;
    out.push_back(c);
  }
  return out;
}

std::vector<Config> SearchSpace::sample(size_t n, std::mt19937_64& rng, bool unique) const {
  const Impl& s = *impl_;
  if (n == 0 || s.empty) return {};
  if (!s.prefers_index()) return s.sample_by_rejection(n, rng, unique);
  s.store();  // one walk gives both the rows and the count
  const uint64_t total = count_valid();
  std::vector<Config> out;
  if (total == 0) return out;
  for (uint64_t i : draw_indices(n, total, rng, unique)) out.push_back(at(i));
  return out;
}

}  // namespace ktune
