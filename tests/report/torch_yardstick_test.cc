// PyTorch beside a kernel: speedups, JSON and the text line, with modes measured or not.
#include "forgek/report/torch_yardstick.h"

#include <gtest/gtest.h>

#include "forgek/knowledge/store.h"
#include "forgek/report/report.h"
#include "report/report_fixture.h"
#include "test_util.h"

namespace forgek {
namespace {

TimingStats Stats(double median_us, double noise) {
  TimingStats s;
  s.median_us = median_us;
  s.p10_us = median_us * (1 - noise);
  s.p90_us = median_us * (1 + noise);
  s.rel_noise = noise;
  s.samples = 40;
  return s;
}

TEST(TorchYardstick, SpeedupIsTorchOverKernelAndZeroWhenUnknown) {
  EXPECT_DOUBLE_EQ(SpeedupOverTorch(Stats(30, 0.01), 20), 1.5);
  EXPECT_DOUBLE_EQ(SpeedupOverTorch(Stats(30, 0.01), 0), 0);
  EXPECT_DOUBLE_EQ(SpeedupOverTorch(TimingStats{}, 20), 0);
}

TEST(TorchYardstick, JsonHasBothModesAndTheirSpeedups) {
  TorchYardstick t;
  t.eager = Stats(40, 0.02);
  t.compiled = Stats(25, 0.01);
  t.device = "cuda";
  t.torch_version = "2.5.1";
  nlohmann::json j = TorchYardstickJson(t, 20);
  EXPECT_EQ(j["device"], "cuda");
  EXPECT_EQ(j["torch_version"], "2.5.1");
  EXPECT_DOUBLE_EQ(j["eager"]["median_us"].get<double>(), 40);
  EXPECT_EQ(j["eager"]["samples"].get<int>(), 40);
  EXPECT_DOUBLE_EQ(j["compile"]["rel_noise"].get<double>(), 0.01);
  EXPECT_DOUBLE_EQ(j["speedup_vs_eager"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["speedup_vs_compile"].get<double>(), 1.25);
}

TEST(TorchYardstick, AModeThatDidNotRunSaysWhyAndHasNoSpeedup) {
  TorchYardstick t;
  t.eager = Stats(40, 0.02);
  t.compile_error = "torch 1.13.1 has no torch.compile";
  nlohmann::json j = TorchYardstickJson(t, 20);
  EXPECT_EQ(j["compile"], nlohmann::json({{"error", "torch 1.13.1 has no torch.compile"}}));
  EXPECT_FALSE(j.contains("speedup_vs_compile"));
  EXPECT_EQ(TorchYardstickText(t, 20),
            "eager 40.00 us ±2.0% (2.000x), torch.compile: torch 1.13.1 has no torch.compile");
  TorchYardstick none;
  EXPECT_EQ(TorchYardstickText(none, 20), "eager: not measured, torch.compile: not measured");
}

// A run's yardstick kept in its record: `forgek report` shows it beside the config, from that run;
// a comparison file given to `report --torch` replaces it rather than clashing.
TEST(TorchYardstick, TheReportShowsTheNewestRunsYardstickAndAFileReplacesIt) {
  using namespace report_fixture;
  TempDir dir;
  Store store;
  std::string err, run;
  ASSERT_TRUE(store.Open(dir.file("store.db"), &err)) << err;
  ASSERT_TRUE(report_fixture::Run(store, kSoftmax, "reference", "builtin", "2026-12-01T10:00:00Z", &run, &err)) << err;
  ASSERT_TRUE(Attempt(store, run, 0, kSoftmax, Outcome::faster, {Measure("small", 8, 10, 0.02, 35)}, &err)) << err;
  TorchYardstick t;
  t.eager = Stats(40, 0.02);
  t.compile_error = "torch 1.13.1 has no torch.compile";
  nlohmann::json row = TorchYardstickJson(t, 10);
  row["config"] = "small";
  row["kernel"] = "incumbent";
  row["kernel_us"] = 10;
  ASSERT_TRUE(store.FinishRun(run, "finished",
                              nlohmann::json{{"seal", ""}, {"seal_reason", "not sealed"}, {"torch", {row}}}.dump(),
                              &err))
      << err;
  Report r;
  ASSERT_TRUE(BuildReport(store, {"", ""}, Specs(), &r, &err)) << err;
  const ConfigRow* small = nullptr;
  for (const ConfigRow& c : r.configs)
    if (c.op == kSoftmax && c.config == "small") small = &c;
  ASSERT_NE(small, nullptr);
  ASSERT_TRUE(small->torch.has_value());
  EXPECT_TRUE(small->torch->from_run);
  EXPECT_EQ(small->torch->file, "run " + run.substr(0, 12));
  EXPECT_DOUBLE_EQ(small->torch->numbers.eager_us, 40);
  EXPECT_DOUBLE_EQ(small->torch->numbers.speedup_vs_eager, 4);
  EXPECT_NE(small->torch->numbers.note.find("beside the incumbent"), std::string::npos) << small->torch->numbers.note;

  TorchComparison file;
  file.source.file = "compare.json";
  TorchOperator op;
  op.op = kSoftmax;
  TorchConfig c;
  c.config = "small";
  c.eager_us = 33;
  op.configs = {c};
  file.operators = {op};
  ASSERT_TRUE(AttachTorchComparisons({file}, &r, &err)) << err;
  for (const ConfigRow& c2 : r.configs)
    if (c2.op == kSoftmax && c2.config == "small") {
      EXPECT_FALSE(c2.torch->from_run);
      EXPECT_DOUBLE_EQ(c2.torch->numbers.eager_us, 33);
    }
}

}  // namespace
}  // namespace forgek
