// limits: measures the hardware ceilings that ktune's templates are compared
// against, on the GPU it runs on, and prints them as a table and as one JSON
// line (`LIMITS_JSON {...}`) for docs/benchmarks.md.
//
// Measured: device-to-device copy bandwidth (cudaMemcpyAsync and a float4
// copy kernel, bytes read + written), read-only bandwidth (a float4 sum over
// the buffer, bytes read), cuBLAS SGEMM with tensor cores off (pedantic and
// default math) and cuBLAS bf16 GEMM (fp32 compute; bf16 and fp32 output).
// Every figure is the median of --reps timed runs (CUDA events, one pair per
// run) after warm-up, on hash-generated random data (never zeros), with the
// output poisoned (all bits set: NaN) before each run and checked afterwards:
// copies bit-exact, sums and GEMM samples against a float64 host reference.
// The GEMM error check also proves TF32 was not used for fp32 (TF32 lands near
// 3e-4 relative error; fp32 far under 5e-5).
//
// Exit status: 0 all checks passed, 1 a CUDA/cuBLAS call or a check failed,
// 2 bad arguments. Build: bench/gpu/build_limits.sh.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

namespace {

#define CK(expr) check_cuda((expr), #expr, __FILE__, __LINE__)
#define CB(expr) check_cublas((expr), #expr, __FILE__, __LINE__)

void check_cuda(cudaError_t e, const char* what, const char* file, int line) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, what,
               cudaGetErrorName(e), cudaGetErrorString(e));
  std::exit(1);
}

void check_cublas(cublasStatus_t s, const char* what, const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, what,
               cublasGetStatusName(s), cublasGetStatusString(s));
  std::exit(1);
}

// --- Random data, identical on host and device ------------------------------
// The host recomputes any input element from its index, so checks need no
// copy of the inputs and the reference is exact to the bit.

__host__ __device__ inline uint32_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

// Uniform in [0,1) with 24 random bits: exact in float.
__host__ __device__ inline float unit_val(uint64_t i, uint64_t seed) {
  return static_cast<float>(mix(i + seed * 0x9E3779B97F4A7C15ULL) >> 8) *
         (1.0f / 16777216.0f);
}

// Uniform in [-1,1): 2u-1 is exact, so host and device agree bit for bit.
__host__ __device__ inline float signed_val(uint64_t i, uint64_t seed) {
  return 2.0f * unit_val(i, seed) - 1.0f;
}

__global__ void init_unit(float* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    p[i] = unit_val(i, seed);
}

__global__ void init_signed(float* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    p[i] = signed_val(i, seed);
}

__global__ void init_signed_bf16(__nv_bfloat16* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16(signed_val(i, seed));
}

// --- Bandwidth kernels ------------------------------------------------------
// Four independent 16-byte loads per thread per iteration keep enough bytes in
// flight to saturate HBM with one resident wave of blocks; the launch bounds
// keep registers low enough that a full wave (2048 threads per SM) is resident.

__global__ void __launch_bounds__(256, 8) copy_f4(const float4* __restrict__ src, float4* __restrict__ dst,
                        size_t n) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    float4 a = src[i], b = src[i + stride], c = src[i + 2 * stride],
           d = src[i + 3 * stride];
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

__device__ inline float hsum(float4 v) { return (v.x + v.y) + (v.z + v.w); }

// One double per block (no atomics) so the output can be poisoned and every
// block's write checked.
__global__ void __launch_bounds__(256, 8) sum_f4(const float4* __restrict__ src, size_t n,
                       double* __restrict__ partial) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f;
  for (; i + 3 * stride < n; i += 4 * stride) {
    float4 a = src[i], b = src[i + stride], c = src[i + 2 * stride],
           d = src[i + 3 * stride];
    s0 += hsum(a);
    s1 += hsum(b);
    s2 += hsum(c);
    s3 += hsum(d);
  }
  for (; i < n; i += stride) s0 += hsum(src[i]);
  double s = double(s0) + double(s1) + double(s2) + double(s3);
  for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
  __shared__ double warp_sums[32];
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    double t = 0;
    for (unsigned w = 0; w < (blockDim.x + 31) / 32; ++w) t += warp_sums[w];
    partial[blockIdx.x] = t;
  }
}

__global__ void count_mismatch(const uint32_t* a, const uint32_t* b, size_t n,
                               unsigned long long* bad) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    local += (a[i] != b[i]);
  if (local) atomicAdd(bad, local);
}

// --- Timing and results -----------------------------------------------------

struct Stats {
  double median_ms = 0, min_ms = 0, max_ms = 0;
};

