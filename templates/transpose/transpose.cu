// transpose: out (width rows x height cols) = transpose of in (height rows x width cols),
// row-major floats, through a TILE x TILE shared-memory tile so that both the reads of
// `in` and the writes of `out` are coalesced rows.
//
// Tunable macros:
//   block_size_x     threads along a tile row; TILE = block_size_x * vector_width
//   block_size_y     thread rows; each thread handles TILE / block_size_y tile rows
//   vector_width     1, 2 or 4 floats per global load and store
//   padding          extra floats per shared-memory row (0: bank conflicts when reading
//                    tile columns; 1 or more shifts each row to another bank)
//   read_only        1: loads through the read-only path (__ldg)
//   streaming_stores 1: stores with the evict-first hint (__stcs): out is not re-read
// REQUIRES: width and height multiples of TILE; rows 16-byte aligned (width, height
// multiples of 4). The grid is (width / TILE, height / TILE).
// transpose_ref works with any launch geometry and no macros.

#ifndef block_size_x
#define block_size_x 32
#endif
#ifndef block_size_y
#define block_size_y 8
#endif
#ifndef vector_width
#define vector_width 1
#endif
#ifndef padding
#define padding 1
#endif
#ifndef read_only
#define read_only 0
#endif
#ifndef streaming_stores
#define streaming_stores 0
#endif

#define TILE (block_size_x * vector_width)

#include "../common/vec.cuh"  // vec_t

__device__ __forceinline__ vec_t load_vec(const float* p) {
#if read_only
  return __ldg(reinterpret_cast<const vec_t*>(p));
#else
  return *reinterpret_cast<const vec_t*>(p);
#endif
}

__device__ __forceinline__ void store_vec(float* p, vec_t v) {
#if streaming_stores
  __stcs(reinterpret_cast<vec_t*>(p), v);
#else
  *reinterpret_cast<vec_t*>(p) = v;
#endif
}

extern "C" __global__ void __launch_bounds__(block_size_x * block_size_y)
transpose(float* __restrict__ out, const float* __restrict__ in, int width, int height) {
  __shared__ float tile[TILE][TILE + padding];
  const int x0 = blockIdx.x * TILE;  // first column of `in` (row of `out`)
  const int y0 = blockIdx.y * TILE;  // first row of `in` (column of `out`)
  const int c = threadIdx.x * vector_width;

#pragma unroll
  for (int i = 0; i < TILE / block_size_y; ++i) {
    const int r = threadIdx.y + i * block_size_y;
    vec_t v = load_vec(in + (long long)(y0 + r) * width + x0 + c);
    const float* e = reinterpret_cast<const float*>(&v);
#pragma unroll
    for (int k = 0; k < vector_width; ++k) tile[r][c + k] = e[k];
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < TILE / block_size_y; ++i) {
    const int r = threadIdx.y + i * block_size_y;
    vec_t v;
    float* e = reinterpret_cast<float*>(&v);
#pragma unroll
    for (int k = 0; k < vector_width; ++k) e[k] = tile[c + k][r];
    store_vec(out + (long long)(x0 + r) * height + y0 + c, v);
  }
}

extern "C" __global__ void transpose_ref(float* out, const float* in, int width, int height) {
  const long long threads = (long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;
  const long long block = blockIdx.x + gridDim.x * (blockIdx.y + (long long)gridDim.y * blockIdx.z);
  const long long tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)
                        + block * blockDim.x * blockDim.y * blockDim.z;
  for (long long i = tid; i < (long long)width * height; i += threads) {
    const long long y = i / width, x = i % width;  // in[y][x] -> out[x][y]
    out[x * height + y] = in[i];
  }
}
