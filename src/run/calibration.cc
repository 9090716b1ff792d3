// Calibrated peaks in the store: the worker's measured DevicePeaks in and out of the device record.
#include "forgek/run/calibration.h"

#include <spdlog/spdlog.h>

#include "forgek/run/driver_version.h"

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
  d.peaks = peaks;
  d.peaks.dram_gbps = peaks.BandwidthGbps();
  d.peaks.device.clear();  // the record's name and calibrated flag say these
  d.peaks.source.clear();
  d.calibrated = peaks.source == "calibrated";
  d.calibrated_at = d.calibrated ? NowIso8601() : "";
  return d;
}

bool PeaksFromDevice(const DeviceRecord& d, DevicePeaks* out) {
  if (!d.calibrated) return false;
  *out = d.peaks;
  out->device = d.name;
  out->source = "calibrated";
  // A calibration from before forgek measured the launch floor is taken again, once.
  return out->valid() && out->bf16_tflops > 0 && out->launch_floor_us > 0;
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