struct Result {
  std::string name, size;
  double work = 0;  // bytes or flops per run
  Stats t;
  double value = 0;  // GB/s or TFLOP/s
  std::string unit;
  bool ok = false;
  double rel_err = -1;  // -1: exact comparison, no error figure
  std::string note;
};

struct Ctx {
  cudaStream_t stream{};
  cudaDeviceProp prop{};
  int blocks = 0;  // one full wave of 256-thread blocks
  int reps = 20, warmup = 5;
  std::vector<Result> results;
};

// prep() runs before each start event (poisoning outputs), so it is ordered
// before the work but not timed.
template <class Prep, class Work>
Stats time_it(Ctx& c, Prep prep, Work work) {
  for (int i = 0; i < c.warmup; ++i) {
    prep();
    work();
  }
  std::vector<cudaEvent_t> ev(2 * c.reps);
  for (auto& e : ev) CK(cudaEventCreate(&e));
  for (int i = 0; i < c.reps; ++i) {
    prep();
    CK(cudaEventRecord(ev[2 * i], c.stream));
    work();
    CK(cudaEventRecord(ev[2 * i + 1], c.stream));
  }
  CK(cudaStreamSynchronize(c.stream));
  std::vector<double> ms(c.reps);
  for (int i = 0; i < c.reps; ++i) {
    float m = 0;
    CK(cudaEventElapsedTime(&m, ev[2 * i], ev[2 * i + 1]));
    ms[i] = m;
  }
  for (auto& e : ev) CK(cudaEventDestroy(e));
  std::sort(ms.begin(), ms.end());
  Stats s;
  size_t h = ms.size() / 2;
  s.median_ms = ms.size() % 2 ? ms[h] : 0.5 * (ms[h - 1] + ms[h]);
  s.min_ms = ms.front();
  s.max_ms = ms.back();
  return s;
}

void launch_check() { CK(cudaGetLastError()); }

std::string size_label(size_t bytes) {
  char b[32];
  if (bytes % (1ull << 30) == 0)
    std::snprintf(b, sizeof b, "%zuGiB", bytes >> 30);
  else
    std::snprintf(b, sizeof b, "%zuMiB", bytes >> 20);
  return b;
}

// Float64 sum of unit_val(0..n-1), split over host threads (2^28 terms).
double host_unit_sum(size_t n, uint64_t seed) {
  unsigned nt = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<double> part(nt, 0.0);
  std::vector<std::thread> th;
  for (unsigned t = 0; t < nt; ++t)
    th.emplace_back([&, t] {
      double s = 0;
      for (size_t i = n * t / nt; i < n * (t + 1) / nt; ++i) s += unit_val(i, seed);
      part[t] = s;
    });
  for (auto& x : th) x.join();
  double s = 0;
  for (double p : part) s += p;
  return s;
}

// --- Bandwidth --------------------------------------------------------------

constexpr uint64_t kSeedBw = 11, kSeedA = 21, kSeedB = 22;

bool buffers_equal(Ctx& c, const void* a, const void* b, size_t bytes,
                   unsigned long long* d_bad) {
  CK(cudaMemsetAsync(d_bad, 0, sizeof *d_bad, c.stream));
  count_mismatch<<<c.blocks, 256, 0, c.stream>>>(
      static_cast<const uint32_t*>(a), static_cast<const uint32_t*>(b), bytes / 4, d_bad);
  launch_check();
  unsigned long long bad = 1;
  CK(cudaMemcpyAsync(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost, c.stream));
  CK(cudaStreamSynchronize(c.stream));
  return bad == 0;
}

void add_bw(Ctx& c, const char* name, size_t bytes, double moved, Stats t, bool ok,
            double rel_err, const char* note) {
  Result r{name, size_label(bytes), moved, t, moved / (t.median_ms * 1e-3) / 1e9,
           "GB/s", ok, rel_err, note};
  c.results.push_back(r);
}

void bench_copies(Ctx& c, float* src, float* dst, size_t bytes,
                  unsigned long long* d_bad) {
  auto poison = [&] { CK(cudaMemsetAsync(dst, 0xFF, bytes, c.stream)); };
  Stats t = time_it(c, poison, [&] {
    CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, c.stream));
  });
  add_bw(c, "memcpy_d2d", bytes, 2.0 * bytes, t, buffers_equal(c, src, dst, bytes, d_bad),
         -1, "read+write");
  size_t n4 = bytes / sizeof(float4);
  t = time_it(c, poison, [&] {
    copy_f4<<<c.blocks, 256, 0, c.stream>>>(reinterpret_cast<const float4*>(src),
                                            reinterpret_cast<float4*>(dst), n4);
    launch_check();
  });
  add_bw(c, "copy_kernel_f4", bytes, 2.0 * bytes, t,
         buffers_equal(c, src, dst, bytes, d_bad), -1, "read+write");
}

