// PyTorch beside a kernel: speedups, JSON and the text line, with modes measured or not.
#include "forgek/report/torch_yardstick.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace forgek
