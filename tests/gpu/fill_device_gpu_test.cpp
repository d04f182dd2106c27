// Buffers filled on the GPU (DeviceFiller) hold fill_host's bytes, byte for
// byte: every element type, every kind the device fills, counts around the
// block size and past 2^26, and through ArgumentSet (inputs, read-write
// outputs kept and restored). Runs CUDA in this process; skips cleanly where
// there is no CUDA driver. The generator's host side against the fill it
// replaced: tests/fill_test.cpp.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "tuner/gpu/devices.h"
#include "tuner/gpu/fill_device.h"

namespace ktune::gpu {
namespace {

constexpr ElemType kTypes[] = {ElemType::F16, ElemType::BF16, ElemType::F32, ElemType::F64,
                               ElemType::I8,  ElemType::I16,  ElemType::I32, ElemType::I64,
                               ElemType::U8,  ElemType::U16,  ElemType::U32, ElemType::U64};

Fill random(std::optional<double> lo = {}, std::optional<double> hi = {}, std::optional<std::uint64_t> seed = {}) {
  Fill f;
  f.kind = FillKind::Random;
  f.lo = lo;
  f.hi = hi;
  f.seed = seed;
  return f;
}

// The fills tests/fill_test.cpp checks on the host, less the ones the device
// does not take (device_fillable says which; asserted below).
std::vector<std::pair<std::string, Fill>> fills() {
  return {
      {"random default", random()},
      {"random seeded", random({}, {}, 12345)},
      {"random negative", random(-5, -4, 7)},
      {"random wide", random(-1e3, 1e3, 8)},
      {"random past int64", random(-3e19, 3e19, 9)},
      {"random past uint64", random(-1.0, 4e19, 10)},
      {"random tiny", random(0, 1e-6, 11)},
      {"random huge", random(-1e300, 1e300, 13)},
      {"random reversed", random(1, -1, 12)},
      {"sequence fraction", Fill::sequence(-3.25, 0.37)},
      {"sequence halves", Fill::sequence(-64.5, 0.5)},
      {"sequence overflow", Fill::sequence(1e300, 1e306)},
      {"sequence tiny", Fill::sequence(0, 1.0 / (1 << 27))},
      {"sequence ulps", Fill::sequence(1.0, 1.0 / (1 << 12))},
      {"constant", Fill::constant(-2.7)},
      {"constant nan", Fill::constant(std::numeric_limits<double>::quiet_NaN())},
      {"constant inf", Fill::constant(-std::numeric_limits<double>::infinity())},
      {"zeros", Fill::zeros()},
      {"randn default", Fill::normal({}, 0, 1)},
      {"randn shifted", Fill::normal(77, -3.5, 0.25)},
  };
}

std::string first_difference(const std::vector<std::uint8_t>& got, const std::vector<std::uint8_t>& want,
                             std::size_t size) {
  if (got.size() != want.size()) return "sizes " + std::to_string(got.size()) + " and " + std::to_string(want.size());
  if (std::memcmp(got.data(), want.data(), got.size()) == 0) return "";
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) return "element " + std::to_string(i / size) + " differs";
  return "";
}

class FillOnDevice : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const DriverLoad& d = cuda_driver();
    state_ = d.state;
    why_ = d.message;
    if (!d.ready()) return;
    try {
      api_ = d.api;
      int count = 0;
      check(*api_, api_->cuDeviceGetCount(&count), "cuDeviceGetCount");
      if (count == 0) return;
      context_ = new PrimaryContext(*api_, 0);
      device_ = new DeviceProperties(query_device(*api_, 0, d.cuda_version));
      filler_ = new DeviceFiller(*api_, *device_);
    } catch (const Error& e) {
      why_ = e.message();
    }
  }
  void SetUp() override {
    if (state_ == DriverState::NoDriver) GTEST_SKIP() << why_;
    ASSERT_EQ(state_, DriverState::Ready) << why_;
    if (!device_) GTEST_SKIP() << "no CUDA device";
    ASSERT_NE(filler_, nullptr) << why_;
  }

  static std::vector<std::uint8_t> read(CUdeviceptr p, std::size_t bytes) {
    std::vector<std::uint8_t> out(bytes);
    if (bytes) check(*api_, api_->cuMemcpyDtoH(out.data(), p, bytes), "cuMemcpyDtoH");
    return out;
  }

  // Fills on the device over a buffer of 0xAB bytes (so an element left
  // unwritten shows) and compares with fill_host.
  static void expect_as_host(const ArgSpec& a, const std::string& what) {
    ASSERT_TRUE(device_fillable(a)) << what;
    const std::size_t bytes = a.count * elem_size(a.type);
    DeviceMemory m(*api_, bytes);
    if (bytes) check(*api_, api_->cuMemsetD8(m.ptr(), 0xAB, bytes), "cuMemsetD8");
    filler_->fill(a, m.ptr());
    check(*api_, api_->cuCtxSynchronize(), "fill");
    EXPECT_EQ(first_difference(read(m.ptr(), bytes), fill_host(a), elem_size(a.type)), "")
        << what << " " << to_string(a.type) << " n=" << a.count;
  }

  static DriverState state_;
  static std::string why_;
  static const CudaApi* api_;
  static PrimaryContext* context_;
  static DeviceProperties* device_;
  static DeviceFiller* filler_;
};

