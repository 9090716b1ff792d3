// DevicePeaks: the bandwidth and per-type accessors and the one JSON form of a device's peaks.
#include "forgek/core/peaks.h"

#include <algorithm>
#include <utility>

namespace forgek {

namespace {

using json = nlohmann::json;

// Every numeric peak (and the launch floor) with the key it has in the worker protocol, the store and the datasheets.
const std::vector<std::pair<const char*, double DevicePeaks::*>>& NumericFields() {
  static const std::vector<std::pair<const char*, double DevicePeaks::*>> fields = {
      {"dram_gbps", &DevicePeaks::dram_gbps},     {"copy_kernel_gbps", &DevicePeaks::copy_kernel_gbps},
      {"memcpy_gbps", &DevicePeaks::memcpy_gbps}, {"fp4_tflops", &DevicePeaks::fp4_tflops},
      {"fp8_tflops", &DevicePeaks::fp8_tflops},   {"fp16_tflops", &DevicePeaks::fp16_tflops},
      {"bf16_tflops", &DevicePeaks::bf16_tflops}, {"tf32_tflops", &DevicePeaks::tf32_tflops},
      {"fp32_tflops", &DevicePeaks::fp32_tflops}, {"fp64_tflops", &DevicePeaks::fp64_tflops},
      {"launch_floor_us", &DevicePeaks::launch_floor_us}};
  return fields;
}

}  // namespace

double DevicePeaks::BandwidthGbps() const {
  double measured = std::max(copy_kernel_gbps, memcpy_gbps);
  return measured > 0 ? measured : dram_gbps;
}

double DevicePeaks::TflopsFor(DType t) const {
  switch (t) {
    case DType::bf16: return bf16_tflops;
    case DType::f16: return fp16_tflops;
    case DType::e4m3:
    case DType::e5m2:
    case DType::i8:
    case DType::u8: return fp8_tflops;
    default: return tf32_tflops;  // f32, f64 and wider integers: the loosest tensor-core bound
  }
}

double DevicePeaks::ByKey(const std::string& key) const {
  for (const auto& [name, field] : NumericFields())
    if (key == name) return this->*field;
  return 0;
}

void DevicePeaks::OverlayKnown(const DevicePeaks& measured) {
  for (const auto& [name, field] : NumericFields())
    if (measured.*field > 0) this->*field = measured.*field;
}

json ToJson(const DevicePeaks& p) {
  json j = json::object();
  for (const auto& [name, field] : NumericFields())
    if (p.*field > 0) j[name] = p.*field;
  if (p.BandwidthGbps() > 0) j["dram_gbps"] = p.BandwidthGbps();  // the stores' name for the bandwidth peak
  if (!p.device.empty()) j["device"] = p.device;
  if (!p.source.empty()) j["source"] = p.source;
  return j;
}

bool FromJson(const json& j, DevicePeaks* out, std::string* err, std::vector<std::string>* unknown) {
  if (!j.is_object()) return *err = "peaks: expected an object", false;
  DevicePeaks p;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (key == "device" || key == "source") {
      if (!it->is_string()) return *err = key + ": expected a string", false;
      (key == "device" ? p.device : p.source) = it->get<std::string>();
      continue;
    }
    bool known = false;
    for (const auto& [name, field] : NumericFields()) {
      if (key != name) continue;
      if (!it->is_number()) return *err = key + ": peak must be a number", false;
      p.*field = it->get<double>();
      known = true;
    }
    if (!known && unknown) unknown->push_back(key);
  }
  *out = p;
  return true;
}

}  // namespace forgek
