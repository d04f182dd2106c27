// decode_attention: one new query token per sequence against its paged KV cache
// (FlashDecoding's split-KV on vLLM's paged layout), bf16 in and out, fp32 softmax and
// accumulation, grouped-query heads. For sequence b, KV head kvh and each of its G query
// heads h = kvh * G + g:
//   out[b][h] = softmax(q[b][h] . K[b]^T * scale) V[b]
// over the seq_lens[b] cached tokens. The caches are [pages][PAGE][Hkv][D] (vLLM's and
// FlashAttention's paged layout): token k of sequence b sits in page
// block_table[b][k / PAGE] at slot k % PAGE. q and out are [B][Hkv * G][D].
//
// Memory-bound: every cached byte is read once, by the block that owns (b, kvh, split):
// the G query heads share it, so K and V are read once per KV head, not per query head.
// The grid is (splits, Hkv, B); split s takes an equal share of the sequence's tokens in
// 16-token steps, and its warps take the steps in turn. A warp multiplies on tensor cores
// (mma.sync m16n8k16, bf16, fp32 accumulate) straight from registers, with no shared
// memory in the loop:
//   S = Q K^T   A = Q (rows: the G heads, padded to 16 with zeros), B = K^T. The
//               product sums over the head dimension in any order, so each thread loads
//               16 contiguous bytes of a key (the K fragment's four pairs) and takes Q's
//               fragment in the same permuted order.
//   O^T += V^T P^T   A = V^T: a thread's rows are D/8 contiguous elements of the head
//               dimension (a permutation of O's rows, undone at the end), so it loads
//               whole 16-byte pieces of 4 keys and pairs them with byte permutes; B = P^T
//               is S's accumulator pairs as they are.
// The online softmax runs per step (row maxima over the quad, exp2 in the log2 domain).
// A block then merges its warps through shared memory, and, with several splits, the
// last block of (b, kvh) to finish merges the splits' partial results (the others leave
// them in `partial_o` / `partial_ml` and count themselves in `counters`, which the last
// one resets to zero, so every launch starts from the state it leaves).
//
// Tunable macros:
//   warps          warps per block (block_size_x = 32 * warps)
//   steps_ahead    16-token steps a warp loads before it computes (memory in flight)
//   splits         blocks per (sequence, KV head), at most max_splits
// Template arguments (the spec's constants): D (64 or 128), G (query heads per KV head,
// 1 to 8), PAGE (tokens per page, a multiple of 16).
#include <cuda_bf16.h>

#include "../common/softmax_bf16.cuh"

#ifndef warps
#define warps 4
#endif
#ifndef steps_ahead
#define steps_ahead 1
#endif
#ifndef splits
#define splits 8
#endif
#ifndef block_size_x
#define block_size_x (32 * warps)
#endif

typedef __nv_bfloat16 bf16;

