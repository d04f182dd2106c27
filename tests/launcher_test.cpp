// ktune::Launcher without a GPU: selection from a database and from a JSON
// export with every fallback, problems given as spec constants, spec defaults
// with a warning, bad input; and `--set` constant overrides of the spec.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "db/export/deploy.h"
#include "db/interchange/interchange.h"
#include "db/store.h"
#include "ktune/launcher.h"
#include "ktune/error.h"
#include "test_util.h"
#include "tuner/gpu/driver.h"
#include "tuner/spec/spec.h"

using namespace ktune;

namespace {

const std::string kSpec = std::string(KTUNE_TEMPLATES_DIR) + "/vector_add/vector_add.yaml";
const std::string kH100 = "NVIDIA H100 80GB HBM3";

class LauncherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.file("tuned.db");
    json_ = dir_.file("tuned.json");
    {
      db::Store store(db_);
      // Real measurements: the exhaustive vector_add run on an H100 (examples/data).
      db::import_file(store, std::string(KTUNE_EXAMPLES_DIR) + "/data/vector_add_h100.json");
      // A second device of the same architecture, known by its compute capability.
      db::KernelInfo k = *store.kernel(1);
      db::DeviceInfo d;
      d.name = "NVIDIA H100 PCIe";
      d.cc_major = 9;
      db::SeriesIds where{store.upsert_kernel(k), store.upsert_device(d), store.upsert_problem_size({1 << 20})};
      db::Evaluation e;
      e.config = {Value(512), Value(2), Value(4), Value(1), Value(0)};
      e.time_ms = 0.01;
      store.add_evaluation(store.begin_run(db::RunInfo{}), where, e);
      std::ofstream(json_) << db::deploy_json(db::collect_deploy(store, {}));
    }
  }
  LauncherOptions options(const std::string& results) {
    LauncherOptions o;
    o.spec = kSpec;
    o.results = results;
    o.report = [this](const std::string& line) { reports_.push_back(line); };
    return o;
  }

  ktune::testing::TempDir dir_;
  std::string db_, json_;
  std::vector<std::string> reports_;
};

std::string value_of(const Choice& c, const std::string& name) {
  for (const auto& [n, v] : c.config)
    if (n == name) return v;
  return "?";
}

TEST_F(LauncherTest, SelectsFromDatabaseAndJsonAlike) {
  for (const std::string& results : {db_, json_}) {
    Launcher l(options(results));
    EXPECT_TRUE(reports_.empty()) << reports_.front();
    const Problem full{{"n", 67108864}};
    const Choice exact = l.choose(full, kH100, 90);
    EXPECT_EQ(exact.match, "exact device") << results;
    EXPECT_NE(exact.source.find(kH100 + ", problem size 67108864"), std::string::npos) << exact.source;
    EXPECT_EQ(exact.problem_size_total, 67108864);
    // Same compute capability: the import knew the H100's from its name; of
    // the two sm_90 entries the one nearest in problem size answers.
    const Choice same = l.choose(full, "NVIDIA GH200 480GB", 90);
    EXPECT_EQ(same.match, "same compute capability");
    EXPECT_EQ(same.config, exact.config);
    EXPECT_EQ(value_of(l.choose({{"n", 1 << 20}}, "NVIDIA GH200 480GB", 90), "block_size_x"), "512");
    EXPECT_EQ(l.choose(full, "NVIDIA H20", 91).match, "same major architecture");
    // An unknown architecture: the most portable configuration of the nearest
    // problem size; at 67108864 only the H100 measured, so its optimum.
    const Choice other = l.choose(full, "NVIDIA A100-SXM4-80GB", 80);
    EXPECT_EQ(other.match, "most portable");
    EXPECT_EQ(other.config, exact.config);
    // The chosen configuration's geometry, from the spec's grid expression.
    const int64_t bx = std::stoll(value_of(exact, "block_size_x"));
    EXPECT_EQ(exact.block[0], bx);
    if (value_of(exact, "grid_stride") == "0") {
      const int64_t tile = bx * std::stoll(value_of(exact, "items_per_thread"));
      const int64_t nv = 67108864 / std::stoll(value_of(exact, "vector_width"));
      EXPECT_EQ(exact.grid[0], static_cast<unsigned>((nv + tile - 1) / tile));
    }
  }
}

