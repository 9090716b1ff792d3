// Calibrated peaks in the store: conversions between the worker's DevicePeaks and the device record.
#include "forgek/calibration.h"

#include <spdlog/spdlog.h>

#include "run/driver_version.h"

namespace forgek {

DeviceRecord DeviceFromProbe(const ProbeResult& probe, const std::string& arch, const DevicePeaks& peaks) {
  DeviceRecord d;
  if (!probe.devices.empty()) {
    const DeviceInfo& info = probe.devices.front();
    d.name = info.name;
    d.sm_count = info.sms;
    d.l2_bytes = info.l2_bytes;
    d.memory_bytes = info.memory_bytes;
  }
  d.arch = arch;
  d.driver = DriverDescription(probe.driver_version);
  d.peaks = {{"dram_gbps", peaks.BandwidthGbps()},   {"copy_kernel_gbps", peaks.copy_kernel_gbps},
             {"memcpy_gbps", peaks.memcpy_gbps},      {"bf16_tflops", peaks.bf16_tflops},
             {"fp16_tflops", peaks.fp16_tflops},      {"fp8_tflops", peaks.fp8_tflops},
             {"tf32_tflops", peaks.tf32_tflops}};
  d.calibrated = peaks.source == "calibrated";
  d.calibrated_at = d.calibrated ? NowIso8601() : "";
  return d;
}

bool PeaksFromDevice(const DeviceRecord& d, DevicePeaks* out) {
  if (!d.calibrated) return false;
  auto get = [&](const char* key) {
    auto it = d.peaks.find(key);
    return it == d.peaks.end() ? 0.0 : it->second;
  };
  out->copy_kernel_gbps = get("copy_kernel_gbps");
  out->memcpy_gbps = get("memcpy_gbps");
  out->bf16_tflops = get("bf16_tflops");
  out->fp16_tflops = get("fp16_tflops");
  out->fp8_tflops = get("fp8_tflops");
  out->tf32_tflops = get("tf32_tflops");
  out->device = d.name;
  out->source = "calibrated";
  return out->valid() && out->bf16_tflops > 0;
}

bool StoredPeaks(Store& store, const std::string& device, const std::string& arch, DevicePeaks* out) {
  DeviceRecord rec;
  bool found = false;
  std::string err;
  if (!store.FindDevice(device, arch, &rec, &found, &err) || !found || !PeaksFromDevice(rec, out)) return false;
  spdlog::debug("peaks of {} from the store (calibrated {})", device, rec.calibrated_at);
  return true;
}

void StorePeaks(Store& store, const ProbeResult& probe, const std::string& arch, const DevicePeaks& peaks) {
  std::string err;
  if (!store.UpsertDevice(DeviceFromProbe(probe, arch, peaks), &err))
    spdlog::warn("calibrated peaks not stored: {}", err);
}

}  // namespace forgek