// D = A * B + C, m16n8k16, bf16 inputs, fp32 accumulators.
__device__ __forceinline__ void mma16816(float (&d)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                         unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

template <int D, int G, int PAGE>
__global__ void __launch_bounds__(block_size_x) decode_attention(bf16* __restrict__ out, const bf16* __restrict__ q,
    const bf16* __restrict__ k_cache, const bf16* __restrict__ v_cache, const int* __restrict__ block_table,
    const int* __restrict__ seq_lens, float* __restrict__ partial_o, float* __restrict__ partial_ml,
    int* __restrict__ counters, int B, int Hkv, int group, int head_dim, int page_size, int max_pages,
    int max_splits, float scale) {
  static_assert(D % 64 == 0 && D <= 256, "head dimension a multiple of 64, at most 256");
  static_assert(G >= 1 && G <= 8, "1 to 8 query heads per KV head");
  static_assert(PAGE % 16 == 0, "pages of whole 16-token steps");
  constexpr int DT = D / 8;      // head-dimension elements a thread holds per key of V and per head of O
  constexpr int KP = D / 64;     // 16-byte pieces of a key per thread for K (D/32 chunks of 32, two mmas each)
  const int b = blockIdx.z, kvh = blockIdx.y, split = blockIdx.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int len = seq_lens[b];
  const int steps = (len + 15) / 16, per_split = (steps + splits - 1) / splits;
  const int step_begin = split * per_split, step_end = min(steps, step_begin + per_split);
  const long long token_stride = (long long)Hkv * D;  // between tokens of a page
  const int* table = block_table + (long long)b * max_pages;
  const float scale_log2 = scale * 1.4426950408889634f;

  // Q's A fragments: head g (zero rows past G and for rows g + 8), the head dimension in
  // the order each thread loads K: chunk c of 32 elements, piece t of 8, pairs 0-1 for the
  // first k16 step of the chunk and 2-3 for the second.
  uint4 qf[D / 32];
#pragma unroll
  for (int c = 0; c < D / 32; ++c)
    qf[c] = g < G ? *reinterpret_cast<const uint4*>(q + ((long long)b * Hkv * G + kvh * G + g) * D + 32 * c + 8 * t)
                  : make_uint4(0, 0, 0, 0);

  float o[D / 16][4];  // O^T: m16 tile i holds rows DT * g + 2i (+1 for [2], [3]), heads 2t, 2t + 1
#pragma unroll
  for (int i = 0; i < D / 16; ++i) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.0f;
  float m = NEG_INF, l = 0.0f;  // for head g (this thread's share of the sum)

  for (int s0 = step_begin + warp * steps_ahead; s0 < step_end; s0 += warps * steps_ahead) {
    uint4 kr[steps_ahead][2][KP * 2];  // per step: keys g and 8 + g, D/32 chunks ... as 16-byte pieces
    uint4 vr[steps_ahead][4][KP];      // per step: keys 2t, 2t+1, 2t+8, 2t+9, DT elements each
#pragma unroll
    for (int a = 0; a < steps_ahead; ++a) {
      const int s = min(s0 + a, step_end - 1);  // a step past the end loads a valid one and is skipped
      const int key0 = s * 16;
      const long long base = ((long long)table[key0 / PAGE] * PAGE + key0 % PAGE) * token_stride + (long long)kvh * D;
#pragma unroll
      for (int half = 0; half < 2; ++half)
#pragma unroll
        for (int c = 0; c < KP * 2; ++c)
          kr[a][half][c] =
              *reinterpret_cast<const uint4*>(k_cache + base + (8 * half + g) * token_stride + 32 * c + 8 * t);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        const int key = 2 * t + (kk & 1) + 8 * (kk >> 1);
#pragma unroll
        for (int c = 0; c < KP; ++c)
          vr[a][kk][c] = *reinterpret_cast<const uint4*>(v_cache + base + key * token_stride + DT * g + 8 * c);
      }
    }
#pragma unroll
    for (int a = 0; a < steps_ahead; ++a) {
      if (s0 + a >= step_end) break;
      const int key0 = (s0 + a) * 16;
      // S = Q K^T for keys key0 + 8 * half + n: sc[half][0..1] = head g, keys 2t, 2t + 1.
      float sc[2][4];
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        sc[half][0] = sc[half][1] = sc[half][2] = sc[half][3] = 0.0f;
#pragma unroll
        for (int c = 0; c < D / 32; ++c) {
          const uint4 kq = kr[a][half][c];
          mma16816(sc[half], qf[c].x, 0u, qf[c].y, 0u, kq.x, kq.y);
          mma16816(sc[half], qf[c].z, 0u, qf[c].w, 0u, kq.z, kq.w);
        }
      }
      float mx = m;
#pragma unroll
      for (int half = 0; half < 2; ++half)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float v = sc[half][e] * scale_log2;
          if (key0 + 8 * half + 2 * t + e >= len) v = NEG_INF;
          sc[half][e] = v;
          mx = fmaxf(mx, v);
        }
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float base = mx == NEG_INF ? 0.0f : mx;
      const float corr = fast_exp2(m - base);
      m = mx;
      float p[2][2];
#pragma unroll
      for (int half = 0; half < 2; ++half)
#pragma unroll
        for (int e = 0; e < 2; ++e) p[half][e] = fast_exp2(sc[half][e] - base);
      l = l * corr + p[0][0] + p[0][1] + p[1][0] + p[1][1];
      // O^T's columns are heads 2t and 2t + 1: their factors live with lanes 8t and 8t + 4.
      const float c0 = __shfl_sync(0xffffffffu, corr, 8 * t), c1 = __shfl_sync(0xffffffffu, corr, 8 * t + 4);
      const unsigned pb0 = pack_bf16(p[0][0], p[0][1]), pb1 = pack_bf16(p[1][0], p[1][1]);
#pragma unroll
      for (int i = 0; i < D / 16; ++i) {
        o[i][0] *= c0;
        o[i][1] *= c1;
        o[i][2] *= c0;
        o[i][3] *= c1;
        // V^T rows DT * g + 2i (+1), keys 2t, 2t+1 | 2t+8, 2t+9: elements 2i, 2i+1 of the
        // pieces loaded for those keys, one 32-bit word each, paired across keys.
        const unsigned* v0 = reinterpret_cast<const unsigned*>(&vr[a][0][0]);
        const unsigned* v1 = reinterpret_cast<const unsigned*>(&vr[a][1][0]);
        const unsigned* v2 = reinterpret_cast<const unsigned*>(&vr[a][2][0]);
        const unsigned* v3 = reinterpret_cast<const unsigned*>(&vr[a][3][0]);
        mma16816(o[i], __byte_perm(v0[i], v1[i], 0x5410), __byte_perm(v0[i], v1[i], 0x7632),
                 __byte_perm(v2[i], v3[i], 0x5410), __byte_perm(v2[i], v3[i], 0x7632), pb0, pb1);
      }
    }
  }

  // Merge the warps: per head, the largest maximum, then the rescaled sums.
  __shared__ float sm_m[warps][8], sm_l[warps][8];
  __shared__ float sm_o[warps][8][D];
  __shared__ float blk_m[8], blk_l[8];
  __shared__ bool last;
  l += __shfl_xor_sync(0xffffffffu, l, 1);
  l += __shfl_xor_sync(0xffffffffu, l, 2);
  if (t == 0) {
    sm_m[warp][g] = m;
    sm_l[warp][g] = l;
  }
