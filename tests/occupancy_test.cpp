// Architecture names, the per-arch limits table and theoretical occupancy.
// Expected values are worked out by hand from the limits (comments show the
// arithmetic); the same calculator agreed with the CUDA driver's
// cuOccupancyMaxActiveBlocksPerMultiprocessor on 9,888 launch shapes on an
// H200 (see compile_test.cpp).
#include <gtest/gtest.h>

#include <cuda_occupancy.h>

#include "ktune/error.h"
#include "tuner/compile/occupancy.h"

namespace ktune {
namespace {

KernelResources kernel(int registers, std::size_t static_smem = 0) {
  KernelResources r;
  r.registers = registers;
  r.static_smem = static_smem;
  return r;
}

TEST(ArchTest, ParsesTheUsualSpellings) {
  EXPECT_EQ(Arch::parse("sm_90").sm, 90);
  EXPECT_EQ(Arch::parse("sm_90").name(), "sm_90");
  EXPECT_EQ(Arch::parse("sm_90a").suffix, "a");
  EXPECT_EQ(Arch::parse("sm_90a").name(), "sm_90a");
  EXPECT_EQ(Arch::parse("compute_80").sm, 80);
  EXPECT_EQ(Arch::parse("86").sm, 86);
  EXPECT_EQ(Arch::parse("100f").name(), "sm_100f");
  EXPECT_EQ(Arch::parse("9.0").sm, 90);
  EXPECT_EQ(Arch::parse("12.0").sm, 120);
  EXPECT_EQ(Arch(120).major(), 12);
  EXPECT_EQ(Arch(86).minor(), 6);
  for (const char* bad : {"", "sm_", "sm_90b", "hopper", "9.", "9.10", "sm_9", "-90"}) {
    EXPECT_THROW(Arch::parse(bad), Error) << bad;
  }
}

TEST(ArchLimitsTest, TableMatchesPublishedFigures) {
  const ArchLimits& h100 = arch_limits(90);
  EXPECT_EQ(h100.max_threads_per_sm, 2048);
  EXPECT_EQ(h100.max_warps_per_sm, 64);
  EXPECT_EQ(h100.smem_per_sm, 233472u);           // 228 KiB, as the H200's driver reports
  EXPECT_EQ(h100.smem_per_block_optin, 232448u);  // 227 KiB
  EXPECT_EQ(h100.reserved_smem_per_block, 1024u);
  EXPECT_EQ(arch_limits(86).max_threads_per_sm, 1536);
  EXPECT_EQ(arch_limits(75).max_threads_per_sm, 1024);
  EXPECT_EQ(arch_limits(80).smem_per_block_optin, 163u * 1024);
  EXPECT_EQ(find_arch_limits(88), nullptr);
  EXPECT_THROW(arch_limits(42), Error);
}

TEST(ArchLimitsTest, BlocksPerSmAgreeWithCudaOccupancyHeader) {
  for (int sm : {50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121}) {
    const ArchLimits& l = arch_limits(sm);
    cudaOccDeviceProp p;
    p.computeMajor = sm / 10;
    p.computeMinor = sm % 10;
    int blocks = 0, granularity = 0;
    ASSERT_EQ(cudaOccMaxBlocksPerMultiprocessor(&blocks, &p), CUDA_OCC_SUCCESS) << sm;
    ASSERT_EQ(cudaOccSMemAllocationGranularity(&granularity, &p), CUDA_OCC_SUCCESS) << sm;
    EXPECT_EQ(l.max_blocks_per_sm, blocks) << sm;
    EXPECT_EQ(l.smem_alloc_unit, static_cast<std::size_t>(granularity)) << sm;
    // The largest carveout must be one the header knows.
    std::size_t carveout = l.smem_per_sm;
    if (sm >= 70) {
      EXPECT_EQ(cudaOccAlignUpShmemSizeVoltaPlus(&carveout, &p), CUDA_OCC_SUCCESS) << sm;
      EXPECT_EQ(carveout, l.smem_per_sm) << sm;
    }
  }
}

TEST(OccupancyTest, RegistersLimitOccupancy) {
  const ArchLimits& l = arch_limits(90);
  // 256 threads, 32 registers: 8 warps * 1024 registers per block, 8 blocks = 64 warps.
  Occupancy full = theoretical_occupancy(l, kernel(32), 256);
  EXPECT_EQ(full.blocks_per_sm, 8);
  EXPECT_EQ(full.active_warps, 64);
  EXPECT_DOUBLE_EQ(full.fraction, 1.0);
  EXPECT_EQ(full.limited_by, "warps");
  EXPECT_TRUE(full.error.empty());
  // 128 registers: 4096 per warp, 16 warps fit the 64 K file = 2 blocks of 8 warps.
  Occupancy quarter = theoretical_occupancy(l, kernel(128), 256);
  EXPECT_EQ(quarter.blocks_per_sm, 2);
  EXPECT_DOUBLE_EQ(quarter.fraction, 0.25);
  EXPECT_EQ(quarter.limited_by, "registers");
  // 72 registers round to 2304 per warp: 7 warps per 16 K sub-partition, 28 warps, 3 blocks of 8.
  EXPECT_EQ(theoretical_occupancy(l, kernel(72), 256).blocks_per_sm, 3);
}

TEST(OccupancyTest, SharedMemoryLimitsOccupancy) {
  const ArchLimits& l = arch_limits(90);
  // 100 KB dynamic + 1 KiB reserved per block: two blocks fit in 228 KiB.
  Occupancy two = theoretical_occupancy(l, kernel(32), 256, 100000);
  EXPECT_EQ(two.blocks_per_sm, 2);
  EXPECT_EQ(two.limited_by, "shared memory");
  // Static and dynamic add up: 48 KB static + 60 KB dynamic + 1 KiB = 3.8 blocks -> 2.
  EXPECT_EQ(theoretical_occupancy(l, kernel(32, 48000), 128, 60000).blocks_per_sm, 2);
  // sm_86 has 100 KiB: 40 KB + 1 KiB reserved -> 2 blocks.
  EXPECT_EQ(theoretical_occupancy(arch_limits(86), kernel(32), 128, 40000).blocks_per_sm, 2);
}

TEST(OccupancyTest, ArchitecturesDiffer) {
  KernelResources k = kernel(32);
  EXPECT_EQ(theoretical_occupancy(arch_limits(86), k, 256).blocks_per_sm, 6);  // 1536 threads
  EXPECT_DOUBLE_EQ(theoretical_occupancy(arch_limits(86), k, 256).fraction, 1.0);
  EXPECT_EQ(theoretical_occupancy(arch_limits(75), k, 256).blocks_per_sm, 4);  // 1024 threads
  EXPECT_EQ(theoretical_occupancy(arch_limits(80), k, 32).blocks_per_sm, 32);  // block cap
  EXPECT_EQ(theoretical_occupancy(arch_limits(80), k, 32).limited_by, "blocks");
  EXPECT_DOUBLE_EQ(theoretical_occupancy(arch_limits(80), k, 32).fraction, 0.5);
}

TEST(OccupancyTest, ImpossibleLaunchesReportWhy) {
  const ArchLimits& l = arch_limits(90);
  Occupancy big = theoretical_occupancy(l, kernel(32), 2048);
  EXPECT_EQ(big.blocks_per_sm, 0);
  EXPECT_FALSE(big.error.empty());
  EXPECT_EQ(theoretical_occupancy(l, kernel(32), 0).blocks_per_sm, 0);
  Occupancy smem = theoretical_occupancy(l, kernel(32), 128, 232449);
  EXPECT_EQ(smem.blocks_per_sm, 0);
  EXPECT_NE(smem.error.find("232448"), std::string::npos);
  EXPECT_EQ(theoretical_occupancy(l, kernel(32), 128, 232448).blocks_per_sm, 1);  // exactly the opt-in max
  // 255 registers allow 256 threads per block, not 512.
  EXPECT_EQ(theoretical_occupancy(l, kernel(255), 512).blocks_per_sm, 0);
  EXPECT_EQ(theoretical_occupancy(l, kernel(255), 256).blocks_per_sm, 1);
}

TEST(OccupancyTest, KernelMaxThreadsPerBlock) {
  const ArchLimits& l = arch_limits(90);
  // Figures the H200's driver reported for register_pressure at these counts.
  EXPECT_EQ(kernel_max_threads_per_block(l, kernel(64)), 1024);
  EXPECT_EQ(kernel_max_threads_per_block(l, kernel(72)), 896);
  EXPECT_EQ(kernel_max_threads_per_block(l, kernel(80)), 768);
  EXPECT_EQ(kernel_max_threads_per_block(l, kernel(96)), 640);
  EXPECT_EQ(kernel_max_threads_per_block(l, kernel(104)), 512);
  EXPECT_EQ(kernel_max_threads_per_block(l, kernel(168)), 384);
  EXPECT_EQ(kernel_max_threads_per_block(l, kernel(254)), 256);
  KernelResources bounded = kernel(8);
  bounded.launch_bound_threads = 128;
  EXPECT_EQ(kernel_max_threads_per_block(l, bounded), 128);
}

}  // namespace
}  // namespace ktune
