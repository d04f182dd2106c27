// The GPU evaluation engine on a real device: devices, measurement,
// verification, and survival of kernels that fault, hang, compute wrong
// answers or cannot launch. Skips cleanly where there is no CUDA driver.
// Test kernels are compiled here with NVRTC directly, so these tests depend
// on nothing but the engine.
#include <gtest/gtest.h>
#include <nvrtc.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tuner/gpu/engine.h"

namespace ktune::gpu {
namespace {

constexpr const char* kGoodKernels = R"(
extern "C" __global__ void vector_add(float* c, const float* a, const float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void vector_add_strided(float* c, const float* a, const float* b, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    c[i] = a[i] + b[i];
}
extern "C" __global__ void vector_add_smem(float* c, const float* a, const float* b, int n) {
  extern __shared__ float staged[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  staged[threadIdx.x] = i < n ? a[i] + b[i] : 0.0f;
  __syncthreads();
  if (i < n) c[i] = staged[threadIdx.x];
}
)";

constexpr int kN = 1 << 24;

std::string read_kernel(const std::string& file) {
  // The build tree may have moved (e.g. copied to a GPU host): try the
  // configured path, then paths relative to the working directory.
  std::vector<std::string> roots = {KTUNE_TESTS_DIR, "../tests", "tests", "../../tests"};
  if (const char* env = std::getenv("KTUNE_TESTS_DIR")) roots.insert(roots.begin(), env);
  for (const auto& root : roots) {
    std::ifstream in(root + "/data/kernels/" + file);
    if (!in) continue;
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  ADD_FAILURE() << "kernel source not found: " << file;
  return "";
}

std::vector<std::uint8_t> compile(const std::string& source, const std::string& arch) {
  nvrtcProgram prog = nullptr;
  EXPECT_EQ(nvrtcCreateProgram(&prog, source.c_str(), "test.cu", 0, nullptr, nullptr), NVRTC_SUCCESS);
  std::string opt = "--gpu-architecture=" + arch;
  const char* opts[] = {opt.c_str()};
  nvrtcResult rc = nvrtcCompileProgram(prog, 1, opts);
  std::size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  nvrtcGetProgramLog(prog, log.data());
  EXPECT_EQ(rc, NVRTC_SUCCESS) << log;
  std::size_t size = 0;
  nvrtcGetCUBINSize(prog, &size);
  std::vector<std::uint8_t> cubin(size);
  if (size) nvrtcGetCUBIN(prog, reinterpret_cast<char*>(cubin.data()));
  nvrtcDestroyProgram(&prog);
  return cubin;
}

std::vector<ArgSpec> vector_args(int n) {
  return {ArgSpec::buffer("c", ElemType::F32, n, Fill::zeros(), true),
          ArgSpec::buffer("a", ElemType::F32, n), ArgSpec::buffer("b", ElemType::F32, n),
          ArgSpec::scalar_int("n", ElemType::I32, n)};
}

class EngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    probe_ = new DeviceProbe(probe_devices());
    if (probe_->state != DriverState::Ready || probe_->devices.empty()) return;
    Engine::Started s = Engine::start(0);
    why_ = s.message;
    engine_ = s.engine.release();
    if (!engine_) return;
    const std::string arch = engine_->device().arch();
    good_ = new std::vector<std::uint8_t>(compile(kGoodKernels, arch));
    fault_ = new std::vector<std::uint8_t>(compile(read_kernel("broken_fault.cu"), arch));
    hang_ = new std::vector<std::uint8_t>(compile(read_kernel("broken_hang.cu"), arch));
    wrong_ = new std::vector<std::uint8_t>(compile(read_kernel("broken_wrong.cu"), arch));
  }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
  }
  void SetUp() override {
    // Only a missing driver is a reason to skip; a driver that is there but
    // cannot be used is a failure worth seeing.
    if (probe_->state == DriverState::NoDriver) GTEST_SKIP() << probe_->message;
    ASSERT_EQ(probe_->state, DriverState::Ready) << probe_->message;
    if (probe_->devices.empty()) GTEST_SKIP() << "no CUDA device";
    ASSERT_NE(engine_, nullptr) << "the GPU engine did not start: " << why_;
  }

