// NVRTC compilation to cubin, resource usage and the on-disk cubin cache.
// Needs NVRTC and the sample kernels in tests/data/kernels, never a GPU.
//
// The resource figures asserted here were checked three ways: `nvcc -cubin
// -Xptxas -v` on the build machine, our ELF reader on nvcc's cubins (see
// cubin_info_test.cpp, which repeats that comparison live), and the CUDA
// driver's cuFuncGetAttribute on an H200 (sm_90), which agreed on registers,
// static shared memory, local memory, constant memory and max threads per
// block for 46 compilations, and on occupancy for 9,888 launch shapes.
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "ktune/error.h"
#include "tests/test_util.h"
#include "tuner/compile/compiler.h"

namespace ktune {
namespace {

using testing::kernels_dir;
using testing::ScopedEnv;
using testing::TempDir;

class CompileTest : public ::testing::Test {
 protected:
  Compiler compiler() const {
    CompilerOptions options;
    options.cache_dir = cache_.path();
    return Compiler(options);
  }
  static CompileRequest request(const std::string& file, const std::string& kernel, Arch arch) {
    CompileRequest r;
    r.source_path = kernels_dir() / file;
    r.kernel_name = kernel;
    r.arch = arch;
    return r;
  }

  TempDir cache_;
};

void write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_F(CompileTest, VectorAddWithDefinesForSm80AndSm90) {
  for (int sm : {80, 90}) {
    CompileRequest r = request("vector_add.cu", "vector_add", sm);
    r.defines = {{"ELEMS_PER_THREAD", "4"}};
    CompileResult res = compiler().compile(r);
    ASSERT_TRUE(res.ok) << res.log;
    EXPECT_EQ(res.lowered_name, "vector_add");  // extern "C"
    EXPECT_TRUE(res.cubin.starts_with("\x7f" "ELF"));
    EXPECT_FALSE(res.cache_hit);
    EXPECT_GT(res.compile_ms, 0);
    EXPECT_EQ(res.cache_key.size(), 64u);
    const KernelResources& k = res.resources;
    EXPECT_EQ(k.static_smem, 0u);
    EXPECT_EQ(k.local_bytes, 0u);
    EXPECT_EQ(k.spill_store_bytes, 0);
    EXPECT_EQ(k.spill_load_bytes, 0);
    EXPECT_EQ(k.param_bytes, 28u);  // three pointers and an int
    EXPECT_EQ(k.max_threads_per_block, 1024);
    if (sm == 90) {
      EXPECT_EQ(k.registers, 16);  // cuFuncGetAttribute(NUM_REGS) on an H200
    }
    // The ELF reading and ptxas's own report in the log agree.
    auto ptxas = parse_ptxas_log(res.log);
    ASSERT_TRUE(ptxas.count("vector_add")) << res.log;
    EXPECT_EQ(ptxas["vector_add"].registers, k.registers);
  }
}

TEST_F(CompileTest, DefinesChangeTheCode) {
  CompileRequest one = request("vector_add.cu", "vector_add", 90);
  CompileRequest eight = one;
  eight.defines = {{"ELEMS_PER_THREAD", "8"}};
  CompileResult a = compiler().compile(one), b = compiler().compile(eight);
  ASSERT_TRUE(a.ok && b.ok);
  EXPECT_NE(a.cubin, b.cubin);
  EXPECT_NE(a.cache_key, b.cache_key);
}

TEST_F(CompileTest, TemplateKernelViaNameExpression) {
  CompileRequest r = request("templated.cu", "scale", 80);
  r.template_args = {"4", "float"};
  EXPECT_EQ(r.name_expression(), "scale<4, float>");
  CompileResult f = compiler().compile(r);
  ASSERT_TRUE(f.ok) << f.log;
  EXPECT_EQ(f.lowered_name, "_Z5scaleILi4EfEvPT0_S0_i");
  r.template_args = {"8", "double"};
  CompileResult d = compiler().compile(r);
  ASSERT_TRUE(d.ok) << d.log;
  EXPECT_EQ(d.lowered_name, "_Z5scaleILi8EdEvPT0_S0_i");
  EXPECT_EQ(cubin_kernel_names(d.cubin), std::vector<std::string>{d.lowered_name});
  EXPECT_EQ(d.resources.param_bytes, 20u);  // pointer, double, int (padded)
}

TEST_F(CompileTest, StaticSharedMemoryAndStackFrame) {
  for (int sm : {80, 90}) {
    CompileResult res = compiler().compile(request("smem_spill.cu", "smem_stack", sm));
    ASSERT_TRUE(res.ok) << res.log;
    EXPECT_EQ(res.lowered_name, "_Z10smem_stackPKfPfii");
    const KernelResources& k = res.resources;
    EXPECT_EQ(k.registers, 32);
    EXPECT_EQ(k.static_smem, 4096u);  // float tile[1024]; sm_90's reserved 1 KiB is not counted
    EXPECT_EQ(k.local_bytes, 1024u);  // float local[256], indexed at run time
    EXPECT_EQ(k.stack_bytes, 1024u);
    EXPECT_EQ(k.spill_store_bytes, 0);
  }
  CompileRequest r = request("smem_spill.cu", "smem_stack", 90);
  r.defines = {{"TILE", "512"}};
  EXPECT_EQ(compiler().compile(r).resources.static_smem, 2048u);
}

TEST_F(CompileTest, RegisterCapForcesSpills) {
  for (auto [sm, spill] : {std::pair{80, 420}, std::pair{90, 428}}) {
    CompileRequest r = request("smem_spill.cu", "register_pressure", sm);
    r.options = {"-maxrregcount=32"};
    CompileResult res = compiler().compile(r);
    ASSERT_TRUE(res.ok) << res.log;
    EXPECT_EQ(res.resources.registers, 32);
    EXPECT_EQ(res.resources.max_registers, 32);
    EXPECT_EQ(res.resources.local_bytes, 232u);
    EXPECT_EQ(res.resources.spill_store_bytes, spill);
    EXPECT_EQ(res.resources.spill_load_bytes, spill);
    r.options.clear();
    CompileResult free = compiler().compile(r);
    EXPECT_EQ(free.resources.registers, 64);
    EXPECT_EQ(free.resources.spill_store_bytes, 0);
  }
}

TEST_F(CompileTest, LaunchBoundsCapThreadsAndRegisters) {
  CompileRequest r = request("smem_spill.cu", "bounded", 90);
  r.block_threads = 256;
  CompileResult res = compiler().compile(r);
  ASSERT_TRUE(res.ok) << res.log;
  EXPECT_EQ(res.resources.launch_bound_threads, 256);
  EXPECT_EQ(res.resources.max_registers, 128);  // 64 K registers / (256 threads * 2 blocks)
  EXPECT_EQ(res.resources.max_threads_per_block, 256);
  ASSERT_TRUE(res.occupancy.has_value());
  EXPECT_DOUBLE_EQ(res.occupancy->fraction, 1.0);
  r.block_threads = 512;  // above the bound: not launchable
  CompileResult too_big = compiler().compile(r);
  ASSERT_TRUE(too_big.ok);
  EXPECT_EQ(too_big.occupancy->blocks_per_sm, 0);
  EXPECT_NE(too_big.occupancy->error.find("256"), std::string::npos);
}

TEST_F(CompileTest, SyntaxErrorIsAFailedResultWithTheLog) {
  for (int sm : {80, 90}) {
    CompileResult res;
    ASSERT_NO_THROW(res = compiler().compile(request("syntax_error.cu", "broken", sm)));
    EXPECT_FALSE(res.ok);
    EXPECT_TRUE(res.cubin.empty());
    EXPECT_NE(res.log.find("undeclared_identifier"), std::string::npos) << res.log;
    EXPECT_NE(res.log.find("syntax_error.cu(3)"), std::string::npos) << res.log;
  }
}

TEST_F(CompileTest, MissingKernelIsAFailedResult) {
  CompileResult res = compiler().compile(request("vector_add.cu", "no_such_kernel", 90));
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.log.find("no_such_kernel"), std::string::npos) << res.log;
  CompileRequest wrong_args = request("templated.cu", "scale", 90);
  wrong_args.template_args = {"4"};  // T cannot be deduced
  EXPECT_FALSE(compiler().compile(wrong_args).ok);
}

TEST_F(CompileTest, BadOptionAndBadArchAreFailedResults) {
  CompileRequest r = request("vector_add.cu", "vector_add", 90);
  r.options = {"--no-such-option"};
  CompileResult res = compiler().compile(r);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.log.find("no-such-option"), std::string::npos) << res.log;
  CompileResult old = compiler().compile(request("vector_add.cu", "vector_add", 50));  // NVRTC 13 starts at sm_75
  EXPECT_FALSE(old.ok);
  EXPECT_FALSE(old.log.empty());
}

