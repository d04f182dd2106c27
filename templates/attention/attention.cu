// attention: the forward pass of FlashAttention on Hopper's warpgroup tensor-core
// instructions (wgmma, sm_90a only). Per (batch b, head h):
//   O = softmax(Q K^T * scale) V,  Q, K, V, O of S rows by D (the head dimension),
// bf16 in and out, fp32 accumulation, softmax online (no S x S matrix). `attention<D>`
// attends to every key, `attention_causal<D>` to keys at or before the query's position.
// D is 64 or 128 (the template argument), S any length (partial tiles are masked and
// zero-filled). Q, K and V share one layout of element strides (sb per batch, sh per
// head, ss per position; the head dimension contiguous), O has its own: (B, H, S, D),
// (B, S, H, D) or a packed QKV buffer are all strides.
//
// A block takes BLOCK_M = 64 * warpgroups queries of one head; warpgroup g owns 64 of
// them for the whole run. Q is staged once; K and V tiles of block_n keys stream through a
// `stages`-deep ring of shared memory, copied by every thread with cp.async (zero-filled
// past S), all three in the 128-byte-swizzled layout wgmma reads without bank conflicts
// (per 64-column chunk of D, rows of 128 bytes; 16-byte piece c of row r at c ^ (r % 8)).
// Per key tile, each warpgroup:
//   S = Q K^T           wgmma, A = Q and B = K from shared memory (both K-major)
//   online softmax      in registers: each thread holds two rows' share of S; row maxima
//                       across the four threads of a row (shuffles), exp2 in the log2
//                       domain, O and the row sums rescaled when a maximum grows
//   O += P V            wgmma, A = P from registers (the accumulator layout of S, packed
//                       to bf16 pairs, is the register layout of A), B = V read N-major
// How the products overlap is the `pipeline` parameter:
//   0  each product is waited for as soon as it is issued; warpgroups overlap each other
//   1  P V of tile j stays in flight while S of tile j+1 is computed and waited for
//      (ptxas then serializes the wgmmas of a group: its C7515, accumulators carried
//      around the loop)
//   2  S of tile j+1 is issued before the softmax of tile j, which runs while the tensor
//      cores compute it; P V of tile j then runs while S j+1 is waited for
// Without a producer, every thread copies: a stage is refilled two tiles after it was
// read, when every warpgroup has retired the products that read it (its wait, then the
// barrier), so stages - 2 tiles are in flight from memory (stages - 3 with pipeline 2).
// With `barriers`, every thread still copies but per-stage mbarriers replace the block
// barrier: a tile is read once every thread's copies of it landed, and a stage refilled
// once every thread released the tile it held, so warpgroups may drift apart by up to
// stages - 2 tiles instead of meeting at every tile.
// With `producer`, one more warpgroup only copies, with no block-wide barrier: per stage
// an mbarrier says the copies landed (cp.async's own arrival) and another that every
// consumer is done with it. templates/attention_tma compiles this file with ATTENTION_TMA:
// there the producer is one thread issuing TMA copies (expect_tx on `full`), the
// consumers unchanged. Causal blocks run the longest query tiles first (launch
// order reversed), skip key tiles wholly after their queries and mask only the diagonal.
//
// Tunable macros:
//   warpgroups   consumer warpgroups (64 queries each) per block
//   block_n      keys per tile: the N of S = Q K^T (64, 96, 128 or 192)
//   stages       depth of the K/V ring, at least 3 (4 with pipeline 2)
//   pipeline     0, 1 or 2, above
//   barriers     1: per-stage mbarriers in place of the block barrier per tile
//   producer     1: a copying warpgroup beside the consumers
//   block_size_x 128 * (warpgroups + producer)
// Shared memory is DYNAMIC: (BLOCK_M + 2 * stages * block_n) * D * 2 + 1024 bytes (the
// 1024 aligns it on the swizzle's period), plus 128 for the mbarriers: the spec's
// shared_memory expression. Grid: (ceil(S / BLOCK_M), H, B). Compiled for sm_90a (the
// spec's kernel.archs).
#include <cuda_bf16.h>

