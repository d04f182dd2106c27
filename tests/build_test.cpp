// A configuration's build (tuner/build/build.h): the one rule by which a
// failed build becomes a status, and what of it an evaluation stores, checked
// on hand-made compile results (no compiler, no GPU).
#include <gtest/gtest.h>

#include "tuner/build/build.h"

namespace ktune {
namespace {

LaunchResult launched() {
  LaunchResult l;
  l.launch = Launch{};
  l.launch->block = {128, 1, 1};
  return l;
}

CompileResult compiled(std::string occupancy_error = "") {
  CompileResult r;
  r.ok = true;
  r.compile_ms = 12.5;
  r.resources.registers = 40;
  r.resources.static_smem = 1024;
  r.resources.local_bytes = 16;
  Occupancy o;
  o.fraction = occupancy_error.empty() ? 0.5 : 0;
  o.error = std::move(occupancy_error);
  r.occupancy = o;
  return r;
}

TEST(Build, NoLaunchIsInvalidWithItsReasonAndNothingCompiled) {
  LaunchResult l;
  l.error = "grid: division by zero";
  const Build b = finish_build(l);
  EXPECT_EQ(b.status, db::Status::Invalid);
  EXPECT_EQ(b.reason, "grid: division by zero");
  EXPECT_FALSE(b.compiled());
  db::Evaluation e;
  record_build(b, e);
  EXPECT_EQ(e.status, db::Status::Invalid);
  EXPECT_FALSE(e.compile_ms.has_value());
  EXPECT_FALSE(e.registers.has_value());
}

TEST(Build, AFailedCompileIsACompileErrorWithItsFirstErrorLineAndLog) {
  CompileResult r;
  r.log = "note: something\nkernel.cu(3): error: identifier \"x\" is undefined\n";
  r.compile_ms = 7;
  const Build b = finish_build(launched(), r);
  EXPECT_EQ(b.status, db::Status::CompileError);
  EXPECT_EQ(b.reason, r.error_line());
  db::Evaluation e;
  record_build(b, e);
  EXPECT_EQ(e.status, db::Status::CompileError);
  EXPECT_EQ(e.log, r.log);
  EXPECT_EQ(e.compile_ms, 7);
  EXPECT_FALSE(e.registers.has_value());
  // A failure with no log still says what happened.
  EXPECT_EQ(finish_build(launched(), CompileResult{}).reason, "compilation failed");
}

TEST(Build, ALaunchTheArchitectureCannotTakeIsInvalidWithTheCompilesFigures) {
  const Build b = finish_build(launched(), compiled("238592 bytes of shared memory per block: too many"));
  EXPECT_EQ(b.status, db::Status::Invalid);
  EXPECT_EQ(b.reason, "238592 bytes of shared memory per block: too many");
  EXPECT_TRUE(b.compiled());
  db::Evaluation e;
  record_build(b, e);
  EXPECT_EQ(e.status, db::Status::Invalid);
  EXPECT_EQ(e.registers, 40);
  EXPECT_FALSE(e.occupancy.has_value());
  EXPECT_TRUE(e.log.empty());
}

TEST(Build, ACleanCompileIsOkAndStoresItsFigures) {
  CompileResult r = compiled();
  const Build b = finish_build(launched(), r);
  EXPECT_TRUE(b.ok());
  EXPECT_TRUE(b.reason.empty());
  db::Evaluation e;
  record_build(b, e);
  EXPECT_EQ(e.status, db::Status::Ok);
  EXPECT_EQ(e.compile_ms, 12.5);
  EXPECT_EQ(e.registers, 40);
  EXPECT_EQ(e.shared_bytes, 1024);
  EXPECT_EQ(e.local_bytes, 16);
  EXPECT_EQ(e.occupancy, 0.5);
  // A cubin from the cache cost no compile.
  r.cache_hit = true;
  record_build(finish_build(launched(), r), e);
  EXPECT_EQ(e.compile_ms, 0);
}

}  // namespace
}  // namespace ktune
