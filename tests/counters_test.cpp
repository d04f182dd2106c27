// Hardware counters and energy without a GPU: how CUPTI's metrics become
// stored figures, the roofline position, adding counters to stored rows, the
// energy objective of a spec, and the wire format of profiled jobs.
#include <gtest/gtest.h>

#include "db/roofline.h"
#include "db/store.h"
#include "tests/test_util.h"
#include "tuner/gpu/counters.h"
#include "tuner/gpu/protocol.h"
#include "tuner/spec/spec.h"
#include "tuner/tune/evaluator.h"

namespace ktune {
namespace {

TEST(Counters, StandardMetricsBecomeStoredFiguresAndOthersMetrics) {
  std::vector<std::string> names = gpu::standard_metrics();
  std::vector<double> values(names.size(), 0);
  auto set = [&](const std::string& m, double v) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == m) values[i] = v;
    }
  };
  set("gpu__time_duration.sum", 159736);  // ns
  set("dram__bytes_write.sum", 2.65e8);
  set("dram__throughput.avg.pct_of_peak_sustained_elapsed", 49.5);
  set("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", 2097152);
  set("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 8388608);
  set("sm__warps_active.avg.pct_of_peak_sustained_active", 78.8);
  set("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", 3);
  set("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", 61);
  set("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 100);
  set("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 10);
  set("smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", 1);
  names.push_back("smsp__inst_executed.sum");
  values.push_back(42);
  db::Evaluation e;
  gpu::counters_to_evaluation(names, values, e);
  EXPECT_NEAR(*e.profiled_ms, 0.159736, 1e-12);
  EXPECT_EQ(*e.dram_write_bytes, 2.65e8);
  EXPECT_EQ(*e.dram_read_bytes, 0);
  EXPECT_NEAR(*e.dram_util, 0.495, 1e-12);
  EXPECT_EQ(*e.store_sectors / *e.store_requests, 4);
  EXPECT_NEAR(*e.achieved_occupancy, 0.788, 1e-12);
  EXPECT_NEAR(*e.tensor_util, 0.61, 1e-12);  // the busier of mma and gmma
  EXPECT_EQ(*e.flop, 2 * 100 + 10 + 2 * 1);  // an FMA is two operations
  EXPECT_EQ(e.metrics.at("smsp__inst_executed.sum"), 42);
  EXPECT_EQ(e.metrics.size(), 1u);
}

TEST(Counters, InstructionCountsAreProfiledApartFromHardwareCounters) {
  const auto sets = gpu::metric_sets(gpu::standard_metrics());
  ASSERT_EQ(sets.size(), 10u);  // the hardware counters, then each FP32/64/16 add, mul and fma count alone
  for (const auto& m : sets[0]) EXPECT_EQ(m.find("sass_"), std::string::npos) << m;
  for (size_t i = 1; i < sets.size(); ++i) {
    ASSERT_EQ(sets[i].size(), 1u);
    EXPECT_NE(sets[i][0].find("sass_thread_inst_executed"), std::string::npos) << sets[i][0];
  }
  EXPECT_EQ(gpu::metric_sets({"dram__bytes_read.sum"}).size(), 1u);
}

TEST(Counters, NothingMeasuredLeavesTheFiguresUnset) {
  db::Evaluation e;
  gpu::counters_to_evaluation({}, {}, e);
  for (const db::EvaluationField& f : db::evaluation_fields()) {
    if (f.kind == db::EvaluationField::Kind::Counter) {
      EXPECT_FALSE(f.get(e)) << f.column;
    }
  }
}

db::DeviceInfo h100_roofs() {
  db::DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.copy_gbs = 3000;
  d.fp32_gflops = 60000;  // ridge at 20 FLOP/byte
  return d;
}

TEST(Roofline, AStreamingKernelIsMemoryBoundAndMeasuredAgainstCopyBandwidth) {
  db::Evaluation e;
  e.time_ms = 0.1;
  e.dram_read_bytes = 1.5e8;
  e.dram_write_bytes = 1.5e8;  // 300 MB in 0.1 ms: 3000 GB/s
  e.flop = 1e7;
  const auto r = db::roofline(e, h100_roofs());
  ASSERT_TRUE(r);
  EXPECT_NEAR(r->dram_gbs, 3000, 1e-9);
  EXPECT_NEAR(*r->flop_per_byte, 1e7 / 3e8, 1e-12);
  EXPECT_NEAR(*r->gflops, 100, 1e-9);
  EXPECT_EQ(r->bound, "memory");
  EXPECT_NEAR(*r->of_roof, 1.0, 1e-12);
}

TEST(Roofline, AGemmIsComputeBoundAndMeasuredAgainstFmaThroughput) {
  db::Evaluation e;
  e.time_ms = 1;
  e.dram_read_bytes = 1e8;
  e.dram_write_bytes = 0;
  e.flop = 3e10;  // 300 FLOP/byte; 30 TFLOP/s
  const auto r = db::roofline(e, h100_roofs());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->bound, "compute");
  EXPECT_NEAR(*r->of_roof, 0.5, 1e-12);
}

TEST(Roofline, ATensorCoreGemmIsPlacedByItsTensorPipesUtilisation) {
  db::Evaluation e;
  e.time_ms = 0.22;
  e.dram_read_bytes = 2e8;
  e.dram_write_bytes = 1.6e7;  // about 980 GB/s: a third of the copy roof
  e.tensor_flop = 1.37e11;
  e.flop = 1e6;
  e.tensor_util = 0.69;
  const auto r = db::roofline(e, h100_roofs());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->bound, "tensor");
  EXPECT_NEAR(*r->of_roof, 0.69, 1e-12);
  EXPECT_NEAR(*r->gflops, (1.37e11 + 1e6) / 0.22e6, 1e-3);
}

