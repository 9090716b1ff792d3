// Calibrated peaks through the store: measured once, found again for the same device and arch.
#include <gtest/gtest.h>

#include "forgek/run/calibration.h"
#include "test_util.h"

namespace forgek {
namespace {

ProbeResult H200Probe() {
  ProbeResult p;
  p.ok = true;
  p.driver_version = 13000;
  DeviceInfo d;
  d.name = "NVIDIA H200";
  d.cc = "9.0";
  d.sms = 132;
  d.l2_bytes = 60 << 20;
  p.devices.push_back(d);
  return p;
}

DevicePeaks Measured() {
  DevicePeaks k;
  k.copy_kernel_gbps = 4100;
  k.memcpy_gbps = 3900;
  k.bf16_tflops = 720;
  k.fp16_tflops = 730;
  k.fp8_tflops = 1300;
  k.tf32_tflops = 360;
  k.launch_floor_us = 2.1;
  k.device = "NVIDIA H200";
  k.source = "calibrated";
  return k;
}

TEST(Calibration, StoredPeaksAreFoundForTheSameDeviceAndArchOnly) {
  TempDir tmp;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(tmp.file("store.db"), &err)) << err;
  DevicePeaks got;
  EXPECT_FALSE(StoredPeaks(store, "NVIDIA H200", "sm90", &got)) << "nothing calibrated yet";
  StorePeaks(store, H200Probe(), "sm90", Measured());
  ASSERT_TRUE(StoredPeaks(store, "NVIDIA H200", "sm90", &got));
  EXPECT_DOUBLE_EQ(got.copy_kernel_gbps, 4100);
  EXPECT_DOUBLE_EQ(got.memcpy_gbps, 3900);
  EXPECT_DOUBLE_EQ(got.bf16_tflops, 720);
  EXPECT_DOUBLE_EQ(got.fp8_tflops, 1300);
  EXPECT_DOUBLE_EQ(got.tf32_tflops, 360);
  EXPECT_DOUBLE_EQ(got.launch_floor_us, 2.1);
  EXPECT_EQ(got.source, "calibrated");
  EXPECT_FALSE(StoredPeaks(store, "NVIDIA H100", "sm90", &got));
}

TEST(Calibration, ACalibrationWithoutTheLaunchFloorIsTakenAgain) {
  TempDir tmp;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(tmp.file("store.db"), &err)) << err;
  DevicePeaks before_the_floor = Measured();
  before_the_floor.launch_floor_us = 0;  // what a store calibrated by an older forgek holds
  StorePeaks(store, H200Probe(), "sm90", before_the_floor);
  DevicePeaks got;
  EXPECT_FALSE(StoredPeaks(store, "NVIDIA H200", "sm90", &got)) << "the floor must be measured before peaks are reused";
  StorePeaks(store, H200Probe(), "sm90", Measured());
  ASSERT_TRUE(StoredPeaks(store, "NVIDIA H200", "sm90", &got));
  EXPECT_DOUBLE_EQ(got.launch_floor_us, 2.1);
}

TEST(Calibration, DatasheetPeaksAreNotTakenForCalibrated) {
  DevicePeaks datasheet = Measured();
  datasheet.source = "datasheet";
  DeviceRecord d = DeviceFromProbe(H200Probe(), "sm90", datasheet);
  EXPECT_FALSE(d.calibrated);
  EXPECT_EQ(d.name, "NVIDIA H200");
  EXPECT_DOUBLE_EQ(d.peaks.dram_gbps, 4100);  // the larger of the two bandwidths
  DevicePeaks back;
  EXPECT_FALSE(PeaksFromDevice(d, &back));
}

}  // namespace
}  // namespace forgek