#include "../common/cp_async.cuh"
#include "../common/mbarrier.cuh"
#include "../common/softmax_bf16.cuh"
#include "../common/tma.cuh"
#include "../common/wgmma.cuh"

#ifndef warpgroups
#define warpgroups 2
#endif
#ifndef block_n
#define block_n 128
#endif
#ifndef stages
#define stages 3
#endif
#ifndef pipeline
#define pipeline 1
#endif
#ifndef producer
#define producer 0
#endif
#ifndef barriers
#define barriers 0
#endif
#ifndef block_size_x
#define block_size_x (128 * (warpgroups + producer))
#endif
// ATTENTION_TMA (set by templates/attention_tma, which includes this file): the producer
// is one thread issuing TMA copies through tensor maps instead of a warpgroup of
// cp.async copies.
#ifndef ATTENTION_TMA
#define ATTENTION_TMA 0
#endif
// pingpong (attention_tma only): the consumer warpgroups take turns issuing S = Q K^T, in
// a ring (warpgroup g waits for its turn on named barrier 1 + g and passes it to the
// next), so that their softmaxes are staggered and one's runs while another's products
// occupy the tensor cores, instead of the warpgroups falling into step.
#ifndef pingpong
#define pingpong 0
#endif
// With a producer warpgroup: its registers, and the consumers' share of the rest of the
// 64K register file (setmaxnreg moves them; multiples of 8; ptxas allocates each branch
// within its own figure). The cp.async producer's copy addresses do not fit in 40 beside
// more than one consumer warpgroup (its spills are what the spec's restriction avoids); a
// TMA thread needs few.
#if ATTENTION_TMA
#define PRODUCER_REGS 24
#else
#define PRODUCER_REGS 40
#endif
#define CONSUMER_REGS_ (((65536 - 128 * PRODUCER_REGS) / (128 * warpgroups)) / 8 * 8)
#define CONSUMER_REGS (CONSUMER_REGS_ > 240 ? 240 : CONSUMER_REGS_)

typedef __nv_bfloat16 bf16;
#define BLOCK_M (64 * warpgroups)

// Named barriers 1..15 (0 is __syncthreads'), N threads, whole warps: arrive without
// waiting, or arrive and wait for the barrier to complete.
template <int N> __device__ __forceinline__ void named_barrier_arrive(int id) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "n"(N) : "memory");
}
template <int N> __device__ __forceinline__ void named_barrier_sync(int id) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "n"(N) : "memory");
}

// A tile has landed: this thread's copies (at most N newer groups still in flight), then
// everyone's; the barrier also means every warpgroup is past its previous step.
template <int N> __device__ __forceinline__ void wait_landed() {
  cp_async_wait<N>();
  fence_proxy_async();
  __syncthreads();
}

// Issues the cp.async copies of ROWS rows of D elements, rows r0.. of a head whose rows
// are `stride` elements apart, into the swizzled layout at `dst`: 64-column chunks
// ROWS * 128 bytes apart. Rows at or past S become zeros. NT threads share the copies;
// this is thread `tid` of them.
template <int D, int ROWS, int NT>
__device__ __forceinline__ void load_tile(unsigned dst, const bf16* __restrict__ src, long long stride, int r0, int S,
                                          int tid) {
  constexpr int PER_ROW = D / 8, PIECES = ROWS * PER_ROW;
#pragma unroll
  for (int j = 0; j < (PIECES + NT - 1) / NT; ++j) {
    const int i = j * NT + tid;
    if (PIECES % NT == 0 || i < PIECES) {
      const int row = i / PER_ROW, c = i % PER_ROW;
      const bool valid = r0 + row < S;
      const bf16* p = src + (valid ? r0 + row : 0) * stride + c * 8;
      cp_async16_zfill(dst + (c / 8) * (ROWS * 128) + row * 128 + (((c % 8) ^ (row % 8)) << 4), p, valid);
    }
  }
}

