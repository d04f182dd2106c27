// Each output's own tolerance (an argument's atol and rtol): read from a
// spec, refused where there is nothing to check, sent to the worker with
// the job, and applied by compare_outputs to that output only.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/test_util.h"
#include "tuner/gpu/verify.h"
#include "tuner/spec/spec.h"

namespace ktune {
namespace {

gpu::HostBuffer floats(const std::string& name, const std::vector<float>& v) {
  gpu::HostBuffer b{name, ElemType::F32, std::vector<std::uint8_t>(v.size() * 4)};
  std::memcpy(b.bytes.data(), v.data(), b.bytes.size());
  return b;
}

TEST(OutputTolerance, EachOutputIsCheckedWithItsOwn) {
  const std::vector<gpu::HostBuffer> want = {floats("sum", {100.0f, 200.0f}), floats("c", {1.0f, 2.0f})};
  const std::vector<gpu::HostBuffer> got = {floats("sum", {100.5f, 200.0f}), floats("c", {1.0f, 2.0f})};
  gpu::Tolerance tol(1e-6, 0);
  EXPECT_FALSE(gpu::compare_outputs(got, want, tol).ok);
  tol.outputs.push_back({"sum", 1.0, 0});  // a sum of block results, summed in another order
  EXPECT_TRUE(gpu::compare_outputs(got, want, tol).ok);
  // ... and only that output.
  const std::vector<gpu::HostBuffer> off = {floats("sum", {100.5f, 200.0f}), floats("c", {1.5f, 2.0f})};
  const gpu::VerifyOutcome v = gpu::compare_outputs(off, want, tol);
  EXPECT_FALSE(v.ok);
  ASSERT_TRUE(v.worst);
  EXPECT_EQ(v.worst->buffer, "c");
  EXPECT_EQ(v.worst->failed_elements, 1u);
  // A relative one.
  gpu::Tolerance rel(0, 0);
  rel.outputs.push_back({"sum", 0, 0.01});
  rel.outputs.push_back({"c", 0, 0});
  EXPECT_TRUE(gpu::compare_outputs(got, want, rel).ok);
}

const std::string kHead =
    "kernel: {name: k, source: k.cu}\n"
    "constants: {n: 1024}\n"
    "problem_size: [n]\n"
    "tune_params: {block_size_x: [32, 64]}\n";

Spec spec_of(const std::string& rest) {
  return load_spec_text(kHead + rest, std::string(KTUNE_TESTS_DIR) + "/data/specs/bad/inline.yaml",
                        Spec::Format::Yaml);
}

std::string message(const std::string& rest) {
  return testing::error_of([&] { spec_of(rest); }).what();
}

TEST(OutputTolerance, ASpecGivesAnOutputItsOwn) {
  const std::string args =
      "arguments:\n"
      "  - {name: sum, type: float*, size: n, fill: zeros, output: true, atol: 0.5}\n"
      "  - {name: c, type: float*, size: n, fill: zeros, output: true, rtol: 0.001}\n"
      "  - {name: x, type: float*, size: n}\n";
  const Spec s = spec_of(args + "verify: {reference: first_valid, atol: 1.0e-6}\n");
  EXPECT_EQ(s.arguments[0].atol, 0.5);
  EXPECT_FALSE(s.arguments[0].rtol);
  EXPECT_EQ(s.arguments[1].rtol, 0.001);
  EXPECT_FALSE(s.arguments[2].atol);
  // Part of what a measurement means.
  const Spec common = spec_of(
      "arguments:\n"
      "  - {name: sum, type: float*, size: n, fill: zeros, output: true}\n"
      "  - {name: c, type: float*, size: n, fill: zeros, output: true, rtol: 0.001}\n"
      "  - {name: x, type: float*, size: n}\n"
      "verify: {reference: first_valid, atol: 1.0e-6}\n");
  EXPECT_NE(common.hash, s.hash);
  EXPECT_NE(message(args).find("argument 'sum' has its own tolerance, but the spec has no verify"), std::string::npos)
      << message(args);
  EXPECT_NE(message("arguments:\n  - {name: x, type: float*, size: n, atol: 1}\n"
                    "  - {name: c, type: float*, size: n, output: true}\n"
                    "verify: {reference: first_valid}\n")
                .find("'atol' is an output's tolerance: it needs output: true"),
            std::string::npos);
  EXPECT_NE(message("arguments:\n  - {name: c, type: float*, size: n, output: true, rtol: -1}\n"
                    "verify: {reference: first_valid}\n")
                .find("rtol must be finite and not negative"),
            std::string::npos);
}

}  // namespace
}  // namespace ktune
