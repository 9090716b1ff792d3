// A device's peaks (speed-of-light denominators): datasheet, calibrated or both, with their JSON form.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "forgek/core/operator_spec.h"

namespace forgek {

// One type for every place a device's ceilings live: the worker's calibrate reply, the shipped
// datasheets (knowledge/hardware/*.json "peaks") and the store's devices.peaks_json. Bandwidths
// count read + write bytes; 0 means unknown.
struct DevicePeaks {
  double dram_gbps = 0;         // datasheet DRAM bandwidth, or the measured one as stored
  double copy_kernel_gbps = 0;  // measured: float4 grid-stride copy kernel
  double memcpy_gbps = 0;       // measured: cudaMemcpyAsync device to device
  double fp4_tflops = 0, fp8_tflops = 0, fp16_tflops = 0, bf16_tflops = 0;  // dense tensor-core GEMM
  double tf32_tflops = 0;
  double fp32_tflops = 0, fp64_tflops = 0;  // CUDA cores (datasheet)
  // Measured: the time of one empty kernel launch, timed as the worker times a short kernel (a
  // CUDA graph of launches after an L2 flush, events around it, per launch). No kernel can take
  // less, so a config's bound is the longer of its roofline time and this floor.
  double launch_floor_us = 0;
  std::string device;  // the device name they were measured on
  std::string source;  // "calibrated" or where else they came from

  bool valid() const { return BandwidthGbps() > 0; }
  // The measured bandwidth (the larger of the two copies) when there is one, else dram_gbps.
  double BandwidthGbps() const;
  // The dense tensor peak that bounds arithmetic in `t` (fp32 maps to tf32, the fastest path an
  // fp32 kernel can take; integer types to fp8's rate): a lower bound on time, never too strict.
  double TflopsFor(DType t) const;
  // The peak stored under JSON key `key` ("bf16_tflops", "dram_gbps", ...); 0 for an unknown key.
  double ByKey(const std::string& key) const;
  // Replaces every peak that `measured` knows (> 0) and keeps the others (datasheet under calibration).
  void OverlayKnown(const DevicePeaks& measured);
};

// {"dram_gbps": BandwidthGbps(), "<peak>": value for every known peak, "device", "source" when set}.
nlohmann::json ToJson(const DevicePeaks& p);
// Reads the keys above; a peak that is not a number fails with its key in `err`. Other keys are
// left alone (the calibrate reply carries "ok"); they go to `unknown` when it is given.
bool FromJson(const nlohmann::json& j, DevicePeaks* out, std::string* err,
              std::vector<std::string>* unknown = nullptr);

}  // namespace forgek
