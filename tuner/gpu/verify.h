// Checking a configuration's outputs against the expected ones.
//
// An element passes when |got - expected| <= atol + rtol * |expected| (each
// output's own atol and rtol where it has them); a NaN on
// either side never passes (poisoned, unwritten outputs are NaN), and neither
// does an infinity unless both sides are the same infinity. The outcome names
// the worst element: the one whose error exceeds its allowance by the largest
// factor (a NaN counts as infinitely bad; the first one found is kept), and how
// many elements failed. Pure host code: tested without a GPU.
//
// The worker applies these rules on the GPU (tuner/gpu/verify_device.h), so that
// outputs need not come back to the host; this is the reference it is tested
// against, and what verifies where the device has no room for the expected outputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tuner/gpu/args.h"

namespace ktune::gpu {

// An output's own tolerances, in place of the common ones.
struct OutputTolerance {
  std::string name;
  double atol = 1e-6;
  double rtol = 1e-5;
};

struct Tolerance {
  Tolerance() = default;
  Tolerance(double a, double r) : atol(a), rtol(r) {}
  double atol = 1e-6;
  double rtol = 1e-5;
  std::vector<OutputTolerance> outputs;
  // The tolerances of the output `name`.
  std::pair<double, double> of(const std::string& name) const {
    for (const OutputTolerance& o : outputs)
      if (o.name == name) return {o.atol, o.rtol};
    return {atol, rtol};
  }
};

struct Mismatch {
  std::string buffer;
  std::uint64_t index = 0;
  double got = 0;
  double expected = 0;
  std::uint64_t failed_elements = 0;  // in all buffers together

  // "c[17]: got nan, expected 0.25 (3 of 4096 elements differ)"
  std::string str(std::uint64_t total_elements) const;
};

struct VerifyOutcome {
  bool ok = true;
  std::string reason;               // "" when ok
  std::optional<Mismatch> worst;    // set when an element failed
};

// Compares outputs with expected buffers matched by name. A missing expected
// buffer, a type or size difference fails with a reason and no worst element.
VerifyOutcome compare_outputs(const std::vector<HostBuffer>& got,
                              const std::vector<HostBuffer>& expected, const Tolerance& tol);

}  // namespace ktune::gpu
