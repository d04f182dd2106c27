// The constraint-aware part of SearchSpace: choosing the binding order,
// counting and materialising the valid set, and the packed row store.
#include <algorithm>
#include <cstring>

#include "search/space/impl.h"

namespace ktune::space_detail {

namespace {
uint32_t bits_for(uint32_t radix) {
  return radix <= 1 ? 0 : 32 - static_cast<uint32_t>(__builtin_clz(radix - 1));
}
}  // namespace

RowStore::RowStore(const std::vector<uint32_t>& radices) {
  uint32_t word = 0, used = 0;
  for (uint32_t r : radices) {
    const uint32_t bits = bits_for(r);
    if (bits == 0) {  // a single value: nothing to store
      fields_.push_back({});
      continue;
    }
    if (used + bits > 64) {
      ++word;
      used = 0;
    }
    used += bits;
    fields_.push_back({word, 64 - used, (uint64_t{1} << bits) - 1});
    stride_ = word + 1;
  }
}

void RowStore::pack(const uint32_t* row, uint64_t* out) const {
  std::fill(out, out + stride_, 0);
  for (size_t i = 0; i < fields_.size(); ++i) {
    const Field& f = fields_[i];
    if (f.mask != 0) out[f.word] |= uint64_t{row[i]} << f.shift;
  }
}

void RowStore::push(const uint32_t* row) {
  const size_t at = data_.size();
  data_.resize(at + stride_);
  pack(row, data_.data() + at);
  ++rows_;
}

void RowStore::get(uint64_t i, uint32_t* row) const {
  const uint64_t* w = data_.data() + i * stride_;
  for (size_t k = 0; k < fields_.size(); ++k) {
    const Field& f = fields_[k];
    row[k] = f.mask == 0 ? 0 : static_cast<uint32_t>((w[f.word] >> f.shift) & f.mask);
  }
}

std::optional<uint64_t> RowStore::find(const uint32_t* row) const {
  if (stride_ == 0) return rows_ > 0 ? std::optional<uint64_t>(0) : std::nullopt;
  uint64_t key_small[4];
  std::vector<uint64_t> key_big;
  uint64_t* key = key_small;
  if (stride_ > 4) {
    key_big.resize(stride_);
    key = key_big.data();
  }
  pack(row, key);
  // Binary search over rows, compared word by word (most significant first).
  uint64_t lo = 0, hi = rows_;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    const uint64_t* w = data_.data() + mid * stride_;
    if (std::lexicographical_compare(w, w + stride_, key, key + stride_)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo < rows_ && std::equal(key, key + stride_, data_.data() + lo * stride_)) return lo;
  return std::nullopt;
}

}  // namespace ktune::space_detail