template <int D, bool CAUSAL>
__device__ __forceinline__ void attention_body(bf16* __restrict__ O, const bf16* __restrict__ Q,
                                               const bf16* __restrict__ K, const bf16* __restrict__ V, int S,
                                               float scale, long long sb, long long sh, long long ss, long long osb,
                                               long long osh, long long oss, const TensorMap* q_map = nullptr,
                                               const TensorMap* k_map = nullptr, const TensorMap* v_map = nullptr) {
  static_assert(D == 64 || D == 128, "head dimension 64 or 128");
  static_assert(!ATTENTION_TMA || (producer && block_n % 32 == 0), "TMA: a producer, whole 32-row boxes");
  // (with the TMA producer, one stage less: no consumer copies, so none waits for a refill)
  static_assert(stages >= 3 + (pipeline == 2) - ATTENTION_TMA, "the ring needs at least 3 stages, 4 with pipeline 2");
  static_assert(block_n % 16 == 0, "block_n: whole k16 steps of P V");
  static_assert(!pingpong || (ATTENTION_TMA && warpgroups > 1 && pipeline < 2), "pingpong: TMA, 2 or 3 consumers, pipeline 0 or 1");
  static_assert(!barriers || (!producer && pipeline < 2), "per-stage barriers: without a producer, pipeline 0 or 1");
  constexpr int Q_BYTES = BLOCK_M * D * 2, KV_BYTES = block_n * D * 2, STAGE_BYTES = 2 * KV_BYTES;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const unsigned q_smem = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const unsigned ring = q_smem + Q_BYTES;  // both sizes are multiples of 1024 bytes

  const int tile = CAUSAL ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const int q0 = tile * BLOCK_M;
  const long long head = blockIdx.z * sb + blockIdx.y * sh;
  const bf16* Qh = Q + head;
  const bf16* Kh = K + head;
  const bf16* Vh = V + head;
  const int kv_end = CAUSAL ? min(S, q0 + BLOCK_M) : S;
  const int tiles = (kv_end + block_n - 1) / block_n;

  // Per stage, `full` completes when the copies of a tile have landed and `empty` when
  // every thread that reads it is done with it; Q has its own. They sit after the ring.
  const unsigned full = ring + stages * STAGE_BYTES, empty = full + 8 * stages, q_full = empty + 8 * stages;
#if producer
  // One warpgroup copies, the others compute.
  constexpr unsigned ARRIVALS = ATTENTION_TMA ? 1 : 128;  // per `full`: the TMA thread's expect_tx
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(full + 8 * s, ARRIVALS);
      mbar_init(empty + 8 * s, 128 * warpgroups);
    }
    mbar_init(q_full, ARRIVALS);
#if ATTENTION_TMA
    fence_barrier_init();
#endif
  }
  __syncthreads();
  constexpr int LOADERS = 128;
  if (threadIdx.x < 128) {
    if constexpr (warpgroups > 1) set_max_registers<-PRODUCER_REGS>();
#if ATTENTION_TMA
    // One thread copies everything: boxes of 32 rows by 64 columns (128 bytes, the
    // swizzle's span) of the maps over (D, S, H, B), each landing as 32 swizzled rows of
    // its 64-column chunk (4096 bytes, a multiple of the swizzle's 1024-byte period).
    // Rows past S arrive as zeros and still count their bytes on the barrier.
    if (threadIdx.x == 0) {
      const int h = blockIdx.y, b = blockIdx.z;
      mbar_expect_tx(q_full, Q_BYTES);
#pragma unroll
      for (int c = 0; c < D / 64; ++c)
#pragma unroll
        for (int r = 0; r < BLOCK_M / 32; ++r)
          tma_load_4d(q_smem + c * (BLOCK_M * 128) + r * 4096, q_map, q_full, c * 64, q0 + r * 32, h, b);
      for (int j = 0; j < tiles; ++j) {
        const int s = j % stages;
        if (j >= stages) mbar_wait(empty + 8 * s, (j / stages - 1) & 1);
        const unsigned k_dst = ring + s * STAGE_BYTES, bar = full + 8 * s;
        mbar_expect_tx(bar, STAGE_BYTES);
#pragma unroll
        for (int c = 0; c < D / 64; ++c)
#pragma unroll
          for (int r = 0; r < block_n / 32; ++r) {
            const unsigned off = c * (block_n * 128) + r * 4096;
            tma_load_4d(k_dst + off, k_map, bar, c * 64, j * block_n + r * 32, h, b);
            tma_load_4d(k_dst + KV_BYTES + off, v_map, bar, c * 64, j * block_n + r * 32, h, b);
          }
      }
    }
    return;
#endif
    const int loader = threadIdx.x;
    load_tile<D, BLOCK_M, LOADERS>(q_smem, Qh, ss, q0, S, loader);
    mbar_arrive_copies(q_full);
    for (int j = 0; j < tiles; ++j) {
      const int s = j % stages;
      if (j >= stages) mbar_wait(empty + 8 * s, (j / stages - 1) & 1);
      load_tile<D, block_n, LOADERS>(ring + s * STAGE_BYTES, Kh, ss, j * block_n, S, loader);
      load_tile<D, block_n, LOADERS>(ring + s * STAGE_BYTES + KV_BYTES, Vh, ss, j * block_n, S, loader);
      mbar_arrive_copies(full + 8 * s);
    }
    cp_async_wait<0>();
    return;
  }
  if constexpr (warpgroups > 1) set_max_registers<CONSUMER_REGS>();
  const int wg = threadIdx.x / 128 - 1;