  static Job job(const std::vector<std::uint8_t>& cubin, const std::string& kernel,
                 std::uint32_t block, int n = kN) {
    Job j;
    j.label = kernel + " block_size_x=" + std::to_string(block);
    j.cubin = cubin;
    j.kernel_name = kernel;
    j.geometry.block = {block, 1, 1};
    j.geometry.grid = {static_cast<std::uint32_t>((n + block - 1) / block), 1, 1};
    j.args = vector_args(n);
    j.tolerance = {1e-6, 1e-6};
    j.measure_options.time_cap_ms = 100;
    return j;
  }

  // Captures the plain kernel's outputs, checks them on the host, and makes
  // them the expected outputs of every verified job that follows.
  static void set_reference() {
    Job ref = job(*good_, "vector_add", 256);
    ref.capture_outputs = true;
    ref.measure = false;
    Result r = engine_->run(ref);
    ASSERT_EQ(r.status, Status::Ok) << r.reason;
    ASSERT_EQ(r.outputs.size(), 1u);
    std::vector<std::uint8_t> a = fill_host(ref.args[1]), b = fill_host(ref.args[2]);
    for (int i = 0; i < kN; i += 9973) {
      float want = 0, got = 0, x, y;
      std::memcpy(&x, &a[4 * i], 4);
      std::memcpy(&y, &b[4 * i], 4);
      want = x + y;
      std::memcpy(&got, &r.outputs[0].bytes[4 * i], 4);
      ASSERT_EQ(got, want) << "element " << i;
    }
    engine_->set_expected(r.outputs);
  }