TEST(Roofline, NoCountersNoPositionAndNoRoofsNoBound) {
  db::Evaluation e;
  e.time_ms = 1;
  EXPECT_FALSE(db::roofline(e, h100_roofs()));
  e.dram_read_bytes = 1e6;
  e.dram_write_bytes = 1e6;
  const auto r = db::roofline(e, db::DeviceInfo{});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->bound, "");
  EXPECT_FALSE(r->of_roof);
  EXPECT_FALSE(r->flop_per_byte);  // no floating-point work counted
  e.status = db::Status::RuntimeError;
  EXPECT_FALSE(db::roofline(e, h100_roofs()));
}

TEST(Counters, AddFiguresUpdatesOneStoredRowAndMergesMetrics) {
  testing::TempDir dir;
  db::Store s(dir.file("k.db"));
  db::KernelInfo k;
  k.name = "store";
  k.param_names = {"stride"};
  k.param_types = {ValueType::Int};
  db::DeviceInfo d = h100_roofs();
  const db::SeriesIds ids{s.upsert_kernel(k), s.upsert_device(d), s.upsert_problem_size({1024})};
  db::Evaluation e;
  e.config = {Value(1)};
  e.time_ms = 0.5;
  e.metrics["GB/s"] = 8;
  const int64_t id = s.add_evaluation(std::nullopt, ids, e);
  db::Evaluation counted;
  counted.store_requests = 32;
  counted.store_sectors = 128;
  counted.time_ms = 99;  // not a counter: left as stored
  counted.metrics["smsp__inst_executed.sum"] = 7;
  s.add_figures(id, counted, db::EvaluationField::Kind::Counter);
  const auto got = s.find(ids, "1");
  ASSERT_TRUE(got);
  EXPECT_EQ(*got->store_sectors, 128);
  EXPECT_EQ(*got->time_ms, 0.5);
  EXPECT_EQ(got->metrics.at("GB/s"), 8);
  EXPECT_EQ(got->metrics.at("smsp__inst_executed.sum"), 7);
  EXPECT_THROW(s.add_figures(id + 1, counted, db::EvaluationField::Kind::Counter), Error);
  // The device's measured roofs are kept by a later upsert that does not know them.
  db::DeviceInfo plain;
  plain.name = d.name;
  s.upsert_device(plain);
  for (const auto& row : s.devices()) {
    if (row.info.name == d.name) {
      EXPECT_EQ(row.info.copy_gbs, 3000);
    }
  }
  // Stored rows find their device's roofs by name (results, compare, report).
  counted.dram_read_bytes = 1e6;
  counted.dram_write_bytes = 1e6;
  s.add_figures(id, counted, db::EvaluationField::Kind::Counter);
  const db::Roofs roofs(s);
  const auto rows = s.results({});
  ASSERT_EQ(rows.size(), 1u);
  const auto r = roofs.of(rows[0]);
  ASSERT_TRUE(r);
  EXPECT_NEAR(r->dram_gbs, 2e6 / 0.5e6, 1e-9);
  EXPECT_EQ(r->bound, "memory");
  db::ResultRow elsewhere = rows[0];
  elsewhere.device = "a GPU never measured";
  ASSERT_TRUE(roofs.of(elsewhere));
  EXPECT_EQ(roofs.of(elsewhere)->bound, "");  // no roofs known there
}