#else
  constexpr int LOADERS = block_size_x;
  const int wg = threadIdx.x / 128, loader = threadIdx.x;
#if barriers
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(full + 8 * s, block_size_x);
      mbar_init(empty + 8 * s, block_size_x);
    }
  }
  __syncthreads();
#endif
#endif
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  const int wg_q0 = q0 + wg * 64;
  const int row = wg_q0 + warp * 16 + lane / 4;  // this thread's rows: row and row + 8

  // Tile j is in shared memory; every thread reads it through the async proxy next.
  auto tile_ready = [&](int j) {
    mbar_wait(full + 8 * (j % stages), (j / stages) & 1);
    fence_proxy_async();
  };
  // This thread is done with tile j (its products retired): its stage may be refilled.
  auto release = [&](int j) {
    if (j >= 0) mbar_arrive(empty + 8 * (j % stages));
  };
#if producer
  mbar_wait(q_full, 0);
#elif barriers
  // Every thread copies its share of tile t once every thread has released the tile its
  // stage held; the copies' landing completes the stage's `full`.
  auto refill = [&](int t) {
    if (t >= tiles) return;
    if (t >= stages) mbar_wait(empty + 8 * (t % stages), (t / stages - 1) & 1);
    load_tile<D, block_n, LOADERS>(ring + (t % stages) * STAGE_BYTES, Kh, ss, t * block_n, S, loader);
    load_tile<D, block_n, LOADERS>(ring + (t % stages) * STAGE_BYTES + KV_BYTES, Vh, ss, t * block_n, S, loader);
    mbar_arrive_copies(full + 8 * (t % stages));
  };
  load_tile<D, BLOCK_M, LOADERS>(q_smem, Qh, ss, q0, S, loader);  // lands with tile 0
#pragma unroll
  for (int t = 0; t < stages - 2; ++t) refill(t);
#else
  auto load_kv = [&](int j) {  // tile j's K and V into its stage, as one group
    if (j < tiles) {
      load_tile<D, block_n, LOADERS>(ring + (j % stages) * STAGE_BYTES, Kh, ss, j * block_n, S, loader);
      load_tile<D, block_n, LOADERS>(ring + (j % stages) * STAGE_BYTES + KV_BYTES, Vh, ss, j * block_n, S, loader);
    }
    cp_async_commit();  // empty groups keep the group count in step with the tiles
  };
  load_tile<D, BLOCK_M, LOADERS>(q_smem, Qh, ss, q0, S, loader);  // joins tile 0's group
#pragma unroll
  for (int j = 0; j < stages - 2; ++j) load_kv(j);
#endif

  float o[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i) o[i] = 0.0f;
  float s_a[block_n / 2];  // S of this tile
#if pipeline == 2
  float s_b[block_n / 2];  // and of the next