#pragma unroll
  for (int i = 0; i < D / 16; ++i)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      sm_o[warp][2 * t][DT * g + 2 * i + r] = o[i][2 * r];
      sm_o[warp][2 * t + 1][DT * g + 2 * i + r] = o[i][2 * r + 1];
    }
  __syncthreads();
  if (threadIdx.x < G) {
    float mm = NEG_INF, ll = 0.0f;
    for (int w = 0; w < warps; ++w) mm = fmaxf(mm, sm_m[w][threadIdx.x]);
    const float base = mm == NEG_INF ? 0.0f : mm;
    for (int w = 0; w < warps; ++w) ll += sm_l[w][threadIdx.x] * fast_exp2(sm_m[w][threadIdx.x] - base);
    blk_m[threadIdx.x] = mm;
    blk_l[threadIdx.x] = ll;
  }
  __syncthreads();
  const long long pair = (long long)b * Hkv + kvh;
  for (int i = threadIdx.x; i < G * D; i += block_size_x) {
    const int h = i / D, d = i % D;
    const float base = blk_m[h] == NEG_INF ? 0.0f : blk_m[h];
    float acc = 0.0f;
    for (int w = 0; w < warps; ++w) acc += sm_o[w][h][d] * fast_exp2(sm_m[w][h] - base);
    if (splits == 1)
      out[(pair * G + h) * D + d] = __float2bfloat16(blk_l[h] > 0.0f ? acc / blk_l[h] : 0.0f);
    else
      partial_o[((pair * max_splits + split) * G + h) * D + d] = acc;
  }
  if (splits == 1) return;
  if (threadIdx.x < G) {
    partial_ml[((pair * max_splits + split) * G + threadIdx.x) * 2] = blk_m[threadIdx.x];
    partial_ml[((pair * max_splits + split) * G + threadIdx.x) * 2 + 1] = blk_l[threadIdx.x];
  }
  // The last block of (b, kvh) to get here merges the splits (threadfence reduction).
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(&counters[pair], 1) == splits - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  if (threadIdx.x < G) {
    float mm = NEG_INF, ll = 0.0f;
    for (int s = 0; s < splits; ++s)
      mm = fmaxf(mm, __ldcg(&partial_ml[((pair * max_splits + s) * G + threadIdx.x) * 2]));
    const float base = mm == NEG_INF ? 0.0f : mm;
    for (int s = 0; s < splits; ++s) {
      const float* ml = &partial_ml[((pair * max_splits + s) * G + threadIdx.x) * 2];
      ll += __ldcg(ml + 1) * fast_exp2(__ldcg(ml) - base);
    }
    blk_m[threadIdx.x] = base;
    blk_l[threadIdx.x] = ll;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < G * D; i += block_size_x) {
    const int h = i / D, d = i % D;
    float acc = 0.0f;
    for (int s = 0; s < splits; ++s)
      acc += __ldcg(&partial_o[((pair * max_splits + s) * G + h) * D + d]) *
             fast_exp2(__ldcg(&partial_ml[((pair * max_splits + s) * G + h) * 2]) - blk_m[h]);
    out[(pair * G + h) * D + d] = __float2bfloat16(blk_l[h] > 0.0f ? acc / blk_l[h] : 0.0f);
  }
  if (threadIdx.x == 0) counters[pair] = 0;
}

