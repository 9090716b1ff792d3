// DevicePeaks: the bound per dtype, the bandwidth, and the one JSON form shared by worker, store and datasheets.
#include <gtest/gtest.h>

#include "forgek/core/peaks.h"

namespace forgek {
namespace {

TEST(Peaks, PickTheBoundForTheDtype) {
  DevicePeaks p;
  EXPECT_FALSE(p.valid());
  p.copy_kernel_gbps = 3950;
  p.memcpy_gbps = 4290;
  p.bf16_tflops = 760;
  p.fp8_tflops = 1270;
  p.tf32_tflops = 400;
  EXPECT_TRUE(p.valid());
  EXPECT_DOUBLE_EQ(p.BandwidthGbps(), 4290);
  EXPECT_DOUBLE_EQ(p.TflopsFor(DType::bf16), 760);
  EXPECT_DOUBLE_EQ(p.TflopsFor(DType::e4m3), 1270);
  EXPECT_DOUBLE_EQ(p.TflopsFor(DType::f32), 400);
}

TEST(Peaks, DatasheetBandwidthWhenNothingWasMeasured) {
  DevicePeaks p;
  p.dram_gbps = 4800;
  EXPECT_TRUE(p.valid());
  EXPECT_DOUBLE_EQ(p.BandwidthGbps(), 4800);
  p.copy_kernel_gbps = 4100;
  EXPECT_DOUBLE_EQ(p.BandwidthGbps(), 4100);  // a measurement beats the datasheet
}

TEST(Peaks, JsonKeepsTheShippedKeyNames) {
  DevicePeaks p;
  p.copy_kernel_gbps = 3950;
  p.memcpy_gbps = 4290;
  p.bf16_tflops = 760;
  p.fp32_tflops = 66.9;
  p.device = "NVIDIA H200";
  p.source = "calibrated";
  nlohmann::json j = ToJson(p);
  EXPECT_DOUBLE_EQ(j.at("copy_kernel_gbps").get<double>(), 3950);
  EXPECT_DOUBLE_EQ(j.at("dram_gbps").get<double>(), 4290);  // the bandwidth under the stores' name
  EXPECT_DOUBLE_EQ(j.at("bf16_tflops").get<double>(), 760);
  EXPECT_DOUBLE_EQ(j.at("fp32_tflops").get<double>(), 66.9);
  EXPECT_FALSE(j.contains("fp8_tflops"));  // unknown peaks are left out, not written as 0
  EXPECT_EQ(j.at("device"), "NVIDIA H200");
  DevicePeaks back;
  std::string err;
  ASSERT_TRUE(FromJson(j, &back, &err)) << err;
  EXPECT_DOUBLE_EQ(back.copy_kernel_gbps, 3950);
  EXPECT_DOUBLE_EQ(back.memcpy_gbps, 4290);
  EXPECT_DOUBLE_EQ(back.dram_gbps, 4290);
  EXPECT_DOUBLE_EQ(back.fp32_tflops, 66.9);
  EXPECT_EQ(back.source, "calibrated");
}

TEST(Peaks, BadJsonNamesTheKeyAndChangesNothing) {
  DevicePeaks p;
  p.bf16_tflops = 1;
  std::string err;
  EXPECT_FALSE(FromJson(nlohmann::json{{"dram_gbps", 4800}, {"bf16_tflops", "fast"}}, &p, &err));
  EXPECT_NE(err.find("bf16_tflops"), std::string::npos);
  EXPECT_DOUBLE_EQ(p.bf16_tflops, 1);
  EXPECT_DOUBLE_EQ(p.dram_gbps, 0);
  EXPECT_FALSE(FromJson(nlohmann::json::array(), &p, &err));
  std::vector<std::string> unknown;
  ASSERT_TRUE(FromJson(nlohmann::json{{"ok", true}, {"fp8_tflops", 1270}}, &p, &err, &unknown)) << err;
  EXPECT_DOUBLE_EQ(p.fp8_tflops, 1270);
  EXPECT_EQ(unknown, std::vector<std::string>{"ok"});
}

TEST(Peaks, ByKeyAndOverlay) {
  DevicePeaks sheet;
  sheet.dram_gbps = 4800;
  sheet.fp8_tflops = 1978.9;
  sheet.fp32_tflops = 66.9;
  DevicePeaks measured;
  measured.copy_kernel_gbps = 4100;
  measured.dram_gbps = 4100;
  sheet.OverlayKnown(measured);
  EXPECT_DOUBLE_EQ(sheet.ByKey("dram_gbps"), 4100);
  EXPECT_DOUBLE_EQ(sheet.ByKey("fp8_tflops"), 1978.9);  // not measured: the datasheet stays
  EXPECT_DOUBLE_EQ(sheet.ByKey("fp32_tflops"), 66.9);
  EXPECT_DOUBLE_EQ(sheet.ByKey("no_such_tflops"), 0);
}

}  // namespace
}  // namespace forgek