TEST_F(CompileTest, UnreadableSourceFileThrowsBadInput) {
  CompileRequest r = request("does_not_exist.cu", "k", 90);
  try {
    compiler().compile(r);
    FAIL() << "expected ktune::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_status(), 2);
    EXPECT_NE(e.where().file.find("does_not_exist.cu"), std::string::npos);
  }
}

TEST_F(CompileTest, InlineSourceWithArchSuffix) {
  CompileRequest r;
  r.source = "extern \"C\" __global__ void k(int* p) { p[threadIdx.x] = threadIdx.x; }\n";
  r.kernel_name = "k";
  r.arch = Arch::parse("sm_90a");
  CompileResult res = compiler().compile(r);
  ASSERT_TRUE(res.ok) << res.log;
  EXPECT_EQ(res.lowered_name, "k");
}

// ---- cache --------------------------------------------------------------

TEST_F(CompileTest, SecondCompileIsAHitWithTheSameResult) {
  CompileRequest r = request("smem_spill.cu", "register_pressure", 90);
  r.options = {"-maxrregcount=32"};
  r.block_threads = 128;
  Compiler c = compiler();
  CompileResult cold = c.compile(r);
  CompileResult warm = c.compile(r);
  ASSERT_TRUE(cold.ok && warm.ok);
  EXPECT_FALSE(cold.cache_hit);
  EXPECT_TRUE(warm.cache_hit);
  EXPECT_EQ(warm.cubin, cold.cubin);
  EXPECT_EQ(warm.lowered_name, cold.lowered_name);
  EXPECT_EQ(warm.log, cold.log);
  EXPECT_EQ(warm.resources, cold.resources);  // spills included, though NVRTC did not run
  ASSERT_TRUE(warm.occupancy.has_value());
  EXPECT_EQ(warm.occupancy->blocks_per_sm, cold.occupancy->blocks_per_sm);
  EXPECT_LT(warm.compile_ms, cold.compile_ms);
  EXPECT_TRUE(std::filesystem::exists(c.cache()->path_of(warm.cache_key)));
}

