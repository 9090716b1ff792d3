// What the GPU shows about a kernel: CUPTI activity records and range-profiler metrics.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace forgek {

// One kernel launch as CUPTI's activity API records it (library kernels included).
struct KernelLaunchRecord {
  std::string name;            // demangled where CUPTI gives it so
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  int64_t cluster[3] = {0, 0, 0};  // 0: launched without a cluster
  int registers_per_thread = 0;
  int64_t static_smem_bytes = 0;
  int64_t dynamic_smem_bytes = 0;
  int64_t local_memory_per_thread = 0;
  double duration_us = 0;
};

// Everything measured about one kernel (or library call) on one config.
struct KernelProfile {
  std::string label;    // "reference", a candidate name, a seal id
  std::string config;   // config name
  std::vector<KernelLaunchRecord> launches;   // every launch of one call, in order
  std::map<std::string, double> metrics;      // range-profiler metric name -> value
  std::string sass;     // disassembly text of our own cubins when available (else "")
  double time_us = 0;   // median time of the whole call, from the timing run
  double flops = 0, bytes = 0;  // from the operator's formulas for this config
  // Wall seconds the GPU machine spent on this profile (timing, trace, counter replay); 0 when not
  // measured. A run reads it to fit its own end into --time.
  double wall_s = 0;
};

}  // namespace forgek
