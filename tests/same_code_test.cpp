// The second cubin-cache level (compiler.h): configurations whose -D values
// leave NVRTC's front-end output unchanged share one cubin, bit-identical to
// the one NVRTC makes for each alone; anything else that changes the code is
// compiled. Also the claims (cubin_cache.h) that let concurrent compiles of
// the same code wait for one, and the compile pool's use of them. Real NVRTC,
// no GPU.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "tests/test_util.h"
#include "tuner/compile/compiler.h"
#include "tuner/compile/pool.h"

namespace ktune {
namespace {

using testing::kernels_dir;
using testing::ScopedEnv;
using testing::TempDir;

// UNUSED appears nowhere in the code; SCALE and REPEAT change it.
constexpr const char* kSource = R"(
extern "C" __global__ void scale(float* x) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  #pragma unroll
  for (int k = 0; k < REPEAT; ++k) x[i] = x[i] * SCALE + 1.0f;
}
)";

CompileRequest scale(const std::string& unused, const std::string& factor = "2.0f", const std::string& repeat = "4") {
  CompileRequest r;
  r.source = kSource;
  r.kernel_name = "scale";
  r.defines = {{"SCALE", factor}, {"REPEAT", repeat}, {"UNUSED", unused}};
  r.block_threads = 128;
  return r;
}

class SameCodeTest : public ::testing::Test {
 protected:
  // Always: these kernels are small, so the cost rule would soon turn it off.
  Compiler compiler(CodeReuse reuse = CodeReuse::always) const {
    CompilerOptions o;
    o.cache_dir = cache_.path();
    o.code_reuse = reuse;
    return Compiler(o);
  }
  // What NVRTC alone makes of a request: no cache at all.
  static CompileResult plain(const CompileRequest& r) {
    CompilerOptions o;
    o.use_cache = false;
    return Compiler(o).compile(r);
  }

  ScopedEnv reuse_env_{"KTUNE_CODE_REUSE", nullptr};
  ScopedEnv in_process_{"KTUNE_COMPILE_IN_PROCESS", nullptr};
  TempDir cache_;
};

TEST_F(SameCodeTest, AParameterTheCodeIgnoresSharesTheCubinBitForBit) {
  const Compiler c = compiler();
  const CompileResult first = c.compile(scale("1"));
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.cache_hit);
  EXPECT_FALSE(first.same_code);

  const CompileResult second = c.compile(scale("2"));
  ASSERT_TRUE(second.ok) << second.log;
  EXPECT_FALSE(second.cache_hit);
  EXPECT_TRUE(second.same_code);
  EXPECT_NE(second.cache_key, first.cache_key);
  EXPECT_TRUE(second.cubin == first.cubin);
  EXPECT_EQ(second.lowered_name, first.lowered_name);
  EXPECT_EQ(second.resources, first.resources);
  ASSERT_TRUE(second.occupancy.has_value());
  EXPECT_EQ(second.occupancy->fraction, first.occupancy->fraction);

  // The cubin NVRTC makes for that configuration on its own is the same bytes.
  const CompileResult alone = plain(scale("2"));
  ASSERT_TRUE(alone.ok) << alone.log;
  EXPECT_TRUE(second.cubin == alone.cubin) << "a shared cubin differs from NVRTC's own";

  // It is stored under its own key too: next time a first-level hit.
  const CompileResult again = c.compile(scale("2"));
  EXPECT_TRUE(again.cache_hit);
  EXPECT_TRUE(again.cubin == alone.cubin);
}

TEST_F(SameCodeTest, DefinesThatChangeTheCodeAreCompiled) {
  const Compiler c = compiler();
  const CompileResult a = c.compile(scale("1", "2.0f", "4"));
  const CompileResult b = c.compile(scale("1", "3.0f", "4"));
  const CompileResult d = c.compile(scale("1", "2.0f", "8"));
  for (const CompileResult* r : {&a, &b, &d}) {
    ASSERT_TRUE(r->ok) << r->log;
    EXPECT_FALSE(r->same_code);
    EXPECT_FALSE(r->cache_hit);
  }
  EXPECT_FALSE(a.cubin == b.cubin);
  EXPECT_FALSE(a.cubin == d.cubin);
  EXPECT_TRUE(b.cubin == plain(scale("1", "3.0f", "4")).cubin);
}

