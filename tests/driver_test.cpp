// CPU-side tests of the GPU engine: the "no CUDA driver" path, the worker
// protocol, verification maths, argument fills and launch checks. Run in CI.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>

#include "tuner/gpu/driver.h"
#include "tuner/gpu/engine.h"
#include "tuner/gpu/args.h"
#include "tuner/gpu/measure.h"
#include "tuner/gpu/protocol.h"
#include "tuner/gpu/verify.h"

namespace ktune::gpu {
namespace {

HostBuffer floats(const std::string& name, const std::vector<float>& v) {
  HostBuffer b{name, ElemType::F32, std::vector<std::uint8_t>(v.size() * 4)};
  std::memcpy(b.bytes.data(), v.data(), b.bytes.size());
  return b;
}

std::vector<float> as_floats(const std::vector<std::uint8_t>& bytes) {
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

TEST(Driver, MissingLibraryIsAStatusNotACrash) {
  DriverLoad load = load_cuda_driver("libktune_no_such_cuda_driver.so.1");
  EXPECT_EQ(load.state, DriverState::NoDriver);
  EXPECT_FALSE(load.ready());
  EXPECT_EQ(load.api, nullptr);
  EXPECT_NE(load.message.find("no CUDA driver"), std::string::npos) << load.message;
  EXPECT_STREQ(to_string(DriverState::NoDriver), "no CUDA driver");
}

TEST(Driver, EngineReportsNoDriverWhereThereIsNone) {
  // probe_devices asks a forked worker, so this process stays CUDA-free.
  DeviceProbe probe = probe_devices();
  if (probe.state != DriverState::NoDriver) GTEST_SKIP() << "a CUDA driver is installed here";
  EXPECT_TRUE(probe.devices.empty());
  EXPECT_NE(probe.message.find("no CUDA driver"), std::string::npos) << probe.message;
  Engine::Started s = Engine::start(0);
  EXPECT_EQ(s.engine, nullptr);
  EXPECT_EQ(s.state, DriverState::NoDriver);
  EXPECT_NE(s.message.find("no CUDA driver"), std::string::npos) << s.message;
}

TEST(Driver, StickyErrorsAreTheContextKillers) {
  EXPECT_TRUE(is_sticky_error(CUDA_ERROR_ILLEGAL_ADDRESS));
  EXPECT_TRUE(is_sticky_error(CUDA_ERROR_MISALIGNED_ADDRESS));
  EXPECT_TRUE(is_sticky_error(CUDA_ERROR_LAUNCH_FAILED));
  EXPECT_FALSE(is_sticky_error(CUDA_ERROR_OUT_OF_MEMORY));
  EXPECT_FALSE(is_sticky_error(CUDA_ERROR_INVALID_VALUE));
  CudaApi none;  // no entry points: describe() still names the code
  EXPECT_NE(describe(none, CUDA_ERROR_INVALID_VALUE).find("1"), std::string::npos);
}

Job sample_job() {
  Job j;
  j.label = "block_size_x=256,tile=4";
  j.cubin = {0x7f, 'E', 'L', 'F', 0, 1, 2, 255};
  j.kernel_name = "_Z10vector_addPfPKfS1_i";
  j.geometry.grid = {4096, 2, 1};
  j.geometry.block = {256, 1, 1};
  j.geometry.dynamic_smem = 65536;
  Fill f;
  f.seed = 7;
  f.lo = -1.0;
  j.args.push_back(ArgSpec::buffer("c", ElemType::F32, 1000, Fill::zeros(), true));
  j.args.push_back(ArgSpec::buffer("a", ElemType::BF16, 1000, f));
  j.args.push_back(ArgSpec::scalar_int("n", ElemType::I64, (std::int64_t{1} << 60) + 3));
  j.args[0].read_write = true;
  j.verify = true;
  j.tolerance = {1e-3, 0.5};
  j.capture_outputs = true;
  j.capture_every_buffer = true;
  j.measure_options.cold = true;
  j.measure_options.max_noise = 0.01;
  j.timeout_s = 2.5;
  return j;
}

TEST(Protocol, JobRoundTrip) {
  Job j = sample_job();
  std::vector<std::uint8_t> bytes = encode(j);
  Job back = decode_job(bytes);
  EXPECT_EQ(encode(back), bytes);
  EXPECT_EQ(back.label, j.label);
  EXPECT_EQ(back.cubin, j.cubin);
  EXPECT_EQ(back.kernel_name, j.kernel_name);
  EXPECT_EQ(back.geometry.grid, j.geometry.grid);
  EXPECT_EQ(back.geometry.dynamic_smem, 65536u);
  ASSERT_EQ(back.args.size(), 3u);
  EXPECT_EQ(back.args[1].type, ElemType::BF16);
  EXPECT_EQ(back.args[1].fill.seed, std::optional<std::uint64_t>(7));
  EXPECT_EQ(back.args[1].fill.lo, std::optional<double>(-1.0));
  EXPECT_FALSE(back.args[1].fill.hi.has_value());
  EXPECT_TRUE(back.args[0].read_write);
  EXPECT_EQ(back.args[2].int_value, (std::int64_t{1} << 60) + 3);
  EXPECT_DOUBLE_EQ(back.tolerance.rtol, 0.5);
  EXPECT_TRUE(back.capture_every_buffer);
  EXPECT_TRUE(back.measure_options.cold);
  EXPECT_DOUBLE_EQ(back.timeout_s, 2.5);
}

TEST(Protocol, ResultAndReadyRoundTrip) {
  Result r;
  r.status = Status::WrongResult;
  r.reason = "wrong result: c[3]";
  r.timing.samples_ms = {0.5, 0.25, 0.125};
  r.timing.median_ms = 0.25;
  r.resources.registers = 40;
  r.resources.occupancy = 0.75;
  r.sensors.valid = true;
  r.sensors.reasons = 0x40;
  r.mismatch = Mismatch{"c", 3, std::nan(""), 1.5, 2};
  r.outputs.push_back(floats("c", {1, 2, 3}));
  bool exits = false;
  Result back = decode_result(encode(r, true), &exits);
  EXPECT_TRUE(exits);
  EXPECT_EQ(back.status, Status::WrongResult);
  EXPECT_EQ(back.reason, r.reason);
  EXPECT_EQ(back.timing.samples_ms, r.timing.samples_ms);
  EXPECT_EQ(back.resources.registers, 40);
  EXPECT_TRUE(back.sensors.throttled());
  ASSERT_TRUE(back.mismatch.has_value());
  EXPECT_TRUE(std::isnan(back.mismatch->got));
  EXPECT_EQ(back.mismatch->failed_elements, 2u);
  ASSERT_EQ(back.outputs.size(), 1u);
  EXPECT_EQ(as_floats(back.outputs[0].bytes), (std::vector<float>{1, 2, 3}));

  Ready ready;
  ready.state = DriverState::Ready;
  ready.gpu = 0;
  ready.devices.resize(2);
  ready.devices[1].name = "NVIDIA H100 80GB HBM3";
  ready.devices[1].max_grid_dim[1] = 65535;
  Ready rb = decode_ready(encode(ready));
  ASSERT_EQ(rb.devices.size(), 2u);
  EXPECT_EQ(rb.devices[1].name, ready.devices[1].name);
  EXPECT_EQ(rb.devices[1].max_grid_dim[1], 65535);
  EXPECT_EQ(decode_progress(encode_progress(37)), 37);
}

TEST(Protocol, MalformedPayloadsThrow) {
  std::vector<std::uint8_t> bytes = encode(sample_job());
  std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + bytes.size() / 2);
  EXPECT_THROW(decode_job(cut), Error);
  bytes.push_back(0);
  EXPECT_THROW(decode_job(bytes), Error);
  std::vector<std::uint8_t> huge_count(8, 0xFF);  // a vector claiming 2^64-1 elements
  EXPECT_THROW(decode_buffers(huge_count), Error);
}

TEST(Protocol, FramesOverASocketPair) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  std::vector<std::uint8_t> payload = encode(sample_job());
  ASSERT_TRUE(send_message(sv[0], MessageType::Job, payload));
  ASSERT_TRUE(send_message(sv[0], MessageType::Shutdown, {}));
  close(sv[0]);
  auto m1 = receive_message(sv[1]);
  ASSERT_TRUE(m1.has_value());
  EXPECT_EQ(m1->type, MessageType::Job);
  EXPECT_EQ(m1->payload, payload);
  auto m2 = receive_message(sv[1]);
  ASSERT_TRUE(m2.has_value());
  EXPECT_EQ(m2->type, MessageType::Shutdown);
  EXPECT_TRUE(m2->payload.empty());
  EXPECT_FALSE(receive_message(sv[1]).has_value());  // EOF
  close(sv[1]);
  // Sending to a closed peer is a false return, not SIGPIPE.
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  close(sv[1]);
  EXPECT_FALSE(send_message(sv[0], MessageType::Job, payload));
  close(sv[0]);
}

TEST(Verify, AbsoluteAndRelativeTolerance) {
  Tolerance tol{0.01, 0.1};  // allowed: 0.01 + 0.1 * |expected|
  HostBuffer want = floats("c", {1.0f, 100.0f, 0.0f});
  EXPECT_TRUE(compare_outputs({floats("c", {1.1f, 109.0f, 0.009f})}, {want}, tol).ok);
  VerifyOutcome bad = compare_outputs({floats("c", {1.0f, 111.0f, 0.0f})}, {want}, tol);
  EXPECT_FALSE(bad.ok);
  ASSERT_TRUE(bad.worst.has_value());
  EXPECT_EQ(bad.worst->buffer, "c");
  EXPECT_EQ(bad.worst->index, 1u);
  EXPECT_DOUBLE_EQ(bad.worst->got, 111.0);
  EXPECT_DOUBLE_EQ(bad.worst->expected, 100.0);
  EXPECT_NE(bad.reason.find("c[1]"), std::string::npos) << bad.reason;
}

TEST(Verify, NanNeverPassesAndTheWorstIsReported) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tolerance loose{1e9, 1e9};
  EXPECT_FALSE(compare_outputs({floats("c", {nan})}, {floats("c", {1.0f})}, loose).ok);
  EXPECT_FALSE(compare_outputs({floats("c", {nan})}, {floats("c", {nan})}, loose).ok);
  EXPECT_FALSE(compare_outputs({floats("c", {1.0f})}, {floats("c", {nan})}, loose).ok);
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(compare_outputs({floats("c", {inf})}, {floats("c", {inf})}, {}).ok);
  EXPECT_FALSE(compare_outputs({floats("c", {-inf})}, {floats("c", {inf})}, loose).ok);

