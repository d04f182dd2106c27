// The tuned vector_add, compiled ahead of time by nvcc: the exported header
// supplies the tuned configuration as macros (Kernel Tuner's TARGET_<device>
// blocks) and the template reads them, exactly as it reads ktune's -D options.
// At run time the header's constexpr select() says what it would pick for the
// GPU actually present, so a binary built for another device is noticed.
//
//   header_example [N]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "vector_add_tuned.h"  // generated: #define block_size_x ... for TARGET_<device>
#include "vector_add.cu"       // templates/vector_add: the kernel, shaped by those macros

#define CUDA_CHECK(call)                                                                     \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));                       \
      return 1;                                                                              \
    }                                                                                        \
  } while (0)

namespace tuned = ktune_tuned::vector_add;

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1 << 26;
  std::printf("compiled for: block_size_x=%d items_per_thread=%d vector_width=%d unroll=%d grid_stride=%d\n",
              block_size_x, items_per_thread, vector_width, unroll, grid_stride);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device here: nothing to run\n");
    return 0;
  }
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  // The field names are macros now (the #define block above), so the
  // header's Config is unpacked by position, in tune_params order.
  const auto [bx, ipt, vw, un, gs] = tuned::select(prop.name, prop.major * 10 + prop.minor, n);
  const bool same = bx == block_size_x && ipt == items_per_thread && vw == vector_width && un == unroll &&
                    gs == grid_stride;
  std::printf("device: %s (sm_%d%d); the header's choice for it: %lld,%lld,%lld,%lld,%lld%s\n", prop.name,
              prop.major, prop.minor, (long long)bx, (long long)ipt, (long long)vw, (long long)un, (long long)gs,
              same ? " (the compiled one)" : " (differs: rebuild with -DKTUNE_EXAMPLE_TARGET=<this device>)");

  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) a[i] = float(i % 1000) * 0.5f, b[i] = float(i % 77) - 3.0f;
  float *da, *db, *dc;
  CUDA_CHECK(cudaMalloc(&da, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&db, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dc, n * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  // The spec's grid expression (templates/vector_add/vector_add.yaml), in C++.
  const long long tile = (long long)block_size_x * items_per_thread;
  const unsigned grid = grid_stride ? prop.multiProcessorCount * (2048 / block_size_x)
                                    : unsigned((n / vector_width + tile - 1) / tile);
  vector_add<<<grid, block_size_x>>>(dc, da, db, n);
  CUDA_CHECK(cudaGetLastError());
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  const int reps = 20;
  CUDA_CHECK(cudaEventRecord(start));
  for (int r = 0; r < reps; ++r) vector_add<<<grid, block_size_x>>>(dc, da, db, n);
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CUDA_CHECK(cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost));
  size_t wrong = 0;
  for (int i = 0; i < n; ++i) wrong += c[i] != a[i] + b[i];
  const double per = ms / reps;
  std::printf("n=%d grid=%u: %.4f ms, %.1f GB/s, %s\n", n, grid, per, 3.0 * 4 * n / (per * 1e6),
              wrong ? "WRONG" : "verified");
  return wrong ? 1 : 0;
}