void bench_read(Ctx& c, const float* src, size_t bytes, double* d_part) {
  size_t part_bytes = sizeof(double) * c.blocks;
  Stats t = time_it(
      c, [&] { CK(cudaMemsetAsync(d_part, 0xFF, part_bytes, c.stream)); },
      [&] {
        sum_f4<<<c.blocks, 256, 0, c.stream>>>(reinterpret_cast<const float4*>(src),
                                               bytes / sizeof(float4), d_part);
        launch_check();
      });
  std::vector<double> part(c.blocks);
  CK(cudaMemcpy(part.data(), d_part, part_bytes, cudaMemcpyDeviceToHost));
  double got = 0;
  for (double p : part) got += p;  // a poisoned (NaN) partial makes got NaN
  double want = host_unit_sum(bytes / sizeof(float), kSeedBw);
  double err = std::fabs(got - want) / std::fabs(want);
  add_bw(c, "read_sum_f4", bytes, double(bytes), t, std::isfinite(got) && err < 1e-5,
         err, "read only");
}

void bench_bandwidth(Ctx& c) {
  const size_t big = 1ull << 30;
  float *src = nullptr, *dst = nullptr;
  double* d_part = nullptr;
  unsigned long long* d_bad = nullptr;
  CK(cudaMalloc(&src, big));
  CK(cudaMalloc(&dst, big));
  CK(cudaMalloc(&d_part, sizeof(double) * c.blocks));
  CK(cudaMalloc(&d_bad, sizeof *d_bad));
  init_unit<<<c.blocks, 256, 0, c.stream>>>(src, big / sizeof(float), kSeedBw);
  launch_check();
  for (size_t bytes : {big, big / 4}) {
    bench_copies(c, src, dst, bytes, d_bad);
    bench_read(c, src, bytes, d_part);
  }
  CK(cudaFree(src));
  CK(cudaFree(dst));
  CK(cudaFree(d_part));
  CK(cudaFree(d_bad));
}

// --- GEMM -------------------------------------------------------------------
// Column-major C(n x n) = A * B with A(i,l) at i + l*n from kSeedA and B(l,j)
// at l + j*n from kSeedB.

enum class Elem { F32, BF16 };

float host_input(Elem in, uint64_t idx, uint64_t seed) {
  float v = signed_val(idx, seed);
  return in == Elem::BF16 ? __bfloat162float(__float2bfloat16(v)) : v;
}

struct GemmCheck {
  bool all_written = false;
  double rel_err = 0;
};