  Tolerance tol{0.0, 0.0};
  VerifyOutcome v = compare_outputs({floats("a", {1, 2, 3}), floats("b", {5, nan, 9, 7})},
                                    {floats("a", {1, 2.5f, 3}), floats("b", {5, 6, 7, 8})}, tol);
  ASSERT_FALSE(v.ok);
  EXPECT_EQ(v.worst->buffer, "b");
  EXPECT_EQ(v.worst->index, 1u);  // NaN beats any finite error
  EXPECT_EQ(v.worst->failed_elements, 4u);
  EXPECT_NE(v.reason.find("4 of 7"), std::string::npos) << v.reason;
}

TEST(Verify, ShapeProblemsAreReasonsWithoutAnElement) {
  VerifyOutcome missing = compare_outputs({floats("x", {1})}, {floats("c", {1})}, {});
  EXPECT_FALSE(missing.ok);
  EXPECT_FALSE(missing.worst.has_value());
  EXPECT_NE(missing.reason.find("'c'"), std::string::npos);
  VerifyOutcome size = compare_outputs({floats("c", {1, 2})}, {floats("c", {1})}, {});
  EXPECT_FALSE(size.ok);
  EXPECT_NE(size.reason.find("2 float"), std::string::npos) << size.reason;
}

TEST(Verify, IntegersCompareExactly) {
  auto ints = [](std::vector<std::int64_t> v) {
    HostBuffer b{"k", ElemType::I64, std::vector<std::uint8_t>(v.size() * 8)};
    std::memcpy(b.bytes.data(), v.data(), b.bytes.size());
    return b;
  };
  const std::int64_t big = (std::int64_t{1} << 60) + 1;
  EXPECT_TRUE(compare_outputs({ints({big, -3})}, {ints({big, -3})}, {0, 0}).ok);
  // Equal as doubles, different as integers: still a mismatch.
  EXPECT_FALSE(compare_outputs({ints({big + 1})}, {ints({big})}, {0, 0}).ok);
}