TEST_F(CompileTest, ChangedDefineOptionOrArchIsAMiss) {
  Compiler c = compiler();
  CompileRequest r = request("vector_add.cu", "vector_add", 90);
  r.defines = {{"ELEMS_PER_THREAD", "2"}};
  ASSERT_FALSE(c.compile(r).cache_hit);
  ASSERT_TRUE(c.compile(r).cache_hit);
  CompileRequest other_define = r;
  other_define.defines = {{"ELEMS_PER_THREAD", "4"}};
  EXPECT_FALSE(c.compile(other_define).cache_hit);
  CompileRequest other_arch = r;
  other_arch.arch = 80;
  EXPECT_FALSE(c.compile(other_arch).cache_hit);
  CompileRequest other_option = r;
  other_option.options = {"-use_fast_math"};
  EXPECT_FALSE(c.compile(other_option).cache_hit);
}

TEST_F(CompileTest, ChangedIncludedHeaderIsAMiss) {
  TempDir src;
  for (const char* f : {"vector_add.cu", "vector_add_helpers.cuh"}) {
    std::filesystem::copy_file(kernels_dir() / f, src.path() / f);
  }
  CompileRequest r;
  r.source_path = src.path() / "vector_add.cu";
  r.kernel_name = "vector_add";
  Compiler c = compiler();
  CompileResult first = c.compile(r);
  ASSERT_TRUE(first.ok) << first.log;
  ASSERT_TRUE(c.compile(r).cache_hit);
  std::string header = read(src.path() / "vector_add_helpers.cuh");
  header.replace(header.find("a + b"), 5, "a - b");
  write(src.path() / "vector_add_helpers.cuh", header);
  CompileResult changed = c.compile(r);
  EXPECT_FALSE(changed.cache_hit);
  EXPECT_NE(changed.cache_key, first.cache_key);
  EXPECT_NE(changed.cubin, first.cubin);  // NVRTC did read the new header
}

TEST_F(CompileTest, KeyIgnoresWhereTheSourceLives) {
  TempDir a, b;
  for (const TempDir* d : {&a, &b}) {
    for (const char* f : {"vector_add.cu", "vector_add_helpers.cuh"}) {
      std::filesystem::copy_file(kernels_dir() / f, d->path() / f);
    }
  }
  CompileRequest ra, rb;
  ra.source = rb.source = read(kernels_dir() / "vector_add.cu");
  ra.source_path = a.path() / "vector_add.cu";
  rb.source_path = b.path() / "vector_add.cu";
  EXPECT_EQ(compile_cache_key(ra, ra.source), compile_cache_key(rb, rb.source));
}

