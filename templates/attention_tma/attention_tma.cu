// attention_tma: templates/attention's forward pass (attention.cu: the algorithm, the
// shared-memory layout and the consumers) with the producer warpgroup of FlashAttention-3:
// one thread issues every copy of Q, K and V as TMA boxes through tensor maps (q_map,
// k_map, v_map: 4-D maps over (D, S, H, B) with the spec's strides, boxes of 64 columns
// by 32 rows, 128-byte swizzle), counted on the stages' `full` mbarriers with expect_tx;
// the consumers release a stage on its `empty` mbarrier. No consumer computes a copy's
// address or waits at a block barrier. setmaxnreg drops the producer to 24 registers and
// gives the consumers the rest (240 each beside two, 160 beside three). TMA zero-fills
// the rows past S, which the consumers mask as attention.cu does.
//
// Tunable macros: warpgroups (consumers, 1 to 3), block_n (a multiple of 32), stages
// (from 2: no consumer waits to refill a stage), pipeline, pingpong (the consumers
// taking turns at issuing S = Q K^T: attention.cu); block_size_x = 128 * (warpgroups + 1). The pointers Q, K, V
// are the reference's. Shared memory and grid are attention.yaml's with producer 1.
#ifndef producer
#define producer 1
#endif
#ifndef barriers
#define barriers 0
#endif
#define ATTENTION_TMA 1
#include "../attention/attention.cu"

template <int D>
__global__ void __launch_bounds__(block_size_x, 1) attention_tma(bf16* __restrict__ O, const bf16* __restrict__ Q,
    const bf16* __restrict__ K, const bf16* __restrict__ V, const __grid_constant__ TensorMap q_map,
    const __grid_constant__ TensorMap k_map, const __grid_constant__ TensorMap v_map, int B, int H, int S,
    int head_dim, float scale, long long sb, long long sh, long long ss, long long osb, long long osh, long long oss) {
  attention_body<D, false>(O, Q, K, V, S, scale, sb, sh, ss, osb, osh, oss, &q_map, &k_map, &v_map);
}
template <int D>
__global__ void __launch_bounds__(block_size_x, 1) attention_tma_causal(bf16* __restrict__ O,
    const bf16* __restrict__ Q, const bf16* __restrict__ K, const bf16* __restrict__ V,
    const __grid_constant__ TensorMap q_map, const __grid_constant__ TensorMap k_map,
    const __grid_constant__ TensorMap v_map, int B, int H, int S, int head_dim, float scale, long long sb,
    long long sh, long long ss, long long osb, long long osh, long long oss) {
  attention_body<D, true>(O, Q, K, V, S, scale, sb, sh, ss, osb, osh, oss, &q_map, &k_map, &v_map);
}

// The references (attention.cu's) with these kernels' parameters, the maps unused.
extern "C" __global__ void attention_tma_ref(bf16* __restrict__ O, const bf16* __restrict__ Q,
    const bf16* __restrict__ K, const bf16* __restrict__ V, const __grid_constant__ TensorMap,
    const __grid_constant__ TensorMap, const __grid_constant__ TensorMap, int B, int H, int S, int head_dim,
    float scale, long long sb, long long sh, long long ss, long long osb, long long osh, long long oss) {
  attention_reference<false>(O, Q, K, V, B, H, S, head_dim, scale, sb, sh, ss, osb, osh, oss);
}
extern "C" __global__ void attention_tma_causal_ref(bf16* __restrict__ O, const bf16* __restrict__ Q,
    const bf16* __restrict__ K, const bf16* __restrict__ V, const __grid_constant__ TensorMap,
    const __grid_constant__ TensorMap, const __grid_constant__ TensorMap, int B, int H, int S, int head_dim,
    float scale, long long sb, long long sh, long long ss, long long osb, long long osh, long long oss) {
  attention_reference<true>(O, Q, K, V, B, H, S, head_dim, scale, sb, sh, ss, osb, osh, oss);
}