TEST(Args, FillsAreDeterministicAndNeverZerosByDefault) {
  ArgSpec a = ArgSpec::buffer("a", ElemType::F32, 4096);
  ArgSpec b = ArgSpec::buffer("b", ElemType::F32, 4096);
  EXPECT_EQ(fill_host(a), fill_host(a));
  EXPECT_NE(fill_host(a), fill_host(b));  // the default seed follows the name
  std::vector<float> v = as_floats(fill_host(a));
  int zeros = 0;
  for (float x : v) {
    ASSERT_GE(x, 0.0f);
    ASSERT_LT(x, 1.0f);
    zeros += x == 0.0f;
  }
  EXPECT_LT(zeros, 2);
  a.fill.seed = 42;
  b.fill.seed = 42;
  EXPECT_EQ(fill_host(a), fill_host(b));  // an explicit seed wins over the name
  a.fill.lo = -5;
  a.fill.hi = -4;
  for (float x : as_floats(fill_host(a))) ASSERT_TRUE(x >= -5.0f && x < -4.0f);

  ArgSpec k = ArgSpec::buffer("k", ElemType::I32, 1000);
  std::vector<std::uint8_t> kb = fill_host(k);
  std::int32_t first = 0;
  bool varied = false;
  std::memcpy(&first, kb.data(), 4);
  for (std::size_t i = 0; i < 1000; ++i) {
    double x = element_value(ElemType::I32, kb.data(), i);
    ASSERT_TRUE(x >= 0 && x < 100 && x == std::floor(x));
    varied |= x != first;
  }
  EXPECT_TRUE(varied);
}

