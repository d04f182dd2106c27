// conv2d: the classic Kernel Tuner convolution: a 15 x 15 filter over a single-channel
// image, out[y][x] = sum_{i,j} in[y+i][x+j] * filter[i][j] ("valid" correlation).
// `in` is (height + 14) x (width + 14), `out` height x width, both row-major floats.
// Each block stages its input tile plus the filter-sized border in shared memory; each
// thread computes tile_size_x x tile_size_y outputs, block_size_x (y) apart, so a warp
// reads consecutive shared-memory words. Kernel Tuner keeps the filter in __constant__
// memory; ktune passes only kernel arguments, so here the filter is a global argument,
// read either into shared memory or through the read-only path (uniform across the warp).
//
// Tunable macros:
//   block_size_x, block_size_y   threads per block
//   tile_size_x, tile_size_y     outputs per thread in x and y
//   use_padding                  1: one extra float per shared row (bank spread)
//   read_only                    1: stage the input tile through __ldg
//   filter_in_smem               1: filter in shared memory; 0: __ldg per use
// REQUIRES: width % (block_size_x * tile_size_x) == 0, height % (block_size_y * tile_size_y) == 0.
// Grid: (width / (block_size_x*tile_size_x), height / (block_size_y*tile_size_y)).
// conv2d_ref works with any launch geometry and no macros.

#ifndef filter_width
#define filter_width 15
#endif
#ifndef filter_height
#define filter_height 15
#endif
#ifndef block_size_x
#define block_size_x 32
#endif
#ifndef block_size_y
#define block_size_y 8
#endif
#ifndef tile_size_x
#define tile_size_x 1
#endif
#ifndef tile_size_y
#define tile_size_y 4
#endif
#ifndef use_padding
#define use_padding 1
#endif
#ifndef read_only
#define read_only 1
#endif
#ifndef filter_in_smem
#define filter_in_smem 1
#endif

#define SH_H (block_size_y * tile_size_y + filter_height - 1)
#define SH_W (block_size_x * tile_size_x + filter_width - 1)

extern "C" __global__ void __launch_bounds__(block_size_x * block_size_y)
conv2d(float* __restrict__ out, const float* __restrict__ in, const float* __restrict__ filter, int width, int height) {
  __shared__ float sh_in[SH_H][SH_W + use_padding];
#if filter_in_smem
  __shared__ float sh_filter[filter_height * filter_width];
#endif
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int bx = blockIdx.x * block_size_x * tile_size_x, by = blockIdx.y * block_size_y * tile_size_y;
  const int in_width = width + filter_width - 1;

  for (int i = ty; i < SH_H; i += block_size_y)
    for (int j = tx; j < SH_W; j += block_size_x) {
      const float* p = in + (long long)(by + i) * in_width + bx + j;
#if read_only
      sh_in[i][j] = __ldg(p);
#else
      sh_in[i][j] = *p;
#endif
    }
#if filter_in_smem
  for (int k = ty * block_size_x + tx; k < filter_height * filter_width; k += block_size_x * block_size_y)
    sh_filter[k] = filter[k];
#endif
  __syncthreads();

  float sum[tile_size_y][tile_size_x];
#pragma unroll
  for (int yi = 0; yi < tile_size_y; ++yi)
#pragma unroll
    for (int xi = 0; xi < tile_size_x; ++xi) sum[yi][xi] = 0.0f;

  for (int i = 0; i < filter_height; ++i) {
#pragma unroll
    for (int j = 0; j < filter_width; ++j) {
#if filter_in_smem
      const float f = sh_filter[i * filter_width + j];
#else
      const float f = __ldg(&filter[i * filter_width + j]);
#endif
#pragma unroll
      for (int yi = 0; yi < tile_size_y; ++yi)
#pragma unroll
        for (int xi = 0; xi < tile_size_x; ++xi)
          sum[yi][xi] = fmaf(sh_in[ty + yi * block_size_y + i][tx + xi * block_size_x + j], f, sum[yi][xi]);
    }
  }

#pragma unroll
  for (int yi = 0; yi < tile_size_y; ++yi)
#pragma unroll
    for (int xi = 0; xi < tile_size_x; ++xi)
      out[(long long)(by + ty + yi * block_size_y) * width + bx + tx + xi * block_size_x] = sum[yi][xi];
}

// One output per thread-iteration, summed in double; any launch geometry.
extern "C" __global__ void conv2d_ref(float* out, const float* in, const float* filter, int width, int height) {
  const int fw = 15, fh = 15;
  const long long threads = (long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;
  const long long block = blockIdx.x + gridDim.x * (blockIdx.y + (long long)gridDim.y * blockIdx.z);
  const long long tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)
                        + block * blockDim.x * blockDim.y * blockDim.z;
  const long long in_width = width + fw - 1;
  for (long long o = tid; o < (long long)width * height; o += threads) {
    const long long y = o / width, x = o % width;
    double sum = 0.0;
    for (int i = 0; i < fh; ++i)
      for (int j = 0; j < fw; ++j) sum += (double)in[(y + i) * in_width + x + j] * (double)filter[i * fw + j];
    out[o] = (float)sum;
  }
}