#endif
  unsigned p[block_n / 16][4];
  float m[2] = {NEG_INF, NEG_INF}, l[2] = {0.0f, 0.0f};
  const float scale_log2 = scale * 1.4426950408889634f;
  // A causal warpgroup whose queries all precede tile j has nothing to do in it (and in
  // any later tile).
  auto active = [&](int j) { return !CAUSAL || j * block_n <= wg_q0 + 63; };
  auto issue_s = [&](int j, float(&s_acc)[block_n / 2]) {  // S = Q K_j^T, one group
    const unsigned k_stage = ring + (j % stages) * STAGE_BYTES;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      // 16 columns of D = 32 bytes into the 128-byte swizzled rows of chunk kk / 4.
      const unsigned a = q_smem + (kk / 4) * (BLOCK_M * 128) + wg * (64 * 128) + (kk % 4) * 32;
      const unsigned b = k_stage + (kk / 4) * (block_n * 128) + (kk % 4) * 32;
      WgmmaSS<block_n, 0>::run(s_acc, smem_desc(a, 16, 1024), smem_desc(b, 16, 1024), kk > 0);
    }
    wgmma_commit();
  };
  // The online softmax of tile j's S, O and the row sums rescaled, P packed.
  // S's accumulator layout: warp w of the warpgroup owns rows 16w..16w+15; per n8 block
  // jn, s_acc[4jn], [4jn+1] at (row, keys 8jn + 2(lane%4) + {0,1}), [4jn+2], [4jn+3] at
  // row + 8.
  auto softmax = [&](int j, float(&s_acc)[block_n / 2]) {
    const int key0 = j * block_n;
    const bool mask = key0 + block_n > S || (CAUSAL && key0 + block_n - 1 > wg_q0);
    // The row maxima of the raw scores (the scale is positive), hidden keys at -inf. Two
    // loops, so that the tiles without a mask (all but the diagonal and the last) do not
    // pay for it element by element.
    float mx[2] = {NEG_INF, NEG_INF};
    if (mask) {
#pragma unroll
      for (int jn = 0; jn < block_n / 8; ++jn)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = key0 + 8 * jn + 2 * (lane % 4) + (e & 1);
          if (key >= S || (CAUSAL && key > row + 8 * (e >> 1))) s_acc[4 * jn + e] = NEG_INF;
          mx[e >> 1] = fmaxf(mx[e >> 1], s_acc[4 * jn + e]);
        }
    } else {
#pragma unroll
      for (int jn = 0; jn < block_n / 8; ++jn)
#pragma unroll
        for (int e = 0; e < 4; ++e) mx[e >> 1] = fmaxf(mx[e >> 1], s_acc[4 * jn + e]);
    }
    // The running maxima m are in the log2 domain (scores times scale_log2).
    float corr[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
      mx[r] = fmaxf(m[r], mx[r] * scale_log2);
      if (mx[r] == NEG_INF) mx[r] = 0.0f;  // a row with no key yet: nothing to scale
      corr[r] = fast_exp2(m[r] - mx[r]);
      m[r] = mx[r];
      l[r] *= corr[r];
    }
#pragma unroll
    for (int i = 0; i < D / 2; ++i) o[i] *= corr[(i >> 1) & 1];
#pragma unroll
    for (int jn = 0; jn < block_n / 8; ++jn) {
      float e[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) e[k] = fast_exp2(fmaf(s_acc[4 * jn + k], scale_log2, -mx[k >> 1]));
      const float e0 = e[0], e1 = e[1], e2 = e[2], e3 = e[3];
      l[0] += e0 + e1;
      l[1] += e2 + e3;
      // A's register layout for k16 step jn / 2: {row, k 0-7}, {row+8, k 0-7}, {row, k 8-15},
      // {row+8, k 8-15}, each a pair of adjacent keys: n8 block jn is its half jn % 2.
      p[jn / 2][(jn % 2) * 2] = pack_bf16(e0, e1);
      p[jn / 2][(jn % 2) * 2 + 1] = pack_bf16(e2, e3);
    }
  };
  auto issue_pv = [&](int j) {  // O += P V_j, one group
    const unsigned v_stage = ring + (j % stages) * STAGE_BYTES + KV_BYTES;
    fence_operands(o);
    fence_operands(p);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < block_n / 16; ++kk)  // 16 keys = 16 rows of 128 bytes per step
      WgmmaRS<D, 1>::run(o, p[kk], smem_desc(v_stage + kk * 2048, block_n * 128, 1024));
    wgmma_commit();
  };
  // After a wait: the retired groups' registers are ordered after it (and P, read by an
  // asynchronous P V until then, is kept from reuse up to it).
  auto fence_all = [&] {
    fence_operands(s_a);
#if pipeline == 2
    fence_operands(s_b);
#endif
    fence_operands(o);
    fence_operands(p);
  };