TEST_F(CompileTest, FailedCompileIsCachedWithItsLog) {
  Compiler c = compiler();
  CompileResult first = c.compile(request("syntax_error.cu", "broken", 90));
  CompileResult second = c.compile(request("syntax_error.cu", "broken", 90));
  EXPECT_FALSE(first.ok);
  EXPECT_FALSE(second.ok);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.log, first.log);
}

TEST_F(CompileTest, CorruptEntryIsIgnoredAndRewritten) {
  Compiler c = compiler();
  CompileRequest r = request("vector_add.cu", "vector_add", 90);
  CompileResult good = c.compile(r);
  std::filesystem::path entry = c.cache()->path_of(good.cache_key);
  std::string bytes = read(entry);
  for (std::string damaged : {bytes.substr(0, bytes.size() / 2), std::string("garbage"), std::string()}) {
    write(entry, damaged);
    CompileResult res = c.compile(r);
    EXPECT_FALSE(res.cache_hit);
    ASSERT_TRUE(res.ok) << res.log;
    EXPECT_EQ(res.cubin, good.cubin);
    EXPECT_TRUE(c.compile(r).cache_hit);  // rewritten
  }
  std::string flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x20;  // inside the cubin: only the checksum notices
  write(entry, flipped);
  EXPECT_FALSE(c.compile(r).cache_hit);
}

TEST_F(CompileTest, CacheDirectoryFromEnvironment) {
  TempDir ktune_dir, xdg_dir;
  {
    ScopedEnv k("KTUNE_CACHE_DIR", ktune_dir.path().c_str());
    ScopedEnv x("XDG_CACHE_HOME", xdg_dir.path().c_str());
    EXPECT_EQ(CubinCache::default_dir(), ktune_dir.path());
    CompileResult res = Compiler().compile(request("vector_add.cu", "vector_add", 90));
    ASSERT_TRUE(res.ok);
    EXPECT_TRUE(std::filesystem::exists(CubinCache(ktune_dir.path()).path_of(res.cache_key)));
  }
  {
    ScopedEnv k("KTUNE_CACHE_DIR", nullptr);
    ScopedEnv x("XDG_CACHE_HOME", xdg_dir.path().c_str());
    EXPECT_EQ(CubinCache::default_dir(), xdg_dir.path() / "ktune");
  }
  {
    ScopedEnv k("KTUNE_CACHE_DIR", nullptr);
    ScopedEnv x("XDG_CACHE_HOME", nullptr);
    ScopedEnv h("HOME", "/home/someone");
    EXPECT_EQ(CubinCache::default_dir(), std::filesystem::path("/home/someone/.cache/ktune"));
  }
}

TEST_F(CompileTest, DisabledCacheNeverHits) {
  CompilerOptions options;
  options.use_cache = false;
  Compiler c(options);
  EXPECT_EQ(c.cache(), nullptr);
  CompileRequest r = request("vector_add.cu", "vector_add", 90);
  c.compile(r);
  EXPECT_FALSE(c.compile(r).cache_hit);
}

TEST_F(CompileTest, ConcurrentCompilesShareOneCache) {
  Compiler c = compiler();
  CompileRequest r = request("templated.cu", "scale", 90);
  r.template_args = {"2", "float"};
  std::vector<CompileResult> results(4);
  std::vector<std::thread> threads;
  for (auto& out : results) threads.emplace_back([&] { out = c.compile(r); });
  for (auto& t : threads) t.join();
  for (const CompileResult& res : results) {
    ASSERT_TRUE(res.ok) << res.log;
    EXPECT_EQ(res.cubin, results[0].cubin);
  }
  EXPECT_TRUE(c.compile(r).cache_hit);
  // No temporary files are left behind.
  for (const auto& e : std::filesystem::recursive_directory_iterator(cache_.path())) {
    EXPECT_FALSE(e.path().filename().string().starts_with(".tmp")) << e.path();
  }
}