TEST_F(SameCodeTest, OptionsArchAndNameAreInTheKey) {
  const Compiler c = compiler();
  ASSERT_TRUE(c.compile(scale("1")).ok);
  CompileRequest other_arch = scale("2");
  other_arch.arch = Arch(80);
  CompileRequest other_option = scale("3");
  other_option.options = {"-maxrregcount=16"};
  for (const CompileRequest& r : {other_arch, other_option}) {
    const CompileResult res = c.compile(r);
    ASSERT_TRUE(res.ok) << res.log;
    EXPECT_FALSE(res.same_code);
    EXPECT_TRUE(res.cubin == plain(r).cubin);
  }
  // Same front-end output, other kernel of the program: not shared either.
  CompileRequest twice = scale("1");
  twice.source = std::string(kSource) + "extern \"C\" __global__ void other(float* x) { x[0] = SCALE; }\n";
  CompileRequest other_kernel = twice;
  other_kernel.kernel_name = "other";
  other_kernel.defines.back().second = "2";
  ASSERT_TRUE(c.compile(twice).ok);
  const CompileResult k = c.compile(other_kernel);
  ASSERT_TRUE(k.ok) << k.log;
  EXPECT_FALSE(k.same_code);
  EXPECT_EQ(k.lowered_name, "other");
}

TEST_F(SameCodeTest, CodeThatDoesNotCompileFailsAsBefore) {
  CompileRequest bad = scale("1");
  bad.source = std::string(kSource) + "__global__ void broken() { int x = ; }\n";
  const Compiler c = compiler();
  const CompileResult first = c.compile(bad);
  EXPECT_FALSE(first.ok);
  bad.defines.back().second = "2";
  const CompileResult second = c.compile(bad);
  EXPECT_FALSE(second.ok);
  EXPECT_FALSE(second.same_code);  // the front end fails: no second-level key, NVRTC's own failure
  EXPECT_NE(second.log.find("expected an expression"), std::string::npos) << second.log;
}

TEST_F(SameCodeTest, OffByOptionOrEnvironment) {
  ASSERT_TRUE(compiler(CodeReuse::off).compile(scale("1")).ok);
  EXPECT_FALSE(compiler(CodeReuse::off).compile(scale("2")).same_code);
  {
    ScopedEnv off("KTUNE_CODE_REUSE", "0");
    EXPECT_FALSE(compiler().compile(scale("3")).same_code);
  }
  // With it off nothing went to the second level; =1 beats the options.
  ScopedEnv on("KTUNE_CODE_REUSE", "1");
  EXPECT_FALSE(compiler(CodeReuse::off).compile(scale("4")).same_code);
  EXPECT_TRUE(compiler(CodeReuse::off).compile(scale("5")).same_code);
}

TEST_F(SameCodeTest, ClaimsAreExclusiveAndEndWithTheirProcess) {
  const CubinCache cache(cache_.path());
  const std::string key(64, 'a');
  EXPECT_TRUE(cache.claim(key));
  EXPECT_FALSE(cache.claim(key));  // ours, and we are alive
  cache.release(key);
  EXPECT_TRUE(cache.claim(key));

  // A claim left by a process that has exited is taken over.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::filesystem::path claim = cache.path_of(key);
  claim += ".claim";
  std::ofstream(claim, std::ios::trunc) << host << ' ' << child << '\n';
  EXPECT_TRUE(cache.claim(key));
  EXPECT_FALSE(cache.claim(key));

  // A waiter gets the entry the claimer stores, then sees the claim go.
  std::thread owner([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cache.store(key, {true, "cubin bytes", "k", "log", {}, 1.0});
    cache.release(key);
  });
  const std::optional<CacheEntry> got = cache.wait_for(key, 30);
  owner.join();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->cubin, "cubin bytes");

  // A claim released without an entry ends the wait with nothing.
  const std::string other(64, 'b');
  ASSERT_TRUE(cache.claim(other));
  std::thread quitter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cache.release(other);
  });
  EXPECT_FALSE(cache.wait_for(other, 30).has_value());
  quitter.join();
}

TEST_F(SameCodeTest, APoolCompilesEachCodeOnceAndSharesItsCubin) {
  // Four codes, each under two values of the ignored parameter, in the order
  // an exhaustive run gives them: pairs side by side on two workers.
  std::vector<CompileRequest> requests;
  for (const char* factor : {"2.0f", "3.0f", "4.0f", "5.0f"})
    for (const char* unused : {"0", "1"}) requests.push_back(scale(unused, factor));
  CompilePoolOptions o;
  o.workers = 2;
  o.compiler.cache_dir = cache_.path();
  o.compiler.code_reuse = CodeReuse::always;
  CompilePool pool(o);
  const std::vector<CompileResult> got = pool.compile(requests);
  EXPECT_FALSE(pool.in_process());
  int shared = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_TRUE(got[i].ok) << got[i].log;
    EXPECT_FALSE(got[i].deferred);
    shared += got[i].same_code;
    EXPECT_TRUE(got[i].cubin == plain(requests[i]).cubin) << "configuration " << i;
  }
  EXPECT_EQ(shared, 4);
  for (std::size_t i = 0; i < got.size(); i += 2) EXPECT_TRUE(got[i].cubin == got[i + 1].cubin);
}

}  // namespace
}  // namespace ktune