namespace ktune {

std::string decimal_product(const std::vector<Parameter>& params) {
  // Little-endian limbs in base 1e9: a product of many list sizes can pass 2^128.
  constexpr uint64_t kBase = 1000000000;
  std::vector<uint64_t> limbs{1};
  for (const Parameter& p : params) {
    uint64_t carry = 0;
    for (uint64_t& l : limbs) {
      const uint64_t v = l * p.values.size() + carry;
      l = v % kBase;
      carry = v / kBase;
    }
    while (carry > 0) {
      limbs.push_back(carry % kBase);
      carry /= kBase;
    }
    if (p.values.empty()) limbs.assign(1, 0);
  }
  std::string out = std::to_string(limbs.back());
  for (size_t i = limbs.size() - 1; i-- > 0;) {
    std::string part = std::to_string(limbs[i]);
    out += std::string(9 - part.size(), '0') + part;
  }
  return out;
}

void SearchSpace::Impl::plan() {
  const size_t np = params.size();
  std::vector<int> unbound_left(checks.size());
  for (size_t c = 0; c < checks.size(); ++c) unbound_left[c] = static_cast<int>(checks[c].slots_used().size());
  std::vector<char> bound(np, 0);
  size_t to_bind = 0;
  for (size_t p = 0; p < np; ++p) {
    if (checks_of[p].empty()) {
      free_params.push_back(static_cast<int>(p));
      bound[p] = 1;
    } else {
      ++to_bind;
    }
  }
  auto bind = [&](size_t p) {
    bound[p] = 1;
    order.push_back(static_cast<int>(p));
    for (int c : checks_of[p]) --unbound_left[c];
  };
  // A single-valued parameter costs nothing to bind and may complete checks.
  for (size_t p = 0; p < np; ++p)
    if (!bound[p] && params[p].values.size() == 1) bind(p);
  // Greedy: bind next the parameter that completes the most checks; then the
  // one closest to completing checks (weighted by 1/unbound), then the smallest
  // list. This tests each restriction at the shallowest depth we can manage.
  while (order.size() < to_bind) {
    size_t best = np;
    int best_completes = -1;
    double best_weight = -1;
    size_t best_size = 0;
    for (size_t p = 0; p < np; ++p) {
      if (bound[p]) continue;
      int completes = 0;
      double weight = 0;
      for (int c : checks_of[p]) {
        completes += unbound_left[c] == 1;
        weight += 1.0 / unbound_left[c];
      }
      const size_t size = params[p].values.size();
      const bool better = completes != best_completes ? completes > best_completes
                          : weight != best_weight     ? weight > best_weight
                                                      : size < best_size;
      if (best == np || better) {
        best = p;
        best_completes = completes;
        best_weight = weight;
        best_size = size;
      }
    }
    bind(best);
  }
  std::vector<int> depth_of(np, -1);
  for (size_t d = 0; d < order.size(); ++d) depth_of[order[d]] = static_cast<int>(d);
  checks_at.assign(order.size(), {});
  for (size_t c = 0; c < checks.size(); ++c) {
    int depth = 0;
    for (int slot : checks[c].slots_used()) depth = std::max(depth, depth_of[slot]);
    checks_at[depth].push_back(static_cast<int>(c));
  }
  for (int p : order) enumerated_product *= static_cast<double>(params[p].values.size());
  for (int p : free_params) {
    if (__builtin_mul_overflow(free_product, uint64_t{params[p].values.size()}, &free_product)) free_overflow = true;
  }
}

uint64_t SearchSpace::Impl::count_enumerated() const {
  std::call_once(count_once, [this] {
    if (store_ready.load(std::memory_order_acquire)) {
      enumerated_count = rows->size();
    } else {
      uint64_t n = 0;
      walk([&n](const uint32_t*) { ++n; });
      enumerated_count = n;
    }
    count_ready.store(true, std::memory_order_release);
  });
  return enumerated_count;
}

const space_detail::RowStore& SearchSpace::Impl::store() const {
  std::call_once(store_once, [this] {
    if (count_ready.load(std::memory_order_acquire) && enumerated_count > max_materialise()) {
      store_too_big = true;
      return;
    }
    std::vector<uint32_t> radices;
    for (int p : order) radices.push_back(static_cast<uint32_t>(params[p].values.size()));
    auto st = std::make_unique<space_detail::RowStore>(radices);
    struct TooBig {};
    try {
      walk([&st](const uint32_t* row) {
        if (st->size() >= max_materialise()) throw TooBig{};
        st->push(row);
      });
    } catch (const TooBig&) {
      store_too_big = true;
      return;
    }
    rows = std::move(st);
    store_ready.store(true, std::memory_order_release);
  });
  if (store_too_big) {
    throw Error::failed("the search space has more than " + std::to_string(max_materialise()) +
                        " valid combinations of its restricted parameters: too many to index; "
                        "sample it instead");
  }
  return *rows;
}

bool SearchSpace::Impl::passes(const std::vector<int>& which, const std::vector<Value>& slots, Tally* tally) const {
  for (int c : which) {
    const expr::CompiledExpr::Truth t = checks[c].truth(slots);
    if (tally) {
      ++tally->tested[c];
      if (t == expr::CompiledExpr::Truth::Raised && tally->raised[c]++ == 0) {
        std::string example;
        for (int slot : checks[c].slots_used())
          example.append(example.empty() ? "" : ", ").append(params[slot].name).append("=").append(slots[slot].repr());
        tally->example[c] = example.append(": ").append(checks[c].why_raised(slots));
      }
    }
    if (t != expr::CompiledExpr::Truth::True) return false;
  }
  return true;
}

void SearchSpace::Impl::publish(Tally t) const {
  std::lock_guard<std::mutex> lock(tally_mutex);
  if (!published) published = std::move(t);
}

bool SearchSpace::Impl::well_formed(const Config& c) const {
  if (c.size() != params.size()) return false;
  for (size_t p = 0; p < c.size(); ++p)
    if (c[p] >= params[p].values.size()) return false;
  return true;
}

void SearchSpace::Impl::require_well_formed(const Config& c, const char* what) const {
  if (c.size() != params.size()) {
    throw Error::failed(std::string(what) + ": configuration has " + std::to_string(c.size()) +
                        " value indices, the space has " + std::to_string(params.size()) + " parameters");
  }
  for (size_t p = 0; p < c.size(); ++p) {
    if (c[p] >= params[p].values.size()) {
      throw Error::failed(std::string(what) + ": value index " + std::to_string(c[p]) + " of parameter '" +
                          params[p].name + "' is out of range (it has " + std::to_string(params[p].values.size()) +
                          " values)");
    }
  }
}

void SearchSpace::Impl::bind(const Config& c, std::vector<Value>& slots) const {
  slots.resize(params.size());
  for (size_t p = 0; p < params.size(); ++p) slots[p] = params[p].values[c[p]];
}

}  // namespace ktune