TEST(Args, ConstantSequenceZerosAndFile) {
  ArgSpec s = ArgSpec::buffer("s", ElemType::F64, 5, Fill::sequence(2, 0.5));
  for (std::size_t i = 0; i < 5; ++i)
    EXPECT_DOUBLE_EQ(element_value(ElemType::F64, fill_host(s).data(), i), 2 + 0.5 * i);
  ArgSpec c = ArgSpec::buffer("c", ElemType::F16, 3, Fill::constant(1.5));
  EXPECT_DOUBLE_EQ(element_value(ElemType::F16, fill_host(c).data(), 2), 1.5);
  ArgSpec z = ArgSpec::buffer("z", ElemType::U8, 7, Fill::zeros());
  EXPECT_EQ(fill_host(z), std::vector<std::uint8_t>(7, 0));

  std::string path = ::testing::TempDir() + "ktune_fill.bin";
  std::vector<float> data = {1, -2, 3.5f};
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data.data()), 12);
  ArgSpec f = ArgSpec::buffer("f", ElemType::F32, 3, Fill::file(path));
  EXPECT_EQ(as_floats(fill_host(f)), data);
  f.count = 4;
  EXPECT_THROW(fill_host(f), Error);
  f.fill.path = path + ".missing";
  EXPECT_THROW(fill_host(f), Error);
  std::remove(path.c_str());
}

TEST(Args, HalfAndBf16Conversions) {
  for (float x : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f, 0.333251953125f})
    EXPECT_EQ(half_to_float(float_to_half(x)), x) << x;
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(1e6f), 0x7C00);                      // overflow to infinity
  EXPECT_EQ(float_to_half(1.0f + 1.0f / 2048), 0x3C00);         // tie rounds to even
  EXPECT_EQ(float_to_half(1.0f + 3.0f / 2048), 0x3C02);
  EXPECT_TRUE(std::isnan(half_to_float(0xFFFF)));               // the poison pattern
  EXPECT_TRUE(std::isnan(bf16_to_float(0xFFFF)));
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.5f)), 1.5f);
  EXPECT_EQ(float_to_bf16(1.0f + 1.0f / 256), 0x3F80);          // tie to even
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
}

