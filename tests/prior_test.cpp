// Priors from the database: which series a tuning run may start from.
#include <gtest/gtest.h>

#include <filesystem>

#include "db/store.h"
#include "test_util.h"
#include "tuner/tune/prior.h"
#include "tuner/spec/spec.h"

namespace fs = std::filesystem;
using namespace ktune;
using ktune::testing::TempDir;

namespace {

const std::string kVecSpec = fs::path(KTUNE_TESTS_DIR).parent_path().string() + "/templates/vector_add/vector_add.yaml";

db::Evaluation eval_of(const Spec& spec, size_t config_index, double time_ms) {
  db::Evaluation e;
  e.config = spec.space().values(spec.space().at(config_index));
  e.time_ms = time_ms;
  e.samples = {time_ms};
  e.complete_stats();
  return e;
}

}  // namespace

// A replay is filed under the recorded device's name. A GPU run on that
// device does not resume from it (Store::measured keeps them apart) but
// starts from it as its prior; a replay starts from that device's
// measurements. A series never is its own prior.
TEST(PriorFromStore, TheSameSeriesOtherOriginIsThePrior) {
  const Spec spec = load_spec(kVecSpec);
  TempDir dir;
  db::Store store(dir.file("k.db"));
  db::KernelInfo k;
  k.name = spec.kernel.name;
  k.spec_hash = spec.hash;
  for (const Parameter& p : spec.space().parameters()) {
    k.param_names.push_back(p.name);
    k.param_types.push_back(p.type);
  }
  db::SeriesIds ids;
  ids.kernel_id = store.upsert_kernel(k);
  ids.device_id = store.upsert_device({.name = "NVIDIA H100 80GB HBM3"});
  ids.psize_id = store.upsert_problem_size({1 << 26});

  EXPECT_FALSE(prior_from_store(spec, store, ids, false)) << "an empty store";
  db::RunInfo replay;
  replay.replay = true;
  replay.replay_source = "vector_add_h100.json";
  const int64_t run = store.begin_run(replay);
  for (size_t i = 0; i < 5; ++i) store.add_evaluation(run, ids, eval_of(spec, i, 1.0 + i));
  EXPECT_FALSE(prior_from_store(spec, store, ids, true)) << "the replay's own series";

  const std::optional<Prior> live = prior_from_store(spec, store, ids, false);
  ASSERT_TRUE(live);
  EXPECT_TRUE(live->replayed);
  EXPECT_EQ(live->observations.size(), 5u);
  EXPECT_EQ(live->device, "NVIDIA H100 80GB HBM3");
  EXPECT_NE(live->describe().find("replayed"), std::string::npos) << live->describe();

  for (size_t i = 0; i < 3; ++i) store.add_evaluation(std::nullopt, ids, eval_of(spec, i, 2.0));
  const std::optional<Prior> replayed = prior_from_store(spec, store, ids, true);
  ASSERT_TRUE(replayed);
  EXPECT_FALSE(replayed->replayed);
  EXPECT_EQ(replayed->observations.size(), 3u);
}

// A prior is knowledge from another GPU or another problem size: unlike a
// replay, which answers only for the size it was recorded at, it is taken
// whatever size the recording was made at.
TEST(PriorFromFile, ARecordingAtAnotherProblemSizeIsAPrior) {
  const std::string data = fs::path(KTUNE_TESTS_DIR).parent_path().string() + "/examples/data/vector_add_h100.json";
  const Spec small = load_spec(kVecSpec, {{"n", Value(int64_t{1048576})}});
  const Prior p = load_prior(small, data);
  EXPECT_EQ(p.observations.size(), 246u);
  EXPECT_GT(p.successes(), 0u);
}
