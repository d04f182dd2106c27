// The racing rule (tuner/gpu/measure.h): sampling stops once the first
// samples all lie above the bound, never before race_samples samples, and
// never when racing is off.
#include <gtest/gtest.h>

#include <vector>

#include "tuner/gpu/measure.h"

namespace ktune::gpu {
namespace {

MeasureOptions racing(double above_ms, int samples = 3) {
  MeasureOptions o;
  o.race_above_ms = above_ms;
  o.race_samples = samples;
  return o;
}

TEST(Racing, OffByDefault) {
  EXPECT_FALSE(race_lost({9.0, 9.0, 9.0, 9.0}, MeasureOptions{}));
}

TEST(Racing, WaitsForItsSamples) {
  EXPECT_FALSE(race_lost({}, racing(1.0)));
  EXPECT_FALSE(race_lost({5.0, 5.0}, racing(1.0)));
  EXPECT_TRUE(race_lost({5.0, 5.0, 5.0}, racing(1.0)));
  EXPECT_FALSE(race_lost({5.0, 5.0, 5.0}, racing(1.0, 4)));
}

TEST(Racing, OneSampleNearTheBestKeepsItInTheRace) {
  EXPECT_FALSE(race_lost({5.0, 0.99, 5.0}, racing(1.0)));
  EXPECT_FALSE(race_lost({1.0, 1.0, 1.0}, racing(1.0)));  // at the bound: not above it
  EXPECT_TRUE(race_lost({1.01, 1.2, 3.0}, racing(1.0)));
}

}  // namespace
}  // namespace ktune::gpu