TEST(Args, TypeNamesAndScalars) {
  EXPECT_EQ(parse_elem_type("float"), ElemType::F32);
  EXPECT_EQ(parse_elem_type("const __half"), ElemType::F16);
  EXPECT_EQ(parse_elem_type("__nv_bfloat16"), ElemType::BF16);
  EXPECT_EQ(parse_elem_type("unsigned int"), ElemType::U32);
  EXPECT_EQ(parse_elem_type("size_t"), ElemType::U64);
  EXPECT_FALSE(parse_elem_type("float4").has_value());
  EXPECT_EQ(elem_size(ElemType::BF16), 2u);
  ArgSpec n = ArgSpec::scalar_int("n", ElemType::I64, (std::int64_t{1} << 62) + 1);
  std::vector<std::uint8_t> b = scalar_bytes(n);
  std::int64_t back = 0;
  std::memcpy(&back, b.data(), 8);
  EXPECT_EQ(back, (std::int64_t{1} << 62) + 1);
  EXPECT_EQ(scalar_bytes(ArgSpec::scalar("x", ElemType::F16, 2.0)),
            (std::vector<std::uint8_t>{0x00, 0x40}));
}

DeviceProperties h100_like() {
  DeviceProperties d;
  d.max_block_dim[0] = d.max_block_dim[1] = 1024;
  d.max_block_dim[2] = 64;
  d.max_grid_dim[0] = 2147483647;
  d.max_grid_dim[1] = d.max_grid_dim[2] = 65535;
  d.max_threads_per_block = 1024;
  d.max_threads_per_sm = 2048;
  d.smem_per_block_optin = 227 * 1024;
  d.regs_per_block = 65536;
  d.warp_size = 32;
  return d;
}

TEST(Measure, GeometryLimits) {
  DeviceProperties d = h100_like();
  FunctionAttributes r;
  r.registers = 32;
  r.max_threads_per_block = 1024;
  LaunchGeometry g;
  g.grid = {1000, 1, 1};
  g.block = {256, 1, 1};
  EXPECT_EQ(check_geometry(d, r, g), "");
  g.block = {2048, 1, 1};
  EXPECT_NE(check_geometry(d, r, g).find("block.x"), std::string::npos);
  g.block = {32, 32, 2};
  EXPECT_NE(check_geometry(d, r, g).find("2048 threads per block"), std::string::npos);
  g.block = {256, 1, 1};
  g.grid = {1, 70000, 1};
  EXPECT_NE(check_geometry(d, r, g).find("grid.y"), std::string::npos);
  g.grid = {1, 1, 1};
  g.dynamic_smem = 228 * 1024;
  EXPECT_NE(check_geometry(d, r, g).find("shared memory"), std::string::npos);
  g.dynamic_smem = 100 * 1024;  // above 48 KiB but within opt-in: allowed
  EXPECT_EQ(check_geometry(d, r, g), "");
  r.max_threads_per_block = 128;  // e.g. __launch_bounds__ or heavy register use
  EXPECT_NE(check_geometry(d, r, g).find("kernel's limit 128"), std::string::npos);
  r.max_threads_per_block = 1024;
  r.registers = 255;
  g.block = {1024, 1, 1};
  g.dynamic_smem = 0;
  EXPECT_NE(check_geometry(d, r, g).find("registers"), std::string::npos);
}

TEST(Measure, SampleStatistics) {
  SampleStats s = summarize({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_NEAR(s.stddev, std::sqrt(5.0 / 3.0), 1e-12);
  EXPECT_NEAR(s.noise, std::sqrt(5.0 / 3.0) / 2.5, 1e-12);
  EXPECT_DOUBLE_EQ(summarize({7}).stddev, 0);
  EXPECT_DOUBLE_EQ(summarize({}).median, 0);
}

TEST(Measure, ThrottleReasons) {
  Sensors s;
  s.valid = true;
  s.reasons = 0x1;  // GPU idle: not throttling
  EXPECT_FALSE(s.throttled());
  s.reasons = 0x4 | 0x40;
  EXPECT_TRUE(s.throttled());
  EXPECT_EQ(s.throttle_text(), "sw_power_cap,hw_thermal_slowdown");
}

}  // namespace
}  // namespace ktune::gpu