#if pipeline < 2
  // Per tile: S, waited for together with the previous tile's P V; the stage read two
  // tiles ago refilled; softmax; P V left in flight.
  for (int j = 0; j < tiles; ++j) {
#if producer || barriers
    tile_ready(j);
#else
    wait_landed<stages - 3>();
#endif
#if pingpong
    // Every warpgroup takes its turn at every tile, active or not, so that the turns stay
    // matched: warpgroup 0 starts without one, the last passes none on after the last tile
    // (each barrier then completes as often as it is waited for).
    if (wg > 0 || j > 0) named_barrier_sync<256>(1 + wg);
#endif
    if (active(j)) issue_s(j, s_a);
#if pingpong
    if (wg < warpgroups - 1 || j < tiles - 1) named_barrier_arrive<256>(1 + (wg + 1) % warpgroups);
#endif
    { wgmma_wait<0>(); fence_all(); }
#if producer
    release(j - 1);
#elif barriers
    release(j - 1);
    refill(j + stages - 2);
#else
    load_kv(j + stages - 2);
#endif
    if (!active(j)) continue;
    softmax(j, s_a);
    issue_pv(j);
#if pipeline == 0
    { wgmma_wait<0>(); fence_all(); }
#endif
  }
#else
  // Per tile j, with S_j done: S_{j+1} issued first, so the tensor cores compute it while
  // this warpgroup does tile j's softmax (the products wait only for P V_{j-1}); then
  // P V_j, and S_{j+1} waited for with P V_j left in flight. Tile j+1 must have landed
  // at the start of step j: one tile less is in flight from memory than without.
#if producer
  tile_ready(0);
#else
  wait_landed<stages - 3>();
#endif
  if (active(0)) issue_s(0, s_a);
  { wgmma_wait<0>(); fence_all(); }
  auto step = [&](int j, float(&cur)[block_n / 2], float(&next)[block_n / 2]) {
    const bool ahead = j + 1 < tiles && active(j + 1);
#if producer
    if (j + 1 < tiles) tile_ready(j + 1);
#else
    if (j + 1 < tiles) wait_landed<stages - 4>();
#endif
    if (ahead) issue_s(j + 1, next);
#if !producer
    load_kv(j + stages - 2);
#endif
    if (ahead) { wgmma_wait<1>(); fence_all(); }
    else { wgmma_wait<0>(); fence_all(); }
#if producer
    release(j - 1);
#endif
    if (!active(j)) return;
    softmax(j, cur);
    issue_pv(j);
    if (ahead) { wgmma_wait<1>(); fence_all(); }
  };
  for (int j = 0; j < tiles; j += 2) {  // two steps per turn: the S buffers swap roles
    step(j, s_a, s_b);
    if (j + 1 < tiles) step(j + 1, s_b, s_a);
  }
#endif
  wgmma_wait<0>();
  fence_operands(o);

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
    l[r] = 1.0f / l[r];
  }
  bf16* Oh = O + blockIdx.z * osb + blockIdx.y * osh;
#pragma unroll
  for (int i = 0; i < D / 8; ++i) {
    const int col = 8 * i + 2 * (lane % 4);
    if (row < S)
      *reinterpret_cast<unsigned*>(Oh + row * oss + col) = pack_bf16(o[4 * i] * l[0], o[4 * i + 1] * l[0]);
    if (row + 8 < S)
      *reinterpret_cast<unsigned*>(Oh + (row + 8) * oss + col) = pack_bf16(o[4 * i + 2] * l[1], o[4 * i + 3] * l[1]);
  }
}

