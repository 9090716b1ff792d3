// The bottleneck verdict: which unit limits a kernel, from its metrics and its roofline position.
#include "forgek/knowledge/bottleneck.h"

#include <algorithm>
#include <cstdio>

namespace forgek {
namespace {

// Looks a metric up; -1 when it was not collected.
double Metric(const std::map<std::string, double>& metrics, const char* name) {
  auto it = metrics.find(name);
  return it == metrics.end() ? -1.0 : it->second;
}

std::string Percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", v);
  return buf;
}

}  // namespace

const char* BottleneckName(Bottleneck b) {
  switch (b) {
    case Bottleneck::memory: return "memory";
    case Bottleneck::compute: return "compute";
    case Bottleneck::latency: return "latency";
    case Bottleneck::occupancy: return "occupancy";
  }
  return "latency";
}

BottleneckVerdict JudgeBottleneck(const BottleneckInputs& in) {
  BottleneckVerdict v;
  const double seconds = in.time_us * 1e-6;

  // Memory side: what the counters saw, and what the operator's minimum bytes imply.
  const double dram_pct = Metric(in.metrics, "dram__throughput.avg.pct_of_peak_sustained_elapsed");
  if (dram_pct >= 0) {
    v.memory_pct = dram_pct;
    v.reasons.push_back("DRAM throughput " + Percent(dram_pct) + " of peak");
  }
  if (in.bytes > 0 && seconds > 0 && in.peak_bandwidth > 0) {
    const double roofline = 100.0 * in.bytes / seconds / in.peak_bandwidth;
    v.memory_pct = std::max(v.memory_pct, roofline);
    v.reasons.push_back("achieved bandwidth " + Percent(roofline) + " of peak (minimum bytes / time)");
  }

  // Compute side: the SM as a whole, the tensor pipe, and the operator's FLOPs.
  const double sm_pct = Metric(in.metrics, "sm__throughput.avg.pct_of_peak_sustained_elapsed");
  if (sm_pct >= 0) {
    v.compute_pct = sm_pct;
    v.reasons.push_back("SM throughput " + Percent(sm_pct) + " of peak");
  }
  const double tensor_pct =
      Metric(in.metrics, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active");
  if (tensor_pct > 0) {
    v.compute_pct = std::max(v.compute_pct, tensor_pct);
    v.reasons.push_back("tensor pipe active " + Percent(tensor_pct) + " of active cycles");
  }
  if (in.flops > 0 && seconds > 0 && in.peak_flops > 0) {
    const double roofline = 100.0 * in.flops / seconds / in.peak_flops;
    v.compute_pct = std::max(v.compute_pct, roofline);
    v.reasons.push_back("achieved FLOP rate " + Percent(roofline) + " of peak");
  }

  v.warps_active_pct = Metric(in.metrics, "sm__warps_active.avg.pct_of_peak_sustained_active");
  const double hits = Metric(in.metrics, "lts__t_sectors_lookup_hit.sum");
  const double misses = Metric(in.metrics, "lts__t_sectors_lookup_miss.sum");
  if (hits >= 0 && misses >= 0 && hits + misses > 0) {
    // From the sector counts: lts__t_sector_hit_rate.pct reads above 100% on small kernels.
    v.l2_hit_pct = 100.0 * hits / (hits + misses);
    v.reasons.push_back("L2 hit rate " + Percent(v.l2_hit_pct));
  }

  const double busiest = std::max(v.memory_pct, v.compute_pct);
  if (busiest >= kBoundThresholdPct) {
    v.kind = v.memory_pct >= v.compute_pct ? Bottleneck::memory : Bottleneck::compute;
    v.reasons.push_back(std::string(BottleneckName(v.kind)) + " runs at " + Percent(busiest) +
                        " of peak (>= " + Percent(kBoundThresholdPct) + ")");
    return v;
  }
  if (in.blocks > 0 && in.sm_count > 0 && in.blocks < in.sm_count) {
    v.kind = Bottleneck::occupancy;
    v.reasons.push_back("the grid has " + std::to_string(in.blocks) + " blocks for " +
                        std::to_string(in.sm_count) + " SMs");
    return v;
  }
  if (v.warps_active_pct >= 0 && v.warps_active_pct < kLowOccupancyPct) {
    v.kind = Bottleneck::occupancy;
    v.reasons.push_back("only " + Percent(v.warps_active_pct) + " of warp slots active (< " +
                        Percent(kLowOccupancyPct) + ")");
    return v;
  }
  v.kind = Bottleneck::latency;
  std::string why = "neither memory nor compute reaches " + Percent(kBoundThresholdPct);
  if (v.warps_active_pct >= 0) why += " with " + Percent(v.warps_active_pct) + " of warp slots active";
  v.reasons.push_back(why);
  return v;
}

}  // namespace forgek