// A tunable named like an identifier in CUDA's own headers (`mode` is a
// parameter name in NVRTC's builtin header) breaks every configuration inside
// that header; the reason says which macro and what to do. An error in the
// kernel's own code is reported as NVRTC wrote it.
TEST_F(CompileTest, MacroClashingWithACudaHeaderIsNamed) {
  const std::filesystem::path src = cache_.path() / "clash.cu";
  write(src, "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = mode; }\n");
  CompileRequest r;
  r.source_path = src;
  r.kernel_name = "k";
  r.defines = {{"mode", "1"}, {"block_size_x", "32"}};
  const CompileResult clash = compiler().compile(r);
  ASSERT_FALSE(clash.ok);
  EXPECT_EQ(clash.error_line().rfind("error: 'mode' is passed as -D macro and also an identifier in a CUDA header", 0),
            0u)
      << clash.log;
  write(src, "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = undefined_name; }\n");
  r.defines = {{"block_size_x", "32"}};
  const CompileResult own = compiler().compile(r);
  ASSERT_FALSE(own.ok);
  EXPECT_NE(own.error_line().find("clash.cu"), std::string::npos) << own.log;
  EXPECT_EQ(own.log.find("passed as -D macro"), std::string::npos) << own.log;
}

// Kernels written for nvcc include the C and C++ standard headers and CCCL;
// NVRTC has no host compiler, so ktune supplies the standard ones and finds
// CCCL in the toolkit (include/cccl in CUDA 13).
TEST_F(CompileTest, StandardHeadersAndCcclCompileUnderNvrtc) {
  const std::pair<const char*, const char*> cases[] = {
      {"math.h", "a[0] = sqrtf(M_PI) + sin(a[1]) + fmaf(a[2], 2.f, 1.f);"},
      {"cmath", "a[0] = std::sqrt(a[1]) + std::fabs(a[2]) + (float)M_PI;"},
      {"stdint.h", "int32_t i = threadIdx.x; uint64_t u = i; a[i] = (float)u;"},
      {"cstdint", "std::int32_t i = threadIdx.x; uint8_t b = 1; a[i] = b;"},
      {"limits.h", "a[0] = (float)INT_MAX;"},
      {"float.h", "a[0] = FLT_EPSILON + FLT_MAX;"},
      {"cfloat", "a[0] = (float)DBL_EPSILON;"},
      {"stddef.h", "size_t n = 4; ptrdiff_t d = 1; a[n + d] = 0;"},
      {"cstddef", "std::size_t n = 4; a[n] = 0;"},
      {"assert.h", "assert(threadIdx.x < 1024); a[0] = 0;"},
      {"stdio.h", "printf(\"%f\\n\", a[0]);"},
      {"stdlib.h", "float* p = (float*)malloc(4); free(p);"},
      {"cuda_fp16.h", "__half h = __float2half(a[0]); a[0] = __half2float(h);"},
      {"cuda/std/cstdint", "cuda::std::int64_t x = 1; a[0] = x;"},
      {"cub/block/block_reduce.cuh",
       "typedef cub::BlockReduce<float, 32> R; __shared__ typename R::TempStorage t; a[0] = R(t).Sum(a[threadIdx.x]);"},
  };
  TempDir src;
  for (const auto& [header, body] : cases) {
    const auto path = src.path() / "k.cu";
    write(path, std::string("#include <") + header + ">\nextern \"C\" __global__ void k(float* a) { " + body + " }\n");
    CompileRequest r;
    r.source_path = path;
    r.kernel_name = "k";
    r.arch = Arch(90);
    const CompileResult res = compiler().compile(r);
    EXPECT_TRUE(res.ok) << header << ":\n" << res.log;
  }
}

// A kernel written for HIP (or put through hipify) compiles for an NVIDIA
// GPU: HIP's kernel-language header is supplied, its names CUDA's, and a
// kernel that tests the platform takes the NVIDIA branch. The hub's
// dedispersion kernel is plain CUDA under `#include "hip/hip_runtime.h"`.
TEST_F(CompileTest, AHipKernelCompilesForAnNvidiaGpu) {
  TempDir src;
  const auto path = src.path() / "k.cu.hip";
  write(path, R"(#include "hip/hip_runtime.h"
#ifndef __HIP_PLATFORM_NVIDIA__
#error "not the NVIDIA platform"
#endif
extern "C" __global__ void k(float* a) {
  HIP_DYNAMIC_SHARED(float, tile)
  const unsigned i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
  tile[hipThreadIdx_x] = a[i] + hipGridDim_x + hipBlockDim_y + hipThreadIdx_y + hipBlockIdx_z;
  __syncthreads();
  a[i] = tile[hipBlockDim_x - 1 - hipThreadIdx_x];
}
)");
  CompileRequest r;
  r.source_path = path;
  r.kernel_name = "k";
  r.arch = Arch(90);
  const CompileResult res = compiler().compile(r);
  EXPECT_TRUE(res.ok) << res.log;
  // nvcc gets the same header, and takes the file for CUDA whatever its name.
  r.compiler = "nvcc";
  const CompileResult nvcc = compiler().compile(r);
  ASSERT_TRUE(nvcc.ok) << nvcc.log;
  EXPECT_EQ(nvcc.lowered_name, "k");
  EXPECT_GT(nvcc.resources.registers, 0);
}