// The reference: one warp per (sequence, query head), lanes across the head dimension,
// the cache read through the block table token by token, fp32 dot products and an online
// softmax in fp32 with the library's expf. Any grid; the block must be whole warps. Reads
// no tuning macro and no template argument.
extern "C" __global__ void decode_attention_ref(bf16* __restrict__ out, const bf16* __restrict__ q,
    const bf16* __restrict__ k_cache, const bf16* __restrict__ v_cache, const int* __restrict__ block_table,
    const int* __restrict__ seq_lens, float* __restrict__ partial_o, float* __restrict__ partial_ml,
    int* __restrict__ counters, int B, int Hkv, int group, int head_dim, int page_size, int max_pages,
    int max_splits, float scale) {
  if (head_dim > 256 || blockDim.x * blockDim.y * blockDim.z % 32 != 0) __trap();
  const long long per_block = blockDim.x * blockDim.y * blockDim.z / 32;
  const long long warps_all = (long long)gridDim.x * gridDim.y * gridDim.z * per_block;
  const long long block = blockIdx.x + gridDim.x * (blockIdx.y + (long long)gridDim.y * blockIdx.z);
  const int tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int lane = tid % 32;
  const int Hq = Hkv * group;
  for (long long i = block * per_block + tid / 32; i < (long long)B * Hq; i += warps_all) {
    const int b = i / Hq, h = i % Hq, kvh = h / group;
    float qv[8], acc[8];
    for (int k = 0; k < 8; ++k) {
      const int d = lane + 32 * k;
      qv[k] = d < head_dim ? __bfloat162float(q[i * head_dim + d]) : 0.0f;
      acc[k] = 0.0f;
    }
    float m = NEG_INF, l = 0.0f;
    for (int key = 0; key < seq_lens[b]; ++key) {
      const long long token =
          (long long)block_table[(long long)b * max_pages + key / page_size] * page_size + key % page_size;
      const long long row = (token * Hkv + kvh) * head_dim;
      float s = 0.0f;
      for (int k = 0; k < 8; ++k) {
        const int d = lane + 32 * k;
        if (d < head_dim) s += qv[k] * __bfloat162float(k_cache[row + d]);
      }
      for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
      s *= scale;
      const float mn = fmaxf(m, s), c = expf(m - mn), pk = expf(s - mn);
      l = l * c + pk;
      for (int k = 0; k < 8; ++k) {
        const int d = lane + 32 * k;
        acc[k] = acc[k] * c + (d < head_dim ? pk * __bfloat162float(v_cache[row + d]) : 0.0f);
      }
      m = mn;
    }
    for (int k = 0; k < 8; ++k) {
      const int d = lane + 32 * k;
      if (d < head_dim) out[i * head_dim + d] = __float2bfloat16(l > 0.0f ? acc[k] / l : 0.0f);
    }
  }
}
