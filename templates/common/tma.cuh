// TMA (sm_90): copies of boxes of a tensor through a tensor map, completing on an
// mbarrier with the bytes they bring. A tensor map is the 128-byte CUtensorMap that
// ktune builds from a spec argument of `type: tensor_map` and passes by value; the
// kernel takes it as `const __grid_constant__ TensorMap` and copies with its address.
#pragma once

struct __align__(64) TensorMap {
  unsigned long long opaque[16];
};

// Copies the box at element coordinates (x, y) (x innermost) of `map` to shared
// address `dst`; `bar`'s transaction count falls by its bytes when it lands.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const TensorMap* map, unsigned bar, int x, int y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::
          "r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(bar)
      : "memory");
}
// The same for a 4-D map: the box at element coordinates (x, y, z, w), x innermost.
__device__ __forceinline__ void tma_load_4d(unsigned dst, const TensorMap* map, unsigned bar, int x, int y, int z,
                                            int w) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
      "[%6];\n" ::"r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(z), "r"(w), "r"(bar)
      : "memory");
}
// Arrives on `bar` and adds `bytes` to the transactions its phase waits for.
__device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// Makes barrier initialisation visible to the async proxy (TMA) before first use.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