// B, H and head_dim are the grid's and the template's; they are parameters so that the
// kernel and its reference take the same arguments.
template <int D>
__global__ void __launch_bounds__(block_size_x, 1) attention(bf16* __restrict__ O, const bf16* __restrict__ Q,
    const bf16* __restrict__ K, const bf16* __restrict__ V, int B, int H, int S, int head_dim, float scale,
    long long sb, long long sh, long long ss, long long osb, long long osh, long long oss) {
  attention_body<D, false>(O, Q, K, V, S, scale, sb, sh, ss, osb, osh, oss);
}
template <int D>
__global__ void __launch_bounds__(block_size_x, 1) attention_causal(bf16* __restrict__ O,
    const bf16* __restrict__ Q, const bf16* __restrict__ K, const bf16* __restrict__ V, int B, int H, int S,
    int head_dim, float scale, long long sb, long long sh, long long ss, long long osb, long long osh,
    long long oss) {
  attention_body<D, true>(O, Q, K, V, S, scale, sb, sh, ss, osb, osh, oss);
}

// The references: one warp per query row (lanes across the head dimension), fp32 dot
// products and an online softmax in fp32 with the library's expf. Any grid; the block
// must be whole warps. Reads no tuning macro.
template <bool CAUSAL> __device__ void attention_reference(bf16* __restrict__ O, const bf16* __restrict__ Q,
    const bf16* __restrict__ K, const bf16* __restrict__ V, int B, int H, int S, int head_dim, float scale,
    long long sb, long long sh, long long ss, long long osb, long long osh, long long oss) {
  if (head_dim > 256 || blockDim.x * blockDim.y * blockDim.z % 32 != 0) __trap();
  const long long warps = (long long)gridDim.x * gridDim.y * gridDim.z * (blockDim.x * blockDim.y * blockDim.z / 32);
  const long long block = blockIdx.x + gridDim.x * (blockIdx.y + (long long)gridDim.y * blockIdx.z);
  const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int lane = t % 32;
  for (long long i = block * (blockDim.x * blockDim.y * blockDim.z / 32) + t / 32; i < (long long)B * H * S;
       i += warps) {
    const int q = i % S, h = (i / S) % H, b = i / ((long long)S * H);
    const long long head = b * sb + h * sh;
    float qv[8], acc[8];
    for (int k = 0; k < 8; ++k) {
      const int d = lane + 32 * k;
      qv[k] = d < head_dim ? __bfloat162float(Q[head + q * ss + d]) : 0.0f;
      acc[k] = 0.0f;
    }
    float m = NEG_INF, l = 0.0f;
    const int keys = CAUSAL ? q + 1 : S;
    for (int key = 0; key < keys; ++key) {
      float s = 0.0f;
      for (int k = 0; k < 8; ++k) {
        const int d = lane + 32 * k;
        if (d < head_dim) s += qv[k] * __bfloat162float(K[head + key * ss + d]);
      }
      for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
      s *= scale;
      const float mn = fmaxf(m, s), c = expf(m - mn), pk = expf(s - mn);
      l = l * c + pk;
      for (int k = 0; k < 8; ++k) {
        const int d = lane + 32 * k;
        acc[k] = acc[k] * c + (d < head_dim ? pk * __bfloat162float(V[head + key * ss + d]) : 0.0f);
      }
      m = mn;
    }
    for (int k = 0; k < 8; ++k) {
      const int d = lane + 32 * k;
      if (d < head_dim) O[b * osb + h * osh + q * oss + d] = __float2bfloat16(acc[k] / l);
    }
  }
}
extern "C" __global__ void attention_ref(bf16* __restrict__ O, const bf16* __restrict__ Q,
    const bf16* __restrict__ K, const bf16* __restrict__ V, int B, int H, int S, int head_dim, float scale,
    long long sb, long long sh, long long ss, long long osb, long long osh, long long oss) {
  attention_reference<false>(O, Q, K, V, B, H, S, head_dim, scale, sb, sh, ss, osb, osh, oss);
}
extern "C" __global__ void attention_causal_ref(bf16* __restrict__ O, const bf16* __restrict__ Q,
    const bf16* __restrict__ K, const bf16* __restrict__ V, int B, int H, int S, int head_dim, float scale,
    long long sb, long long sh, long long ss, long long osb, long long osh, long long oss) {
  attention_reference<true>(O, Q, K, V, B, H, S, head_dim, scale, sb, sh, ss, osb, osh, oss);
}