TEST_F(LauncherTest, ProblemConstantsChangeSizeAndGeometry) {
  Launcher l(options(json_));
  const Choice small = l.choose({{"n", 1 << 20}}, "NVIDIA H100 PCIe", 90);
  EXPECT_EQ(small.problem_size_total, 1 << 20);
  EXPECT_EQ(small.match, "exact device");
  EXPECT_EQ(small.config_text(), "block_size_x=512, items_per_thread=2, vector_width=4, unroll=1, grid_stride=0");
  EXPECT_EQ(small.grid[0], (1u << 20) / 4 / (512 * 2));
  try {
    l.choose({{"no_such_constant", 3}}, kH100, 90);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::BadInput);
    EXPECT_NE(std::string(e.what()).find("constants: n, num_sms"), std::string::npos) << e.what();
  }
}

TEST_F(LauncherTest, MissingResultsFallBackToSpecDefaultsWithAWarning) {
  {
    Launcher l(options(""));
    ASSERT_EQ(reports_.size(), 1u);
    EXPECT_NE(reports_[0].find("warning: no results given for kernel 'vector_add'"), std::string::npos);
    const Choice c = l.choose({}, kH100, 90);
    EXPECT_EQ(c.match, "spec defaults");
    // Each parameter's first listed value would break `unroll == 1 or
    // items_per_thread > 1`: the first valid configuration instead.
    EXPECT_EQ(c.config_text(), "block_size_x=64, items_per_thread=1, vector_width=1, unroll=1, grid_stride=0");
  }
  reports_.clear();
  LauncherOptions o = options(json_);
  o.kernel = "not_tuned_here";
  Launcher l(o);
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_NE(reports_[0].find("holds no results for kernel 'not_tuned_here'"), std::string::npos) << reports_[0];
  EXPECT_EQ(l.choose({}, kH100, 90).match, "spec defaults");
}

TEST_F(LauncherTest, BadInputIsReportedAtConstruction) {
  EXPECT_THROW(Launcher(options(dir_.file("missing.json"))), Error);
  std::ofstream(dir_.file("garbage.json")) << "{\"not\": \"an export\"}";
  try {
    Launcher l(options(dir_.file("garbage.json")));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::BadInput);
  }
  LauncherOptions o = options(json_);
  o.spec = dir_.file("no_spec.yaml");
  EXPECT_THROW(Launcher{o}, Error);
}

TEST_F(LauncherTest, WithoutADriverLaunchingFailsCleanly) {
  if (gpu::cuda_driver().ready()) GTEST_SKIP() << "a CUDA driver is present; tests/gpu covers launches";
  Launcher l(options(json_));
  try {
    l.prepare({{"n", 1024}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA driver"), std::string::npos) << e.what();
  }
}

TEST(SpecConstantOverrides, DerivedConstantsFollowAndUnknownNamesAreBadInput) {
  const ConstantOverrides o = parse_constant_overrides({"n=4096", "num_sms=114"});
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0].second, Value(4096));
  const Spec s = load_spec(kSpec, o);
  const LaunchResult g = s.geometry(s.space().values(s.space().at(0)));
  ASSERT_TRUE(g.ok()) << g.error;
  EXPECT_EQ(g.launch->problem_size[0], 4096);
  EXPECT_NE(s.hash, load_spec(kSpec).hash);  // another problem: results kept apart
  EXPECT_EQ(parse_constant_overrides({"x=1.5"})[0].second, Value(1.5));
  EXPECT_EQ(parse_constant_overrides({"x=true"})[0].second, Value(true));
  EXPECT_EQ(parse_constant_overrides({"x=abc"})[0].second, Value("abc"));
  EXPECT_THROW(parse_constant_overrides({"=3"}), Error);
  EXPECT_THROW(parse_constant_overrides({"n"}), Error);
  try {
    load_spec(kSpec, {{"m", Value(3)}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::BadInput);
    EXPECT_NE(std::string(e.what()).find("cannot set 'm'"), std::string::npos) << e.what();
  }
}

}  // namespace
