// What limits a kernel: memory, compute, latency or occupancy, from its metrics and roofline.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace forgek {

enum class Bottleneck { memory, compute, latency, occupancy };
const char* BottleneckName(Bottleneck b);

// What the verdict is computed from. Metric names are those of RangeProfiler::DefaultMetrics;
// missing metrics are skipped (the verdict then rests on the roofline numbers alone).
struct BottleneckInputs {
  std::map<std::string, double> metrics;
  double flops = 0;            // the operator's FLOPs for this config
  double bytes = 0;            // the operator's minimum bytes moved for this config
  double time_us = 0;          // measured time of the call
  double peak_flops = 0;       // FLOP/s the device sustains for this math (e.g. 989e12 bf16)
  double peak_bandwidth = 0;   // bytes/s of DRAM (e.g. 4.8e12)
  long long blocks = 0;        // total thread blocks launched (0: unknown)
  int sm_count = 0;            // SMs of the device (0: unknown)
};

struct BottleneckVerdict {
  Bottleneck kind = Bottleneck::latency;
  // The numbers behind it, in percent; -1 where the input was missing.
  double memory_pct = -1;      // max(DRAM throughput metric, achieved bytes / peak bandwidth)
  double compute_pct = -1;     // max(SM throughput, tensor pipe, achieved FLOPs / peak)
  double warps_active_pct = -1;
  double l2_hit_pct = -1;
  std::vector<std::string> reasons;  // one sentence per fact used, with its number
};

// A unit is "the limit" when it runs at or above this share of its peak.
inline constexpr double kBoundThresholdPct = 60.0;
// Below this share of active warps (and with nothing saturated) occupancy is the suspect.
inline constexpr double kLowOccupancyPct = 25.0;

// Pure: no CUDA. The rule, in order:
//  1. the busier of memory and compute at >= kBoundThresholdPct is the bottleneck;
//  2. otherwise a grid with fewer blocks than SMs, or active warps < kLowOccupancyPct, is occupancy;
//  3. otherwise latency (neither unit is busy although enough warps are resident).
BottleneckVerdict JudgeBottleneck(const BottleneckInputs& in);

}  // namespace forgek