// A kernel that includes <cub/cub.cuh> whole needs a host compiler: NVRTC
// fails and says to use nvcc; the nvcc backend builds it, finds the C++
// kernel's mangled name in the cubin and reads its resources like NVRTC's.
TEST_F(CompileTest, TheNvccBackendBuildsWhatNvrtcCannot) {
  TempDir src;
  const auto path = src.path() / "reduce.cu";
  write(path, "#include <cub/cub.cuh>\n"
              "__global__ void reduce(float* out, const float* in, int n) {\n"
              "  typedef cub::BlockReduce<float, block_size_x> R;\n"
              "  __shared__ typename R::TempStorage t;\n"
              "  int i = blockIdx.x * block_size_x + threadIdx.x;\n"
              "  float v = R(t).Sum(i < n ? in[i] : 0.f);\n"
              "  if (threadIdx.x == 0) atomicAdd(out, v);\n}\n"
              "extern \"C\" __global__ void reduce_ref(float* out) {}\n"
              "__global__ void reducer(float* out) {}\n");  // names that contain the kernel's
  CompileRequest r;
  r.source_path = path;
  r.kernel_name = "reduce";
  r.arch = Arch(90);
  r.defines = {{"block_size_x", "128"}};
  r.block_threads = 128;
  const CompileResult nvrtc = compiler().compile(r);
  EXPECT_FALSE(nvrtc.ok);
  EXPECT_NE(nvrtc.log.find("kernel.compiler: nvcc"), std::string::npos) << nvrtc.log;
  r.compiler = "nvcc";
  const CompileResult nvcc = compiler().compile(r);
  ASSERT_TRUE(nvcc.ok) << nvcc.log;
  EXPECT_TRUE(nvcc.cubin.starts_with("\x7f" "ELF"));
  EXPECT_EQ(nvcc.lowered_name, "_Z6reducePfPKfi");  // C++ linkage: mangled; not reduce_ref, not reducer
  EXPECT_GT(nvcc.resources.registers, 0);
  EXPECT_GT(nvcc.resources.static_smem, 0u);  // cub's TempStorage
  ASSERT_TRUE(nvcc.occupancy);
  EXPECT_NE(nvcc.cache_key, nvrtc.cache_key);
  const CompileResult again = compiler().compile(r);  // through the cubin cache
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(again.lowered_name, nvcc.lowered_name);
  r.template_args = {"128"};
  const CompileResult templ = compiler().compile(r);
  EXPECT_FALSE(templ.ok);
  EXPECT_NE(templ.log.find("template_args need NVRTC"), std::string::npos) << templ.log;
  r.template_args.clear();
  r.defines = {{"block_size_x", "128"}, {"broken", ""}};
  write(path, "__global__ void reduce(float* out) { this does not compile; }\n");
  const CompileResult bad = compiler().compile(r);
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.log.find("error"), std::string::npos) << bad.log;
}

// ptxas's errors come after NVRTC's part of the log, which NVRTC ends with a
// NUL: the log and its error line are plain text.
TEST_F(CompileTest, APtxasErrorIsPlainTextInTheLog) {
  TempDir src;
  const auto path = src.path() / "big.cu";
  write(path, "extern \"C\" __global__ void big(float* a) {\n  __shared__ float s[16384];\n"
              "  s[threadIdx.x] = a[threadIdx.x];\n  __syncthreads();\n  a[threadIdx.x] = s[threadIdx.x ^ 1];\n}\n");
  CompileRequest r;
  r.source_path = path;
  r.kernel_name = "big";
  r.arch = Arch(90);
  const CompileResult res = compiler().compile(r);
  ASSERT_FALSE(res.ok);
  EXPECT_EQ(res.log.find('\0'), std::string::npos);
  EXPECT_EQ(res.error_line().rfind("ptxas error", 0), 0u) << res.error_line();
}

}  // namespace
}  // namespace ktune