DriverState FillOnDevice::state_ = DriverState::NoDriver;
std::string FillOnDevice::why_;
const CudaApi* FillOnDevice::api_ = nullptr;
PrimaryContext* FillOnDevice::context_ = nullptr;
DeviceProperties* FillOnDevice::device_ = nullptr;
DeviceFiller* FillOnDevice::filler_ = nullptr;

TEST_F(FillOnDevice, EveryTypeAndKindGivesFillHostsBytes) {
  for (std::uint64_t count : {1ull, 255ull, 257ull, 100003ull})
    for (ElemType t : kTypes)
      for (const auto& [what, fill] : fills()) expect_as_host(ArgSpec::buffer("arg", t, count, fill), what);
}

TEST_F(FillOnDevice, LargeBuffersGiveFillHostsBytes) {
  // 2^26 + 3 elements: many elements per thread, and a ragged end.
  const std::uint64_t count = (std::uint64_t{1} << 26) + 3;
  for (ElemType t : kTypes) expect_as_host(ArgSpec::buffer("big", t, count, random()), "random large");
  for (ElemType t : {ElemType::F32, ElemType::F64, ElemType::I32, ElemType::F16})
    expect_as_host(ArgSpec::buffer("big", t, count, Fill::sequence(-1e5, 0.01)), "sequence large");
}

TEST_F(FillOnDevice, ArgumentSetFillsLargeBuffersOnTheDevice) {
  const std::uint64_t n = kDeviceFillMinBytes / 4 + 7;  // past the threshold
  ArgSpec in = ArgSpec::buffer("in", ElemType::F32, n, random(-2, 2));
  ArgSpec rw = ArgSpec::buffer("rw", ElemType::I32, n, Fill::sequence(-1000, 3), true);
  rw.read_write = true;
  ArgSpec out = ArgSpec::buffer("out", ElemType::F64, n, Fill::zeros(), true);
  ArgSpec small = ArgSpec::buffer("small", ElemType::F16, 1000, random());  // stays on the host
  ASSERT_TRUE(fills_on_device(in) && fills_on_device(rw) && fills_on_device(out));
  ASSERT_FALSE(fills_on_device(small));
  ArgumentSet set(*api_, {in, rw, out, small}, filler_);
  CUdeviceptr p[4];
  for (int i = 0; i < 4; ++i) std::memcpy(&p[i], set.kernel_params()[i], sizeof(CUdeviceptr));
  EXPECT_EQ(first_difference(read(p[0], n * 4), fill_host(in), 4), "");
  EXPECT_EQ(first_difference(read(p[3], 2000), fill_host(small), 2), "");
  std::vector<HostBuffer> outputs = set.read_outputs();
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(first_difference(outputs[0].bytes, fill_host(rw), 4), "");
  EXPECT_EQ(first_difference(outputs[1].bytes, fill_host(out), 8), "");
  // The read-write output, overwritten, comes back to its fill.
  check(*api_, api_->cuMemsetD8(p[1], 0x5A, n * 4), "cuMemsetD8");
  set.prepare_verified_run();
  check(*api_, api_->cuCtxSynchronize(), "restore");
  EXPECT_EQ(first_difference(set.read_outputs()[0].bytes, fill_host(rw), 4), "");
}

}  // namespace
}  // namespace ktune::gpu