// Every element must be finite (the poison is NaN); 512 sampled elements are
// compared with a float64 dot product of the same (rounded) inputs.
GemmCheck check_gemm(const void* d_c, Elem in, Elem out, int n) {
  size_t count = size_t(n) * n;
  std::vector<float> c(count);
  if (out == Elem::F32) {
    CK(cudaMemcpy(c.data(), d_c, count * 4, cudaMemcpyDeviceToHost));
  } else {
    std::vector<__nv_bfloat16> h(count);
    CK(cudaMemcpy(h.data(), d_c, count * 2, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count; ++i) c[i] = __bfloat162float(h[i]);
  }
  GemmCheck r;
  r.all_written = std::all_of(c.begin(), c.end(), [](float v) { return std::isfinite(v); });
  double num = 0, den = 0;
  for (uint64_t s = 0; s < 512; ++s) {
    int i = mix(2 * s + 12345) % n, j = mix(2 * s + 12346) % n;
    double ref = 0;
    for (int l = 0; l < n; ++l)
      ref += double(host_input(in, i + uint64_t(l) * n, kSeedA)) *
             double(host_input(in, l + uint64_t(j) * n, kSeedB));
    double d = double(c[i + size_t(j) * n]) - ref;
    num += d * d;
    den += ref * ref;
  }
  r.rel_err = std::sqrt(num / den);
  return r;
}

struct GemmCase {
  const char* name;
  Elem in, out;
  cublasMath_t math;
  double tol;  // fp32: far under TF32's ~3e-4
  const char* note;
};

void run_gemm(Ctx& c, cublasHandle_t h, const GemmCase& g, int n) {
  size_t count = size_t(n) * n;
  size_t in_sz = g.in == Elem::F32 ? 4 : 2, out_sz = g.out == Elem::F32 ? 4 : 2;
  void *a = nullptr, *b = nullptr, *d_c = nullptr;
  CK(cudaMalloc(&a, count * in_sz));
  CK(cudaMalloc(&b, count * in_sz));
  CK(cudaMalloc(&d_c, count * out_sz));
  if (g.in == Elem::F32) {
    init_signed<<<c.blocks, 256, 0, c.stream>>>(static_cast<float*>(a), count, kSeedA);
    launch_check();
    init_signed<<<c.blocks, 256, 0, c.stream>>>(static_cast<float*>(b), count, kSeedB);
  } else {
    init_signed_bf16<<<c.blocks, 256, 0, c.stream>>>(static_cast<__nv_bfloat16*>(a), count, kSeedA);
    launch_check();
    init_signed_bf16<<<c.blocks, 256, 0, c.stream>>>(static_cast<__nv_bfloat16*>(b), count, kSeedB);
  }
  launch_check();
  CB(cublasSetMathMode(h, g.math));
  const float alpha = 1.0f, beta = 0.0f;
  cudaDataType_t ti = g.in == Elem::F32 ? CUDA_R_32F : CUDA_R_16BF;
  cudaDataType_t to = g.out == Elem::F32 ? CUDA_R_32F : CUDA_R_16BF;
  Stats t = time_it(
      c, [&] { CK(cudaMemsetAsync(d_c, 0xFF, count * out_sz, c.stream)); },
      [&] {
        if (g.in == Elem::F32)
          CB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha,
                         static_cast<const float*>(a), n, static_cast<const float*>(b), n,
                         &beta, static_cast<float*>(d_c), n));
        else
          CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, ti, n, b, ti, n,
                          &beta, d_c, to, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      });
  GemmCheck chk = check_gemm(d_c, g.in, g.out, n);
  double flops = 2.0 * n * double(n) * n;
  char size[32];
  std::snprintf(size, sizeof size, "%d^3", n);
  c.results.push_back(Result{g.name, size, flops, t, flops / (t.median_ms * 1e-3) / 1e12,
                             "TFLOP/s", chk.all_written && chk.rel_err < g.tol,
                             chk.rel_err, g.note});
  CK(cudaFree(a));
  CK(cudaFree(b));
  CK(cudaFree(d_c));
}

void bench_gemm(Ctx& c) {
  cublasHandle_t h = nullptr;
  CB(cublasCreate(&h));
  CB(cublasSetStream(h, c.stream));
  const GemmCase cases[] = {
      {"sgemm_f32_pedantic", Elem::F32, Elem::F32, CUBLAS_PEDANTIC_MATH, 5e-5,
       "no tensor cores, no TF32"},
      {"sgemm_f32_default", Elem::F32, Elem::F32, CUBLAS_DEFAULT_MATH, 5e-5,
       "default math (as PyTorch, TF32 off)"},
      {"gemm_bf16_out_bf16", Elem::BF16, Elem::BF16, CUBLAS_DEFAULT_MATH, 8e-3,
       "GemmEx, fp32 compute"},
      {"gemm_bf16_out_f32", Elem::BF16, Elem::F32, CUBLAS_DEFAULT_MATH, 1e-4,
       "GemmEx, fp32 compute"},
  };
  for (const GemmCase& g : cases)
    for (int n : {4096, 8192}) run_gemm(c, h, g, n);
  CB(cublasDestroy(h));
}

// --- Device facts and printing ----------------------------------------------

// The kernel driver's version ("580.95.05") lives in NVML; it is loaded at run
// time so the binary needs nothing beyond libcuda on the host.
std::string nvml_driver_version() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return "unknown";
  using InitFn = int (*)();
  using VerFn = int (*)(char*, unsigned);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
  auto ver = reinterpret_cast<VerFn>(dlsym(lib, "nvmlSystemGetDriverVersion"));
  auto fini = reinterpret_cast<InitFn>(dlsym(lib, "nvmlShutdown"));
  std::string out = "unknown";
  char buf[96] = {};
  if (init && ver && fini && init() == 0) {
    if (ver(buf, sizeof buf) == 0) out = buf;
    fini();
  }
  dlclose(lib);
  return out;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\';
    if (static_cast<unsigned char>(ch) >= 0x20) o += ch;
  }
  return o + "\"";
}

struct Header {
  std::string device, date, driver;
  int cuda_driver = 0, runtime = 0, cublas = 0, sms = 0, cc = 0;
  size_t mem = 0;
};

