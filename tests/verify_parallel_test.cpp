// compare_outputs on buffers large enough to be split across threads gives the
// sequential answer: every failure counted, the worst element (lowest index on
// ties) reported, NaN never passing even where both sides hold it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "tuner/gpu/verify.h"

namespace ktune::gpu {
namespace {

HostBuffer floats(const std::string& name, const std::vector<float>& v) {
  HostBuffer b{name, ElemType::F32, std::vector<std::uint8_t>(v.size() * 4)};
  std::memcpy(b.bytes.data(), v.data(), b.bytes.size());
  return b;
}

TEST(VerifyParallel, LargeBuffersGiveTheSequentialAnswer) {
  const size_t n = size_t{1} << 22;
  std::vector<float> want(n);
  for (size_t i = 0; i < n; ++i) want[i] = float(i % 1000) * 0.5f;
  std::vector<float> got = want;
  got[10] += 1.0f;          // first chunk
  got[n / 2 + 3] += 5.0f;   // a middle chunk: the worst
  got[n - 1] += 5.0f;       // last chunk: as bad, later index
  got[n / 4] = std::nanf("");
  std::vector<float> want_nan = want;
  want_nan[n / 4] = std::nanf("");
  const VerifyOutcome v = compare_outputs({floats("c", got)}, {floats("c", want_nan)}, {1e-6, 0});
  ASSERT_FALSE(v.ok);
  ASSERT_TRUE(v.worst);
  EXPECT_EQ(v.worst->failed_elements, 4u);
  EXPECT_EQ(v.worst->index, n / 4);  // NaN scores infinitely bad
  got[n / 4] = want[n / 4];
  const VerifyOutcome w = compare_outputs({floats("c", got)}, {floats("c", want)}, {1e-6, 0});
  ASSERT_TRUE(w.worst);
  EXPECT_EQ(w.worst->failed_elements, 3u);
  EXPECT_EQ(w.worst->index, n / 2 + 3);
  EXPECT_TRUE(compare_outputs({floats("c", want)}, {floats("c", want)}, {0, 0}).ok);
}

}  // namespace
}  // namespace ktune::gpu