const char* kEnergySpec = R"(
kernel: {name: k, source: k.cu}
problem_size: [1024]
tune_params: {block_size_x: [32, 64]}
metrics:
  GB/s: 4096 / (time_ms * 1e6)
  J/GB: energy_j / (4096 / 1e9)
objective: energy
)";

TEST(Energy, ObjectiveEnergyRanksByJoulesAndMetricsUseEnergy) {
  const Spec s = load_spec_text(kEnergySpec, "energy.yaml", Spec::Format::Yaml);
  EXPECT_TRUE(s.needs_energy());
  db::Evaluation fast, frugal, unmeasured;
  fast.config = {Value(32)};
  fast.time_ms = 1;
  fast.energy_j = 0.3;
  frugal.config = {Value(64)};
  frugal.time_ms = 2;
  frugal.energy_j = 0.2;
  unmeasured.config = {Value(64)};
  unmeasured.time_ms = 0.5;
  EXPECT_EQ(*objective_of(s, fast), 0.3);
  EXPECT_FALSE(objective_of(s, unmeasured));  // no energy: no objective
  const std::vector<db::Evaluation> evals = {fast, frugal, unmeasured};  // rank_results points into it
  const auto ranked = rank_results(s, evals);
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_EQ(*ranked[0]->energy_j, 0.2);
  const auto m = s.evaluate_metrics(fast.config, 1, 0.3);
  ASSERT_TRUE(m[1]);
  EXPECT_NEAR(*m[1], 0.3 / (4096 / 1e9), 1e-6);
  EXPECT_FALSE(s.evaluate_metrics(fast.config, 1)[1]);  // absent without energy
}

TEST(Energy, TimeSpecsNeedNoEnergyAndObjectiveCanBeChosen) {
  std::string text = kEnergySpec;
  text.replace(text.find("objective: energy"), 17, "objective: time");
  Spec s = load_spec_text(text, "time.yaml", Spec::Format::Yaml);
  EXPECT_TRUE(s.needs_energy());  // the J/GB metric uses energy_j
  text.replace(text.find("  J/GB"), text.find("objective") - text.find("  J/GB"), "");
  Spec t = load_spec_text(text, "time.yaml", Spec::Format::Yaml);
  EXPECT_FALSE(t.needs_energy());
  t.set_objective("energy");
  EXPECT_TRUE(t.needs_energy());
  t.set_objective("GB/s");
  EXPECT_EQ(t.objective, "GB/s");
  // The library names its input, not the command line's option.
  const Error e = testing::error_of([&] { t.set_objective("watts"); });
  EXPECT_EQ(e.message().rfind("objective: 'watts' is neither", 0), 0u) << e.what();
}

TEST(Energy, EnergyJIsReservedForMetrics) {
  std::string text = kEnergySpec;
  text.replace(text.find("block_size_x: [32, 64]"), 22, "energy_j: [1, 2]");
  EXPECT_THROW(load_spec_text(text, "bad.yaml", Spec::Format::Yaml), Error);
}

TEST(Counters, ProfiledJobsAndTheirResultsCrossTheWire) {
  gpu::Job job;
  job.profile = true;
  job.metrics = {"dram__bytes_read.sum", "smsp__inst_executed.sum"};
  job.measure_options.energy_ms = 750;
  const gpu::Job back = gpu::decode_job(gpu::encode(job));
  EXPECT_TRUE(back.profile);
  EXPECT_EQ(back.metrics, job.metrics);
  EXPECT_EQ(back.measure_options.energy_ms, 750);
  gpu::Result r;
  r.counter_metrics = job.metrics;
  r.counter_values = {1e6, 42};
  r.counters_note = "metrics this GPU does not have: x";
  r.profile_ms = 230;
  r.timing.energy_j = 0.001;
  r.timing.power_w = 400;
  r.timing.energy_window_ms = 800;
  bool exits = true;
  const gpu::Result got = gpu::decode_result(gpu::encode(r, false), &exits);
  EXPECT_FALSE(exits);
  EXPECT_EQ(got.counter_values, r.counter_values);
  EXPECT_EQ(got.counter_metrics, r.counter_metrics);
  EXPECT_EQ(got.counters_note, r.counters_note);
  EXPECT_EQ(got.timing.energy_j, 0.001);
  EXPECT_EQ(got.timing.power_w, 400);
}

}  // namespace
}  // namespace ktune
