// The racing rule (tuner/gpu/measure.h): sampling stops once the first
// samples all lie above the bound, never before race_samples samples, and
// never when racing is off; the one-sample rule stops on a first sample far
// above the best.
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

TEST(Racing, OneSampleRuleStopsOnTheFirstSampleAlone) {
  MeasureOptions o = racing(1.2);
  o.race_first_above_ms = 1.5;
  EXPECT_TRUE(race_lost({1.6}, o));
  EXPECT_FALSE(race_lost({1.5}, o));        // at the bound: not above it
  EXPECT_FALSE(race_lost({1.4}, o));        // between the bounds: the three-sample rule decides
  EXPECT_FALSE(race_lost({1.4, 1.3}, o));
  EXPECT_TRUE(race_lost({1.4, 1.3, 1.25}, o));
  EXPECT_FALSE(race_lost({1.4, 1.1, 1.6}, o));  // only the first sample counts for it
}

TEST(Racing, OneSampleRuleAloneNeedsNoThreeSampleBound) {
  MeasureOptions o;
  o.race_first_above_ms = 2.0;
  EXPECT_TRUE(race_lost({2.5}, o));
  EXPECT_FALSE(race_lost({1.0, 9.0, 9.0}, o));
}

}  // namespace
}  // namespace ktune::gpu
