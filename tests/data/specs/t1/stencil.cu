// Test kernel for stencil_t1.json, written for ktune's tests: TIME_TILE
// explicit steps of 2D heat diffusion (5-point stencil, radius RADIUS = 1) on a
// GRID_W x GRID_H grid, done in shared memory per block (temporal tiling: a
// halo of RADIUS * TIME_TILE cells around the block's BLOCK_X*CELLS_X x
// BLOCK_Y*CELLS_Y output cells, two ping-pong buffers). Tunable parameters and
// BenchmarkConfig entries arrive as -D.
#ifndef BLOCK_X
#define BLOCK_X 64
#define BLOCK_Y 4
#define CELLS_X 1
#define CELLS_Y 1
#define TIME_TILE 2
#define UNROLL_T 1
#define USE_LDG 1
#define MIN_BLOCKS 0
#endif
#ifndef GRID_W
#define GRID_W 6000
#define GRID_H 4000
#define RADIUS 1
#endif

#define HALO (RADIUS * TIME_TILE)
#define TILE_W (BLOCK_X * CELLS_X + 2 * HALO)
#define TILE_H (BLOCK_Y * CELLS_Y + 2 * HALO)
#if USE_LDG
#define LOAD(p) __ldg(p)
#else
#define LOAD(p) (*(p))
#endif

extern "C" __global__ void
#if MIN_BLOCKS > 0
__launch_bounds__(BLOCK_X * BLOCK_Y, MIN_BLOCKS)
#endif
diffuse_tiled(const float* heat_in, const float* temp_in, float* temp_out, float coeff_x, float coeff_y,
              float dt_over_cap) {
  __shared__ float t[2][TILE_H][TILE_W];
  const int tid = threadIdx.y * BLOCK_X + threadIdx.x;
  const int x0 = blockIdx.x * BLOCK_X * CELLS_X - HALO, y0 = blockIdx.y * BLOCK_Y * CELLS_Y - HALO;
  for (int e = tid; e < TILE_W * TILE_H; e += BLOCK_X * BLOCK_Y) {
    const int gx = min(max(x0 + e % TILE_W, 0), GRID_W - 1), gy = min(max(y0 + e / TILE_W, 0), GRID_H - 1);
    t[0][e / TILE_W][e % TILE_W] = LOAD(temp_in + gy * GRID_W + gx);
  }
  __syncthreads();
  int src = 0;
#pragma unroll UNROLL_T
  for (int step = 0; step < TIME_TILE; ++step) {
    for (int e = tid; e < TILE_W * TILE_H; e += BLOCK_X * BLOCK_Y) {
      const int ty = e / TILE_W, tx = e % TILE_W;
      const float c = t[src][ty][tx];
      if (tx == 0 || ty == 0 || tx == TILE_W - 1 || ty == TILE_H - 1) {
        t[1 - src][ty][tx] = c;
        continue;
      }
      const int gx = min(max(x0 + tx, 0), GRID_W - 1), gy = min(max(y0 + ty, 0), GRID_H - 1);
      const float p = LOAD(heat_in + gy * GRID_W + gx);
      t[1 - src][ty][tx] = c + dt_over_cap * (p + coeff_x * (t[src][ty][tx - 1] + t[src][ty][tx + 1] - 2.0f * c) +
                                              coeff_y * (t[src][ty - 1][tx] + t[src][ty + 1][tx] - 2.0f * c));
    }
    __syncthreads();
    src = 1 - src;
  }
  for (int cy = 0; cy < CELLS_Y; ++cy)
    for (int cx = 0; cx < CELLS_X; ++cx) {
      const int tx = HALO + threadIdx.x + cx * BLOCK_X, ty = HALO + threadIdx.y + cy * BLOCK_Y;
      const int gx = x0 + tx, gy = y0 + ty;
      if (gx < GRID_W && gy < GRID_H) temp_out[gy * GRID_W + gx] = t[src][ty][tx];
    }
}