  static DeviceProbe* probe_;
  static Engine* engine_;
  static std::string why_;
  static std::vector<std::uint8_t>*good_, *fault_, *hang_, *wrong_;
};

DeviceProbe* EngineTest::probe_ = nullptr;
Engine* EngineTest::engine_ = nullptr;
std::string EngineTest::why_;
std::vector<std::uint8_t>*EngineTest::good_ = nullptr, *EngineTest::fault_ = nullptr,
                          *EngineTest::hang_ = nullptr, *EngineTest::wrong_ = nullptr;

TEST_F(EngineTest, DevicesAreListed) {
  ASSERT_FALSE(probe_->devices.empty());
  const DeviceProperties& d = engine_->device();
  EXPECT_FALSE(d.name.empty());
  EXPECT_EQ(d.uuid.rfind("GPU-", 0), 0u) << d.uuid;
  EXPECT_GE(d.cc_major, 5);
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GT(d.total_memory, 1ull << 30);
  EXPECT_GT(d.l2_bytes, 0);
  EXPECT_GE(d.smem_per_block_optin, d.smem_per_block);
  EXPECT_EQ(d.max_threads_per_block, 1024);
  EXPECT_GE(d.cuda_version, 12000);
  std::printf("device %d: %s %s, %d SMs, %.1f GiB, L2 %d KiB, smem opt-in %d, clocks %d/%d MHz, "
              "CUDA %d, driver %s, %s\n",
              d.ordinal, d.name.c_str(), d.arch().c_str(), d.sm_count,
              d.total_memory / 1073741824.0, d.l2_bytes / 1024, d.smem_per_block_optin,
              d.max_sm_clock_mhz, d.max_mem_clock_mhz, d.cuda_version, d.driver_version.c_str(),
              d.uuid.c_str());
}

TEST_F(EngineTest, VectorAddIsMeasuredAndVerified) {
  set_reference();
  Job j = job(*good_, "vector_add_strided", 256);
  j.verify = true;
  Result r = engine_->run(j);
  ASSERT_EQ(r.status, Status::Ok) << r.reason;
  const Timing& t = r.timing;
  EXPECT_GT(t.median_ms, 0);
  EXPECT_LE(t.min_ms, t.median_ms);
  EXPECT_GE(static_cast<int>(t.samples_ms.size()), j.measure_options.min_samples);
  EXPECT_GE(t.launches_per_sample, 1);
  EXPECT_GT(r.resources.registers, 0);
  EXPECT_GT(r.resources.occupancy, 0);
  EXPECT_LE(r.resources.occupancy, 1.0);
  EXPECT_GT(engine_->best_ms(), 0);
  std::printf("vector_add_strided n=%d: median %.4f ms (min %.4f, noise %.2f%%, %zu samples x %d "
              "launches, converged %d) = %.0f GB/s; %d regs, occupancy %.2f; SM %u MHz, %u C, "
              "%.0f W%s\n",
              kN, t.median_ms, t.min_ms, 100 * t.noise, t.samples_ms.size(), t.launches_per_sample,
              t.converged, 3.0 * 4 * kN / (t.median_ms * 1e6), r.resources.registers,
              r.resources.occupancy, r.sensors.sm_clock_mhz, r.sensors.temperature_c,
              r.sensors.power_mw / 1000.0, r.sensors.throttled() ? " THROTTLED" : "");

  j.measure_options.cold = true;
  Result cold = engine_->run(j);
  ASSERT_EQ(cold.status, Status::Ok) << cold.reason;
  EXPECT_TRUE(cold.timing.cold);
  EXPECT_EQ(cold.timing.launches_per_sample, 1);
  std::printf("cold: median %.4f ms, noise %.2f%%\n", cold.timing.median_ms,
              100 * cold.timing.noise);
}

TEST_F(EngineTest, OverLimitLaunchesAreInvalid) {
  Job j = job(*good_, "vector_add", 2048);
  Result r = engine_->run(j);
  EXPECT_EQ(r.status, Status::Invalid);
  EXPECT_NE(r.reason.find("block.x"), std::string::npos) << r.reason;
  j.geometry.block = {512, 4, 1};
  r = engine_->run(j);
  EXPECT_EQ(r.status, Status::Invalid);
  EXPECT_NE(r.reason.find("threads per block"), std::string::npos) << r.reason;

  Job s = job(*good_, "vector_add_smem", 256);
  s.geometry.dynamic_smem = engine_->device().smem_per_block_optin + 1024;
  r = engine_->run(s);
  EXPECT_EQ(r.status, Status::Invalid);
  EXPECT_NE(r.reason.find("shared memory"), std::string::npos) << r.reason;
  s.geometry.dynamic_smem = 100 * 1024;  // needs the opt-in attribute raised
  r = engine_->run(s);
  EXPECT_EQ(r.status, Status::Ok) << r.reason;
}

TEST_F(EngineTest, FaultingKernelsAreRuntimeErrorsAndTheEngineCarriesOn) {
  set_reference();
  const int before = engine_->restarts();
  Result r = engine_->run(job(*fault_, "write_out_of_bounds", 256));
  EXPECT_EQ(r.status, Status::RuntimeError);
  EXPECT_NE(r.reason.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << r.reason;
  EXPECT_EQ(engine_->restarts(), before + 1);
  std::printf("out of bounds: %s\n", r.reason.c_str());

  // The fresh worker gets the expected outputs again and verifies.
  Job next = job(*good_, "vector_add_strided", 128);
  next.verify = true;
  r = engine_->run(next);
  EXPECT_EQ(r.status, Status::Ok) << r.reason;

  r = engine_->run(job(*fault_, "trap_instruction", 64, 64));
  EXPECT_EQ(r.status, Status::RuntimeError);
  std::printf("trap: %s\n", r.reason.c_str());
  r = engine_->run(next);
  EXPECT_EQ(r.status, Status::Ok) << r.reason;
}

TEST_F(EngineTest, HangingKernelTimesOutAndTheEngineCarriesOn) {
  Result warm = engine_->run(job(*good_, "vector_add", 256));
  ASSERT_EQ(warm.status, Status::Ok) << warm.reason;  // sets a best time: 1 s deadline
  Job h = job(*hang_, "spin_forever", 32, 32);
  h.args = {ArgSpec::buffer("flag", ElemType::I32, 1, Fill::zeros()),
            ArgSpec::buffer("out", ElemType::F32, 32, Fill::zeros(), true),
            ArgSpec::scalar_int("n", ElemType::I32, 32)};
  const int before = engine_->restarts();
  Result r = engine_->run(h);
  EXPECT_EQ(r.status, Status::Timeout) << r.reason;
  EXPECT_LT(r.wall_ms, 10000);
  EXPECT_EQ(engine_->restarts(), before + 1);
  std::printf("hang: %s (%.0f ms)\n", r.reason.c_str(), r.wall_ms);
  r = engine_->run(job(*good_, "vector_add", 256));
  EXPECT_EQ(r.status, Status::Ok) << r.reason;
}

TEST_F(EngineTest, WrongAnswersNameTheWorstElement) {
  set_reference();
  Job j = job(*wrong_, "add_off_by_one", 256);
  j.verify = true;
  Result r = engine_->run(j);
  ASSERT_EQ(r.status, Status::WrongResult) << r.reason;
  ASSERT_TRUE(r.mismatch.has_value());
  EXPECT_EQ(r.mismatch->buffer, "c");
  EXPECT_EQ(r.mismatch->index, 1234u);
  EXPECT_NEAR(r.mismatch->got - r.mismatch->expected, 1.0, 1e-5);
  EXPECT_EQ(r.mismatch->failed_elements, 1u);
  std::printf("off by one: %s\n", r.reason.c_str());

  j.kernel_name = "add_skips_last";
  r = engine_->run(j);
  ASSERT_EQ(r.status, Status::WrongResult) << r.reason;
  ASSERT_TRUE(r.mismatch.has_value());
  EXPECT_EQ(r.mismatch->index, static_cast<std::uint64_t>(kN - 1));
  EXPECT_TRUE(std::isnan(r.mismatch->got));  // the poison, never written
  std::printf("skips last: %s\n", r.reason.c_str());
}

// set_reference keeps the reference run's outputs in the worker (nothing
// comes back: Result::outputs stays empty); verified jobs compare against
// them, a wrong kernel is caught, and a worker that replaces a crashed one
// runs the reference again before its first verified job.
TEST_F(EngineTest, ReferenceKeptInTheWorkerVerifiesAcrossRestarts) {
  Job ref = job(*good_, "vector_add", 256);
  Result r = engine_->set_reference(ref);
  ASSERT_EQ(r.status, Status::Ok) << r.reason;
  EXPECT_TRUE(r.outputs.empty());
  EXPECT_TRUE(engine_->expected().empty());

  Job next = job(*good_, "vector_add_strided", 128);
  next.verify = true;
  r = engine_->run(next);
  EXPECT_EQ(r.status, Status::Ok) << r.reason;
  Job wrong = job(*wrong_, "add_off_by_one", 256);
  wrong.verify = true;
  r = engine_->run(wrong);
  ASSERT_EQ(r.status, Status::WrongResult) << r.reason;
  ASSERT_TRUE(r.mismatch.has_value());
  EXPECT_EQ(r.mismatch->index, 1234u);

  const int before = engine_->restarts();
  r = engine_->run(job(*fault_, "write_out_of_bounds", 256));
  EXPECT_EQ(r.status, Status::RuntimeError);
  EXPECT_EQ(engine_->restarts(), before + 1);
  r = engine_->run(next);
  EXPECT_EQ(r.status, Status::Ok) << r.reason;
  r = engine_->run(wrong);
  EXPECT_EQ(r.status, Status::WrongResult) << r.reason;
}

}  // namespace
}  // namespace ktune::gpu
