// Runs the tuned vector_add through ktune::Launcher, as an application would:
// buffers from the CUDA runtime, the configuration picked at run time for
// the GPU and problem size at hand, results checked on the host.
//
//   launcher_example SPEC RESULTS [N...]
//
// SPEC: templates/vector_add/vector_add.yaml; RESULTS: a ktune database, a
// `ktune export --format json` file or a Kernel Tuner cache. Without a GPU it
// prints what it would choose for a few well-known devices and exits 0.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include <ktune/launcher.h>

namespace {

#define CUDA_CHECK(call)                                                                     \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));                       \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

// c = a + b over n floats through the launcher; returns the number of wrong
// elements and prints the bandwidth of the tuned kernel.
size_t run(ktune::Launcher& vadd, int n) {
  std::vector<float> a(n), b(n), c(n);
  std::mt19937 rng(n);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int i = 0; i < n; ++i) a[i] = u(rng), b[i] = u(rng);
  float *da, *db, *dc;
  CUDA_CHECK(cudaMalloc(&da, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&db, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dc, n * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));

  const ktune::Problem problem{{"n", n}};
  vadd(problem, stream, dc, da, db, n);  // the first launch compiles (or loads from the cubin cache)
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  const int reps = 20;
  CUDA_CHECK(cudaEventRecord(start, stream));
  for (int r = 0; r < reps; ++r) vadd(problem, stream, dc, da, db, n);
  CUDA_CHECK(cudaEventRecord(stop, stream));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CUDA_CHECK(cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost));
  size_t wrong = 0;
  for (int i = 0; i < n; ++i) wrong += c[i] != a[i] + b[i];
  const double per = ms / reps;
  const ktune::Choice& choice = vadd.prepare(problem);
  std::printf("n=%-10d %-64s %.4f ms  %7.1f GB/s  first launch ready in %.2f ms (%s)  %s\n", n,
              choice.config_text().c_str(), per, 3.0 * 4 * n / (per * 1e6), choice.compile_ms,
              choice.cache_hit ? "cache hit" : "compiled", wrong ? "WRONG" : "verified");
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  cudaStreamDestroy(stream);
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SPEC RESULTS [N...]\n", argv[0]);
    return 2;
  }
  try {
    ktune::LauncherOptions options;
    options.spec = argv[1];
    options.results = argv[2];
    ktune::Launcher vadd(options);
    // Selection needs no GPU: what each device would get for 2^26 floats.
    const ktune::Problem big{{"n", 1 << 26}};
    for (auto [name, cc] : {std::pair<const char*, int>{"NVIDIA H100 80GB HBM3", 90}, {"NVIDIA H200", 90},
                            {"NVIDIA A100-SXM4-80GB", 80}})
      std::printf("choice: %s\n", vadd.choose(big, name, cc).str().c_str());

    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      std::printf("no CUDA device here: selection shown only\n");
      return 0;
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
    std::vector<int> sizes;
    for (int i = 3; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
    if (sizes.empty()) sizes = {1 << 20, 1000003, 1 << 26};
    size_t wrong = 0;
    for (int n : sizes) wrong += run(vadd, n);
    return wrong ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "launcher_example: %s\n", e.what());
    return 1;
  }
}
