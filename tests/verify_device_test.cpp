// Verification on the GPU, the parts that need no GPU: the compare kernels
// compile with NVRTC for the architectures ktune tunes on, and the host-side
// rules (buffer matching, the merge across buffers) are compare_outputs' own.
// The kernels' results against compare_outputs: tests/gpu/verify_device_gpu_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <limits>

#include "tests/test_util.h"
#include "tuner/gpu/verify_device.h"

namespace ktune::gpu {
namespace {

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(VerifyDevice, CompareKernelsCompileForAmpereAndHopper) {
  testing::TempDir cache;
  CompilerOptions options;
  options.cache_dir = cache.path();
  Compiler compiler(options);
  for (int sm : {80, 90}) {
    const CompileRequest request = compare_kernel_request(Arch(sm));
    EXPECT_NE(std::find(request.options.begin(), request.options.end(), "-fmad=false"),
              request.options.end());
    // The kernels' element type codes are ElemType's own values, every one of them.
    ASSERT_EQ(request.defines.size(), 12u);
    for (std::size_t t = 0; t < 12; ++t) EXPECT_EQ(request.defines[t].second, std::to_string(t));
    EXPECT_EQ(request.defines.back().first, "KT_U64");
    EXPECT_EQ(static_cast<int>(ElemType::U64), 11);
    const CompileResult c = compiler.compile(request);
    ASSERT_TRUE(c.ok) << "sm_" << sm << ":\n" << c.log;
    EXPECT_FALSE(c.cache_hit);
    EXPECT_EQ(c.lowered_name, kCountKernel);
    const std::vector<std::string> names = cubin_kernel_names(c.cubin);
    EXPECT_TRUE(has(names, kCountKernel)) << "sm_" << sm;
    EXPECT_TRUE(has(names, kLocateKernel)) << "sm_" << sm;
    // Spills would put local-memory traffic into a pass that should run at
    // the speed of reading the two buffers.
    for (const auto& [name, usage] : parse_ptxas_log(c.log))
      EXPECT_EQ(usage.spill_stores, 0) << name << " on sm_" << sm << ":\n" << c.log;
    // A worker after the first one finds the cubin in the cache.
    const CompileResult again = compiler.compile(request);
    ASSERT_TRUE(again.ok);
    EXPECT_TRUE(again.cache_hit);
    EXPECT_EQ(again.cubin, c.cubin);
  }
}

BufferTally tally(std::uint64_t failed, double worst, std::uint64_t index = 0) {
  return {failed, std::bit_cast<std::uint64_t>(worst), index};
}

TEST(VerifyDevice, WorstBufferIsTheHighestScoreAndTheFirstOnTies) {
  EXPECT_FALSE(worst_buffer({}).has_value());
  EXPECT_FALSE(worst_buffer({tally(0, 0), tally(0, 0)}).has_value());
  EXPECT_EQ(worst_buffer({tally(1, 2.0), tally(3, 5.0), tally(1, 4.0)}), 1u);
  EXPECT_EQ(worst_buffer({tally(1, 7.0), tally(3, 7.0)}), 0u);  // tie: the first buffer
  const double inf = std::numeric_limits<double>::infinity();
  const double max = std::numeric_limits<double>::max();
  EXPECT_EQ(worst_buffer({tally(1, max), tally(2, inf), tally(4, inf)}), 1u);  // NaN beats DBL_MAX
  // Failures whose scores never beat 0 (NaN scores) name no buffer, as on the host.
  EXPECT_FALSE(worst_buffer({tally(5, 0)}).has_value());
  EXPECT_EQ(worst_buffer({tally(5, 0), tally(1, 1.5)}), 1u);
}

HostBuffer host(const std::string& name, ElemType type, std::size_t count) {
  return {name, type, std::vector<std::uint8_t>(count * elem_size(type), 0)};
}

DeviceBufferView view(const HostBuffer& b, CUdeviceptr ptr) { return {b.name, b.type, b.count(), ptr}; }

std::vector<DeviceBufferView> views(const std::vector<HostBuffer>& buffers) {
  std::vector<DeviceBufferView> out;
  for (std::size_t i = 0; i < buffers.size(); ++i) out.push_back(view(buffers[i], 0x1000 * (i + 1)));
  return out;
}

TEST(VerifyDevice, OutputsAreMatchedWithCompareOutputsReasons) {
  const std::vector<HostBuffer> want = {host("c", ElemType::F32, 4), host("d", ElemType::I64, 2)};
  const std::vector<std::vector<HostBuffer>> cases = {
      {host("d", ElemType::I64, 2), host("c", ElemType::F32, 4)},  // another order: fine
      {host("c", ElemType::F32, 4)},                               // d is missing
      {host("c", ElemType::I32, 4), host("d", ElemType::I64, 2)},  // same size, another type
      {host("c", ElemType::F32, 5), host("d", ElemType::I64, 2)},  // another size
      {host("c", ElemType::F32, 4), host("d", ElemType::U64, 3)},  // both
      {host("c", ElemType::F32, 1), host("c", ElemType::F32, 4), host("d", ElemType::I64, 2)},
  };
  for (std::size_t k = 0; k < cases.size(); ++k) {
    std::vector<std::size_t> match;
    const std::string reason = match_outputs(views(cases[k]), views(want), &match);
    // All elements are equal zeros, so compare_outputs fails only for the structure.
    EXPECT_EQ(reason, compare_outputs(cases[k], want, {}).reason) << "case " << k;
    if (!reason.empty()) continue;
    ASSERT_EQ(match.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(cases[k][match[i]].name, want[i].name);
  }
  std::vector<std::size_t> match;
  EXPECT_EQ(match_outputs(views(cases[5]), views(want), &match), "");
  EXPECT_EQ(match[0], 1u);  // of two outputs named c, the last one counts
  EXPECT_EQ(match_outputs(views(cases[1]), views(want), &match), "no output buffer 'd' to compare");
  EXPECT_EQ(match_outputs(views(cases[4]), views(want), &match),
            "output 'd' is 3 uint64, expected 2 int64");
}

TEST(VerifyDevice, GridIsOneWaveAndNoMoreThanTheElementsNeed) {
  EXPECT_EQ(compare_blocks(0, 660), 1u);
  EXPECT_EQ(compare_blocks(1, 660), 1u);
  EXPECT_EQ(compare_blocks(kCompareThreads, 660), 1u);
  EXPECT_EQ(compare_blocks(kCompareThreads + 1, 660), 2u);
  EXPECT_EQ(compare_blocks(std::uint64_t{1} << 26, 660), 660u);
  EXPECT_EQ(compare_blocks(std::uint64_t{1} << 40, 660), 660u);
  EXPECT_EQ(compare_blocks(std::uint64_t{1} << 40, 0), 1024u);  // occupancy unknown
}

}  // namespace
}  // namespace ktune::gpu
