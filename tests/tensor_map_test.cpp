// `type: tensor_map` arguments: read from YAML, checked against their buffer with
// file, line and column, passed to the engine with their buffer's index and byte
// strides, and carried over the worker protocol.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_util.h"
#include "tuner/gpu/protocol.h"
#include "tuner/spec/spec.h"
#include "tuner/tune/engine_arguments.h"

namespace ktune {
namespace {

using testing::error_of;

const std::string kHead =
    "kernel: {name: k, source: missing.cu}\n"
    "problem_size: [64]\n"
    "tune_params: {block_size_x: [64]}\n"
    "constants: {M: 256, K: 128}\n"
    "arguments:\n"
    "  - {name: C, type: float*, size: M * K, fill: zeros, output: true}\n";

Spec load(const std::string& args) { return load_spec_text(kHead + args, "map.yaml", Spec::Format::Yaml); }
Error load_error(const std::string& args) {
  return error_of([&] { load(args); });
}

TEST(TensorMap, ReadWithItsBuffersTypeAndPackedStrides) {
  Spec s = load(
      "  - {name: a_map, type: tensor_map, of: A, dims: [K, M], box: [64, 32], swizzle: 128}\n"
      "  - {name: A, type: bfloat16*, size: M * K}\n");
  const Argument& m = s.arguments[1];
  ASSERT_TRUE(m.tensor_map);
  EXPECT_FALSE(m.pointer);
  EXPECT_EQ(m.type, ElemType::BF16);  // its buffer's, which comes after it
  EXPECT_EQ(m.tensor_map->of, "A");
  EXPECT_EQ(m.tensor_map->dims, (std::vector<int64_t>{128, 256}));
  EXPECT_EQ(m.tensor_map->strides, (std::vector<int64_t>{128}));
  EXPECT_EQ(m.tensor_map->box, (std::vector<int64_t>{64, 32}));
  EXPECT_EQ(m.tensor_map->swizzle, 128);

  // The engine gets the buffer's index in its own list and strides in bytes.
  auto args = engine_arguments(s);
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[1].kind, gpu::ArgKind::TensorMap);
  EXPECT_EQ(args[1].type, ElemType::BF16);
  EXPECT_EQ(args[1].map.of, 2u);
  EXPECT_EQ(args[1].map.dims, (std::vector<uint64_t>{128, 256}));
  EXPECT_EQ(args[1].map.stride_bytes, (std::vector<uint64_t>{256}));
  EXPECT_EQ(args[1].map.box, (std::vector<uint32_t>{64, 32}));
  EXPECT_EQ(args[1].map.swizzle, 128u);

  // ... and the worker the same, over its protocol.
  gpu::Job job;
  job.args = args;
  gpu::Job back = gpu::decode_job(gpu::encode(job));
  ASSERT_EQ(back.args.size(), 3u);
  EXPECT_EQ(back.args[1].kind, gpu::ArgKind::TensorMap);
  EXPECT_EQ(back.args[1].map.of, 2u);
  EXPECT_EQ(back.args[1].map.stride_bytes, args[1].map.stride_bytes);
  EXPECT_EQ(back.args[1].map.box, args[1].map.box);
}

TEST(TensorMap, AMapChangesTheSpecsHash) {
  const std::string buffer = "  - {name: A, type: bfloat16*, size: M * K}\n";
  Spec a = load(buffer + "  - {name: m, type: tensor_map, of: A, dims: [K, M], box: [64, 64]}\n");
  Spec b = load(buffer + "  - {name: m, type: tensor_map, of: A, dims: [K, M], box: [64, 32]}\n");
  EXPECT_NE(a.hash, b.hash);
}

TEST(TensorMap, MistakesNameTheirPlace) {
  // Each case's error is at `at`: the first place it occurs on the case's last line.
  struct Case {
    std::string args, part, at;
  };
  const std::string A = "  - {name: A, type: bfloat16*, size: M * K}\n";
  const Case cases[] = {
      {"  - {name: m, type: tensor_map, of: B, dims: [K, M], box: [64, 64]}\n", "no buffer argument", "of:"},
      {A + "  - {name: m, type: tensor_map, of: A, dims: [K, M + 1], box: [64, 64]}\n", "reaches element", "dims:"},
      {A + "  - {name: m, type: tensor_map, of: A, dims: [K, M], box: [64, 300]}\n", "[1, 256]", "300"},
      {A + "  - {name: m, type: tensor_map, of: A, dims: [K, M], box: [64]}\n", "one entry per dimension", "[64]"},
      {A + "  - {name: m, type: tensor_map, of: A, dims: [K, M], box: [4, 64]}\n", "not a multiple of 16", "box:"},
      {A + "  - {name: m, type: tensor_map, of: A, dims: [K, M], box: [128, 64], swizzle: 128}\n",
       "more than the 128-byte swizzle", "box:"},
      {A + "  - {name: m, type: tensor_map, of: A, dims: [K, M], box: [64, 64], swizzle: 16}\n", "swizzle must be", "16}"},
      {A + "  - {name: m, type: tensor_map, of: A, dims: [64, 4], strides: [100], box: [64, 4]}\n",
       "not a multiple of 16", "strides:"},
      {A + "  - {name: m, type: tensor_map, of: A, dims: [K, M], box: [64, 64], fill: zeros}\n",
       "does not apply to a tensor_map", "fill:"},
      {"  - {name: A, type: bfloat16*, size: 4, box: [4]}\n", "applies to type: tensor_map", "box:"},
  };
  const int head_lines = 6;
  for (const Case& c : cases) {
    const int lines = int(std::count(c.args.begin(), c.args.end(), '\n'));
    const size_t last = c.args.rfind('\n', c.args.size() - 2);
    const std::string line = c.args.substr(last == std::string::npos ? 0 : last + 1);
    Error e = load_error(c.args);
    EXPECT_EQ(e.exit_status(), 2) << e.what();
    EXPECT_NE(e.message().find(c.part), std::string::npos) << c.args << e.what();
    EXPECT_EQ(e.where().line, head_lines + lines) << c.args << e.what();
    EXPECT_EQ(e.where().column, int(line.find(c.at)) + 1) << c.args << e.what();
  }
}

}  // namespace
}  // namespace ktune
