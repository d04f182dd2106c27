// The randn and copy fills: randn is normally distributed, the same bytes on
// every call and on any number of host threads (the device's against these:
// tests/gpu/fill_device_gpu_test.cpp); a spec's `fill: randn` and
// `fill: copy, of: NAME` are read and checked, and a copy holds its source's
// bytes, the source's name-derived seed included.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tests/test_util.h"
#include "tuner/gpu/fill_device.h"
#include "tuner/gpu/fill_element.h"
#include "tuner/spec/spec.h"
#include "tuner/tune/engine_arguments.h"
#include "tuner/tune/gpu_evaluator.h"

namespace ktune {
namespace {

std::vector<double> as_doubles(const std::vector<std::uint8_t>& bytes) {
  std::vector<double> v(bytes.size() / sizeof(double));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(double));
  return v;
}

TEST(FillRandn, TheLogarithmIsWithinAFewUlps) {
  for (double x = 1e-300; x < 1.0; x *= 1.37) {
    const double want = std::log(x);
    EXPECT_NEAR(gpu::fill::kt_log(x), want, 4e-16 * std::abs(want) + 1e-300) << x;
  }
  for (double x : {0.5, 0.70710678118654752, 0.9999999, 1.0, 1.5, 3.0})
    EXPECT_NEAR(gpu::fill::kt_log(x), std::log(x), 1e-15) << x;
}

TEST(FillRandn, NormallyDistributedAndTheSameEveryTime) {
  const std::uint64_t n = (std::uint64_t{8} << 20) / sizeof(double) + 7;  // filled on several threads
  const gpu::ArgSpec arg = gpu::ArgSpec::buffer("x", ElemType::F64, n, gpu::Fill::normal(5, 2.0, 0.5));
  const std::vector<double> v = as_doubles(gpu::fill_host(arg));
  ASSERT_EQ(v.size(), n);
  double sum = 0, sq = 0;
  size_t within = 0;
  for (double x : v) {
    sum += x;
    sq += x * x;
    within += std::abs(x - 2.0) < 0.5;
  }
  const double mean = sum / double(n), stddev = std::sqrt(sq / double(n) - mean * mean);
  EXPECT_NEAR(mean, 2.0, 0.002);
  EXPECT_NEAR(stddev, 0.5, 0.002);
  EXPECT_NEAR(double(within) / double(n), 0.6827, 0.002);  // one standard deviation
  // Element by element, the generator's own values: no thread order shows.
  for (std::uint64_t i : {std::uint64_t{0}, std::uint64_t{1}, n / 2, n - 1})
    EXPECT_EQ(v[i], gpu::fill::kt_normal_value(5, i, 2.0, 0.5)) << i;
  EXPECT_EQ(gpu::fill_host(arg), gpu::fill_host(arg));
  const gpu::ArgSpec other = gpu::ArgSpec::buffer("x", ElemType::F64, n, gpu::Fill::normal(6, 2.0, 0.5));
  EXPECT_NE(gpu::fill_host(other), gpu::fill_host(arg));
  // The device may make it (same text, same bytes) where it is finite.
  EXPECT_TRUE(gpu::device_fillable(arg));
  EXPECT_FALSE(gpu::device_fillable(
      gpu::ArgSpec::buffer("x", ElemType::F32, 4, gpu::Fill::normal({}, 0, std::numeric_limits<double>::infinity()))));
}

const std::string kHead =
    "kernel: {name: stencil_kernel, source: stencil.cu}\n"
    "constants: {n: 4096}\n"
    "problem_size: [n]\n"
    "tune_params: {block_size_x: [32, 64]}\n"
    "arguments:\n";

Spec spec_of(const std::string& arguments) {
  return load_spec_text(kHead + arguments, std::string(KTUNE_TESTS_DIR) + "/data/specs/bad/inline.yaml",
                        Spec::Format::Yaml);
}

TEST(FillCopy, ACopyStartsWithItsSourcesBytes) {
  const Spec s = spec_of(
      "  - {name: x_new, type: float*, size: n, fill: copy, of: x_old, output: true}\n"
      "  - {name: x_old, type: float*, size: n, fill: random, range: [-1, 1]}\n"
      "  - {name: y_new, type: double*, size: n, fill: copy, of: y_old}\n"
      "  - {name: y_old, type: double*, size: n, fill: randn, seed: 3, mean: 1, stddev: 2}\n"
      "  - {name: z, type: float*, size: n, fill: randn}\n");
  ASSERT_EQ(s.arguments[0].fill.kind, ArgFill::Kind::Copy);
  EXPECT_EQ(s.arguments[0].fill.copy_of, "x_old");
  ASSERT_EQ(s.arguments[3].fill.kind, ArgFill::Kind::Normal);
  EXPECT_EQ(s.arguments[3].fill.mean, 1.0);
  EXPECT_EQ(s.arguments[3].fill.stddev, 2.0);
  const std::vector<gpu::ArgSpec> args = engine_arguments(s);
  ASSERT_EQ(args.size(), 5u);
  EXPECT_EQ(gpu::fill_host(args[0]), gpu::fill_host(args[1]));  // x_old's seed comes from its name
  EXPECT_EQ(gpu::fill_host(args[2]), gpu::fill_host(args[3]));
  EXPECT_NE(gpu::fill_host(args[4]), gpu::fill_host(args[1]));
  // What a copy and randn change is in the spec's identity.
  const Spec zeros = spec_of(
      "  - {name: x_new, type: float*, size: n, fill: zeros, output: true}\n"
      "  - {name: x_old, type: float*, size: n, fill: random, range: [-1, 1]}\n"
      "  - {name: y_new, type: double*, size: n, fill: copy, of: y_old}\n"
      "  - {name: y_old, type: double*, size: n, fill: randn, seed: 3, mean: 1, stddev: 2}\n"
      "  - {name: z, type: float*, size: n, fill: randn}\n");
  EXPECT_NE(zeros.hash, s.hash);
  const Spec shifted = spec_of(
      "  - {name: x_new, type: float*, size: n, fill: copy, of: x_old, output: true}\n"
      "  - {name: x_old, type: float*, size: n, fill: random, range: [-1, 1]}\n"
      "  - {name: y_new, type: double*, size: n, fill: copy, of: y_old}\n"
      "  - {name: y_old, type: double*, size: n, fill: randn, seed: 3, mean: 1, stddev: 3}\n"
      "  - {name: z, type: float*, size: n, fill: randn}\n");
  EXPECT_NE(shifted.hash, s.hash);
}

// Kernel Tuner's stencil example: x_old = numpy.random.randn(size),
// x_new = numpy.copy(x_old) (docs/from-kernel-tuner.md).
TEST(FillCopy, KernelTunersStencilTranslates) {
  const Spec s = load_spec(std::string(KTUNE_TESTS_DIR) + "/../examples/from-kernel-tuner/stencil.yaml");
  ASSERT_EQ(s.arguments.size(), 2u);
  EXPECT_EQ(s.arguments[0].fill.kind, ArgFill::Kind::Copy);
  EXPECT_EQ(s.arguments[0].fill.copy_of, "x_old");
  EXPECT_EQ(s.arguments[1].fill.kind, ArgFill::Kind::Normal);
  const std::vector<gpu::ArgSpec> args = engine_arguments(s);
  EXPECT_EQ(gpu::fill_host(args[0]), gpu::fill_host(args[1]));
}

TEST(FillCopy, WhatACopyOrRandnCannotBeIsSaid) {
  auto message = [](const std::string& arguments) {
    return std::string(testing::error_of([&] { spec_of(arguments); }).what());
  };
  const std::string old = "  - {name: x_old, type: float*, size: n}\n";
  EXPECT_NE(std::string(message("  - {name: a, type: float*, size: n, fill: copy, of: x_olt}\n" + old))
                .find("no buffer argument of that name (buffers: x_old)"),
            std::string::npos);
  EXPECT_NE(std::string(message("  - {name: a, type: float*, size: 2 * n, fill: copy, of: x_old}\n" + old))
                .find("needs the same type and size: float[4096] there, float[8192] here"),
            std::string::npos);
  EXPECT_NE(std::string(message("  - {name: a, type: double*, size: n, fill: copy, of: x_old}\n" + old))
                .find("needs the same type and size"),
            std::string::npos);
  EXPECT_NE(std::string(message("  - {name: a, type: float*, size: n, fill: copy, of: b}\n"
                                "  - {name: b, type: float*, size: n, fill: copy, of: x_old}\n" + old))
                .find("itself a copy: copy 'x_old' instead"),
            std::string::npos);
  EXPECT_NE(std::string(message("  - {name: a, type: float*, size: n, fill: copy}\n")).find("'of'"),
            std::string::npos);
  EXPECT_NE(std::string(message("  - {name: a, type: int32*, size: n, fill: randn}\n"))
                .find("fill: randn needs a floating-point type"),
            std::string::npos);
  EXPECT_NE(std::string(message("  - {name: a, type: float*, size: n, fill: random, mean: 1}\n"))
                .find("'mean' only applies to fill: randn"),
            std::string::npos);
  EXPECT_NE(std::string(message("  - {name: a, type: float*, size: n, fill: randn, stddev: -1}\n"))
                .find("stddev must be finite and not negative"),
            std::string::npos);
}

}  // namespace
}  // namespace ktune