void print_table(const Header& hd, const Ctx& c) {
  std::printf("\nlimits: %s | sm_%d | %d SMs | %.1f GiB | driver %s (CUDA %d) | "
              "runtime %d | cuBLAS %d | %s | reps %d\n",
              hd.device.c_str(), hd.cc, hd.sms, hd.mem / 1073741824.0, hd.driver.c_str(),
              hd.cuda_driver, hd.runtime, hd.cublas, hd.date.c_str(), c.reps);
  std::printf("%-20s %-7s %10s %10s %10s %6s %10s %-8s %-5s %9s\n", "test", "size",
              "median_ms", "min_ms", "max_ms", "sprd%", "value", "unit", "check", "rel_err");
  for (const Result& r : c.results) {
    double spread = 100.0 * (r.t.max_ms - r.t.min_ms) / r.t.median_ms;
    char err[16] = "exact";
    if (r.rel_err >= 0) std::snprintf(err, sizeof err, "%.2e", r.rel_err);
    std::printf("%-20s %-7s %10.4f %10.4f %10.4f %6.1f %10.1f %-8s %-5s %9s\n",
                r.name.c_str(), r.size.c_str(), r.t.median_ms, r.t.min_ms, r.t.max_ms,
                spread, r.value, r.unit.c_str(), r.ok ? "ok" : "FAIL", err);
  }
}

void print_json(const Header& hd, const Ctx& c) {
  std::printf("LIMITS_JSON {\"device\":%s,\"cc\":%d,\"sm_count\":%d,\"mem_bytes\":%zu,"
              "\"driver\":%s,\"cuda_driver_version\":%d,\"runtime_version\":%d,"
              "\"cublas_version\":%d,\"date\":%s,\"reps\":%d,\"results\":[",
              json_str(hd.device).c_str(), hd.cc, hd.sms, hd.mem,
              json_str(hd.driver).c_str(), hd.cuda_driver, hd.runtime, hd.cublas,
              json_str(hd.date).c_str(), c.reps);
  for (size_t i = 0; i < c.results.size(); ++i) {
    const Result& r = c.results[i];
    std::printf("%s{\"name\":%s,\"size\":%s,\"work\":%.17g,\"median_ms\":%.6g,"
                "\"min_ms\":%.6g,\"max_ms\":%.6g,\"value\":%.6g,\"unit\":%s,\"ok\":%s,"
                "\"rel_err\":%.3g,\"note\":%s}",
                i ? "," : "", json_str(r.name).c_str(), json_str(r.size).c_str(), r.work,
                r.t.median_ms, r.t.min_ms, r.t.max_ms, r.value, json_str(r.unit).c_str(),
                r.ok ? "true" : "false", r.rel_err, json_str(r.note).c_str());
  }
  std::printf("]}\n");
}

Header read_header(Ctx& c, int dev) {
  Header hd;
  CK(cudaGetDeviceProperties(&c.prop, dev));
  CK(cudaDriverGetVersion(&hd.cuda_driver));
  CK(cudaRuntimeGetVersion(&hd.runtime));
  int major = 0, minor = 0, patch = 0;  // of the library loaded, not the header
  CB(cublasGetProperty(MAJOR_VERSION, &major));
  CB(cublasGetProperty(MINOR_VERSION, &minor));
  CB(cublasGetProperty(PATCH_LEVEL, &patch));
  hd.cublas = major * 10000 + minor * 100 + patch;
  hd.device = c.prop.name;
  hd.sms = c.prop.multiProcessorCount;
  hd.cc = c.prop.major * 10 + c.prop.minor;
  hd.mem = c.prop.totalGlobalMem;
  hd.driver = nvml_driver_version();
  hd.date = utc_now();
  return hd;
}

int usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--reps N (default 20)] [--device I (default 0)]\n", argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Ctx c;
  int dev = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--reps" || a == "--device") && i + 1 < argc) {
      char* end = nullptr;
      long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < (a == "--reps" ? 1 : 0) || v > 10000) return usage(argv[0]);
      (a == "--reps" ? c.reps : dev) = static_cast<int>(v);
    } else {
      return usage(argv[0]);
    }
  }
  CK(cudaSetDevice(dev));
  Header hd = read_header(c, dev);
  c.blocks = c.prop.multiProcessorCount * (c.prop.maxThreadsPerMultiProcessor / 256);
  CK(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
  std::fprintf(stderr, "limits: %s, measuring bandwidth...\n", hd.device.c_str());
  bench_bandwidth(c);
  std::fprintf(stderr, "limits: measuring cuBLAS GEMM...\n");
  bench_gemm(c);
  CK(cudaStreamDestroy(c.stream));
  print_table(hd, c);
  print_json(hd, c);
  bool all_ok = std::all_of(c.results.begin(), c.results.end(),
                            [](const Result& r) { return r.ok; });
  return all_ok ? 0 : 1;
}
