#include "tuner/verify.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

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

void compare_buffer(const HostBuffer& got, const HostBuffer& want, const Tolerance& tol,
                    Worst& worst) {
  const std::size_t n = want.count(), size = elem_size(want.type);
  const bool integer = !is_float(want.type);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t* a = got.bytes.data() + i * size;
    const std::uint8_t* b = want.bytes.data() + i * size;
    // Identical bits pass outright (exact integers past 2^53 included), except
    // NaN, which is never right even when the reference holds NaN too.
    if (std::memcmp(a, b, size) == 0 && (integer || !std::isnan(element_value(want.type, b, 0))))
      continue;
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
    compare_buffer(*have, want, tol, worst);
  }
  if (worst.m.failed_elements > 0) {
    out.ok = false;
    out.worst = worst.m;
    out.reason = "wrong result: " + worst.m.str(total);
  }
  return out;
}

}  // namespace ktune::gpu
