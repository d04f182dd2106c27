#include "tuner/gpu/verify.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <limits>
#include <thread>
#include <tuple>
#include <vector>

namespace ktune::gpu {
namespace {

// How far over its allowance an element is: <= 1 passes; infinity for NaN.
double excess(double got, double want, const Tolerance& tol) {
  if (std::isnan(got) || std::isnan(want)) return std::numeric_limits<double>::infinity();
  if (std::isinf(got) || std::isinf(want))
    return got == want ? 0.0 : std::numeric_limits<double>::infinity();
  double err = std::fabs(got - want);
  double allowed = tol.atol + tol.rtol * std::fabs(want);
  if (err <= allowed) return 0.0;
  return allowed > 0 ? err / allowed : std::numeric_limits<double>::max();
}

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

struct Worst {
  double score = 0;
  Mismatch m;
};

// NaN test on the raw bits, so identical elements need no conversion.
bool nan_bits(ElemType type, const std::uint8_t* p) {
  switch (type) {
    case ElemType::F32: {
      std::uint32_t u;
      std::memcpy(&u, p, 4);
      return (u & 0x7fffffffu) > 0x7f800000u;
    }
    case ElemType::F64: {
      std::uint64_t u;
      std::memcpy(&u, p, 8);
      return (u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
    }
    case ElemType::F16: {
      std::uint16_t u;
      std::memcpy(&u, p, 2);
      return (u & 0x7fffu) > 0x7c00u;
    }
    case ElemType::BF16: {
      std::uint16_t u;
      std::memcpy(&u, p, 2);
      return (u & 0x7fffu) > 0x7f80u;
    }
    default: return false;
  }
}

// Elements [begin, end) of one buffer. Bit-identical elements pass outright
// (exact integers past 2^53 included), except NaN, which is never right even
// when the reference holds NaN too; only the rest are converted and scored.
void compare_range(const HostBuffer& got, const HostBuffer& want, const Tolerance& tol, std::size_t begin,
                   std::size_t end, Worst& worst) {
  const std::size_t size = elem_size(want.type);
  const bool integer = !is_float(want.type);
  for (std::size_t i = begin; i < end; ++i) {
    const std::uint8_t* a = got.bytes.data() + i * size;
    const std::uint8_t* b = want.bytes.data() + i * size;
    if (std::memcmp(a, b, size) == 0 && (integer || !nan_bits(want.type, b))) continue;
    double g = element_value(got.type, a, 0), e = element_value(want.type, b, 0);
    double s = integer && g == e ? std::numeric_limits<double>::max() : excess(g, e, tol);
    if (s <= 1.0) continue;
    ++worst.m.failed_elements;
    if (s > worst.score) {
      worst.score = s;
      worst.m.buffer = want.name;
      worst.m.index = i;
      worst.m.got = g;
      worst.m.expected = e;
    }
  }
}

// Large outputs (hundreds of MB per configuration) are compared on several
// threads: verification was most of the tuner's time per configuration. The
// merge keeps the sequential result: the highest score, the lowest index on ties.
void compare_buffer(const HostBuffer& got, const HostBuffer& want, const Tolerance& tol, Worst& worst) {
  const std::size_t n = want.count();
  const unsigned threads = n < (1u << 20) ? 1u : std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<Worst> part(threads);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    const std::size_t b = n * t / threads, e = n * (t + 1) / threads;
    if (t + 1 == threads) compare_range(got, want, tol, b, e, part[t]);
    else pool.emplace_back([&, b, e, t] { compare_range(got, want, tol, b, e, part[t]); });
  }
  for (auto& th : pool) th.join();
  for (const Worst& w : part) {
    worst.m.failed_elements += w.m.failed_elements;
    if (w.score > worst.score) {
      const std::uint64_t failed = worst.m.failed_elements;
      worst.score = w.score;
      worst.m = w.m;
      worst.m.failed_elements = failed;
    }
  }
}

}  // namespace

std::string Mismatch::str(std::uint64_t total) const {
  std::string s = buffer + "[" + std::to_string(index) + "]: got " + number(got) +
                  ", expected " + number(expected);
  s += " (" + std::to_string(failed_elements) + " of " + std::to_string(total) +
       " elements differ)";
  return s;
}

VerifyOutcome compare_outputs(const std::vector<HostBuffer>& got,
                              const std::vector<HostBuffer>& expected, const Tolerance& tol) {
  VerifyOutcome out;
  Worst worst;
  std::uint64_t total = 0;
  for (const HostBuffer& want : expected) {
    const HostBuffer* have = nullptr;
    for (const HostBuffer& g : got)
      if (g.name == want.name) have = &g;
    if (!have) {
      out.ok = false;
      out.reason = "no output buffer '" + want.name + "' to compare";
      return out;
    }
    if (have->type != want.type || have->bytes.size() != want.bytes.size()) {
      out.ok = false;
      out.reason = "output '" + want.name + "' is " + std::to_string(have->count()) + " " +
                   to_string(have->type) + ", expected " + std::to_string(want.count()) + " " +
                   to_string(want.type);
      return out;
    }
    total += want.count();
    Tolerance own;
    std::tie(own.atol, own.rtol) = tol.of(want.name);
    compare_buffer(*have, want, own, worst);
  }
  if (worst.m.failed_elements > 0) {
    out.ok = false;
    out.worst = worst.m;
    out.reason = "wrong result: " + worst.m.str(total);
  }
  return out;
}

}  // namespace ktune::gpu
