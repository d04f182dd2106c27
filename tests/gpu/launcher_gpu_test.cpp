// ktune::Launcher on a GPU: the tuned vector_add launched for two problem
// sizes gives exact sums, a second launcher finds its cubin in the cache, and
// launches from several threads at once are safe. Skips without a driver.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <thread>
#include <unistd.h>

#include "ktune/launcher.h"
#include "tuner/gpu/driver.h"

namespace fs = std::filesystem;
using namespace ktune;
using namespace ktune::gpu;

namespace {

// The path in the source tree this was built from, else the same path
// relative to the working directory (a GPU host runs a copy of the tree from
// its root).
std::string in_tree(const std::string& built, const std::string& relative) {
  return std::filesystem::exists(built) ? built : relative;
}

const std::string kSpec =
    in_tree(std::string(KTUNE_TEMPLATES_DIR) + "/vector_add/vector_add.yaml", "templates/vector_add/vector_add.yaml");

class LauncherGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const DriverLoad& d = cuda_driver();
    if (d.state == DriverState::NoDriver) GTEST_SKIP() << d.message;
    ASSERT_TRUE(d.ready()) << d.message;
    api_ = d.api;
    int count = 0;
    ASSERT_EQ(api_->cuDeviceGetCount(&count), CUDA_SUCCESS);
    if (count == 0) GTEST_SKIP() << "no CUDA device";
    context_ = std::make_unique<PrimaryContext>(*api_, 0);
    cache_ = fs::temp_directory_path() / ("ktune_launcher_gpu_" + std::to_string(getpid()));
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(cache_, ec);
  }

  LauncherOptions options() {
    LauncherOptions o;
    o.spec = kSpec;
    o.results = in_tree(std::string(KTUNE_EXAMPLES_DIR) + "/data/vector_add_h100.json",
                        "examples/data/vector_add_h100.json");
    o.cache_dir = cache_.string();
    o.report = [this](const std::string& line) { reports_.push_back(line); };
    return o;
  }

  // c = a + b through the launcher; returns the number of wrong elements.
  size_t add_and_check(Launcher& l, int n) {
    std::vector<float> a(n), b(n), c(n, -1.0f);
    std::mt19937 rng(n);
    std::uniform_real_distribution<float> u(-1, 1);
    for (int i = 0; i < n; ++i) a[i] = u(rng), b[i] = u(rng);
    DeviceMemory da(*api_, n * 4), db(*api_, n * 4), dc(*api_, n * 4);
    check(*api_, api_->cuMemcpyHtoD(da.ptr(), a.data(), n * 4), "HtoD");
    check(*api_, api_->cuMemcpyHtoD(db.ptr(), b.data(), n * 4), "HtoD");
    l({{"n", n}}, nullptr, dc.ptr(), da.ptr(), db.ptr(), n);
    check(*api_, api_->cuCtxSynchronize(), "sync");
    check(*api_, api_->cuMemcpyDtoH(c.data(), dc.ptr(), n * 4), "DtoH");
    size_t wrong = 0;
    for (int i = 0; i < n; ++i) wrong += c[i] != a[i] + b[i];
    return wrong;
  }

  const CudaApi* api_ = nullptr;
  std::unique_ptr<PrimaryContext> context_;
  fs::path cache_;
  std::vector<std::string> reports_;
};

TEST_F(LauncherGpuTest, LaunchesTheTunedKernelForEachProblem) {
  Launcher l(options());
  EXPECT_EQ(add_and_check(l, 1 << 20), 0u);
  EXPECT_EQ(add_and_check(l, 1000003), 0u);  // a size no vector width divides
  const Choice& c = l.prepare({{"n", 1 << 20}});
  EXPECT_FALSE(c.cache_hit);
  EXPECT_GT(c.compile_ms, 0);
  ASSERT_GE(reports_.size(), 2u);
  EXPECT_NE(reports_[0].find("ready in"), std::string::npos) << reports_[0];

  Launcher again(options());
  const Choice& warm = again.prepare({{"n", 1 << 20}});
  EXPECT_TRUE(warm.cache_hit);
  EXPECT_EQ(warm.config, c.config);
  EXPECT_EQ(add_and_check(again, 1 << 20), 0u);
}

TEST_F(LauncherGpuTest, ConcurrentLaunchesFromSeveralThreads) {
  Launcher l(options());
  const int n = 1 << 16;
  DeviceMemory a(*api_, n * 4), b(*api_, n * 4), c(*api_, n * 4 * 8);
  check(*api_, api_->cuMemsetD8(a.ptr(), 0, n * 4), "memset");
  check(*api_, api_->cuMemsetD8(b.ptr(), 0, n * 4), "memset");
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      try {
        // Threads start with no current context: the launcher supplies its own.
        const CUdeviceptr out = c.ptr() + CUdeviceptr(t) * n * 4;
        for (int i = 0; i < 200; ++i) l({{"n", n}}, nullptr, out, a.ptr(), b.ptr(), n);
      } catch (const std::exception&) {
        ++failures;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(api_->cuCtxSynchronize(), CUDA_SUCCESS);
  // One compile for the one problem, whatever the number of threads.
  EXPECT_EQ(reports_.size(), 1u);
}

}  // namespace
