// Launch-shape and kernel-name observations: warpgroups, cluster, smem stages, registers, persistence.
#include <algorithm>
#include <cstdio>

#include "analysis_internal.h"

namespace forgek::analysis {

namespace {

// Per-SM limits shared by sm90 and sm100.
constexpr int64_t kRegistersPerSm = 65536;
constexpr int64_t kSmemPerSm = 233472;  // 228 KiB
constexpr int kMaxThreadsPerSm = 2048;

std::string TensorMechanism(const std::string& arch) { return arch == "sm100" ? "tcgen05_mma" : "wgmma"; }

}  // namespace

void ObservationSink::Add(const std::string& kind, const std::string& key, const std::string& value, double number,
                          const std::string& mechanism, const std::string& evidence) {
  Observation o;
  o.operator_name = operator_name_;
  o.arch = arch_;
  o.subject = profile_.label.empty() ? "reference" : profile_.label;
  o.config = profile_.config;
  o.kind = kind;
  o.key = key;
  o.value = value;
  o.number = number;
  o.mechanism = mechanism;
  o.evidence = evidence;
  out_->push_back(std::move(o));
}

std::string Dims(const int64_t v[3]) {
  return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
}

std::string Num(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

const KernelLaunchRecord* DominantLaunch(const KernelProfile& p) {
  const KernelLaunchRecord* best = nullptr;
  for (const auto& l : p.launches)
    if (!best || l.duration_us > best->duration_us) best = &l;
  return best;
}

void AnalyzeLaunch(const KernelProfile& p, const HardwareSpec* hw, ObservationSink* sink) {
  const KernelLaunchRecord* l = DominantLaunch(p);
  if (!l) return;
  if (p.launches.size() > 1)
    sink->Add("launch", "launches", std::to_string(p.launches.size()), static_cast<double>(p.launches.size()),
              p.launches.size() == 2 ? "split_k" : "",
              std::to_string(p.launches.size()) + " kernels per call (a reduction or fix-up pass?)");
  sink->Add("launch", "kernel", l->name, l->duration_us, "", "dominant kernel of the call");
  int64_t blocks = l->grid[0] * l->grid[1] * l->grid[2];
  int64_t threads = l->block[0] * l->block[1] * l->block[2];
  sink->Add("launch", "grid", Dims(l->grid), static_cast<double>(blocks), "", std::to_string(blocks) + " blocks");
  sink->Add("launch", "block", Dims(l->block), static_cast<double>(threads), "", std::to_string(threads) + " threads");
  if (threads % 128 == 0) {
    int64_t wg = threads / 128;
    // A thread count says nothing about roles: a plain 1024-thread CTA has 8 warpgroups and no
    // specialisation. Roles show in the name (schedule field) or the SASS (setmaxnreg), not here.
    sink->Add("launch", "warpgroups", std::to_string(wg), static_cast<double>(wg), "",
              std::to_string(wg) + " warpgroup(s) of threads");
  }
  int64_t cluster = std::max<int64_t>(1, l->cluster[0]) * std::max<int64_t>(1, l->cluster[1]) *
                    std::max<int64_t>(1, l->cluster[2]);
  if (l->cluster[0] > 0) {
    sink->Add("launch", "cluster", Dims(l->cluster), static_cast<double>(cluster),
              cluster > 1 ? "thread_block_cluster" : "", "launch cluster (grid coordinates)");
  }
  // Register reallocation shows only in the SASS (USETMAXREG); a high count at launch is not it.
  sink->Add("launch", "registers", std::to_string(l->registers_per_thread), l->registers_per_thread, "",
            "registers per thread at launch");
  int64_t smem = l->static_smem_bytes + l->dynamic_smem_bytes;
  sink->Add("launch", "smem", std::to_string(smem), static_cast<double>(smem), "",
            std::to_string(l->dynamic_smem_bytes) + " B dynamic + " + std::to_string(l->static_smem_bytes) +
                " B static shared memory per block");
  if (l->local_memory_per_thread > 0)
    sink->Add("launch", "local_memory", std::to_string(l->local_memory_per_thread),
              static_cast<double>(l->local_memory_per_thread), "", "local memory per thread: register spills?");

  // Stage estimate: the name's tile tells the bytes of one stage (A and B tiles, 16-bit inputs).
  KernelNameFields f;
  if (DecodeKernelName(l->name, &f) && f.tile_m > 0 && f.tile_n > 0 && f.tile_k > 0 && smem > 0) {
    int bytes = f.dtype.find("e4m3") != std::string::npos || f.dtype.find("fp8") != std::string::npos ? 1 : 2;
    int64_t stage = static_cast<int64_t>(f.tile_m + f.tile_n) * f.tile_k * bytes;
    int64_t stages = smem / stage;
    sink->Add("launch", "stages_from_smem", std::to_string(stages), static_cast<double>(stages), "mbarrier_pipeline",
              std::to_string(smem) + " B smem / " + std::to_string(stage) + " B per (" + std::to_string(f.tile_m) +
                  "+" + std::to_string(f.tile_n) + ")x" + std::to_string(f.tile_k) + " stage");
  }

  // Occupancy limit from the launch shape alone.
  if (threads > 0) {
    int64_t by_threads = kMaxThreadsPerSm / threads;
    int64_t by_regs = l->registers_per_thread > 0 ? kRegistersPerSm / (l->registers_per_thread * threads) : by_threads;
    int64_t by_smem = smem > 0 ? kSmemPerSm / smem : by_threads;
    int64_t per_sm = std::min({by_threads, by_regs, by_smem});
    sink->Add("launch", "blocks_per_sm", std::to_string(per_sm), static_cast<double>(per_sm), "",
              "limited by " + std::string(per_sm == by_smem ? "shared memory" : per_sm == by_regs ? "registers" : "threads"));
    if (hw && hw->sm_count > 0 && per_sm >= 1) {
      bool persistent = blocks <= hw->sm_count * per_sm && blocks * 2 > hw->sm_count * per_sm;
      if (persistent)
        sink->Add("launch", "persistent", "yes", static_cast<double>(blocks), "persistent_grid",
                  std::to_string(blocks) + " blocks fill " + std::to_string(hw->sm_count) + " SMs x " +
                      std::to_string(per_sm) + " exactly once: tiles are looped over");
    }
  }
  AnalyzeName(*l, sink);
}

void AnalyzeName(const KernelLaunchRecord& launch, ObservationSink* sink) {
  KernelNameFields f;
  if (!DecodeKernelName(launch.name, &f)) return;
  std::string src = "kernel name " + launch.name;
  std::string tensor = f.arch == "sm90" || f.arch == "sm100" ? TensorMechanism(f.arch) : "";
  sink->Add("name", "library", f.library, 0, "", src);
  sink->Add("name", "tile", std::to_string(f.tile_m) + "x" + std::to_string(f.tile_n), f.tile_m * f.tile_n, tensor,
            src + ": CTA tile M x N");
  if (f.tile_k > 0)
    sink->Add("name", "k_step", std::to_string(f.tile_k), f.tile_k, "mbarrier_pipeline", src + ": k per stage");
  if (f.stages > 0)
    sink->Add("name", "stages", std::to_string(f.stages), f.stages, "mbarrier_pipeline", src + ": smem stages");
  if (f.cluster_m > 0) {
    int size = f.cluster_m * f.cluster_n * std::max(1, f.cluster_k);
    sink->Add("name", "cluster", std::to_string(f.cluster_m) + "x" + std::to_string(f.cluster_n), size,
              size > 1 ? "thread_block_cluster" : "", src + ": cluster in tile space (M x N)");
    if (size > 1 && f.tma)
      sink->Add("name", "multicast", "likely", size, "tma_multicast",
                src + ": TMA with a cluster of " + std::to_string(size) + " shares operand loads");
  }
  if (!f.schedule.empty())
    sink->Add("name", "schedule", f.schedule, 0, "warp_specialization", src + ": " + f.schedule + " schedule");
  if (f.tma) sink->Add("name", "tma", "yes", 1, "tma", src + ": TMA path");
  if (!f.layout.empty()) sink->Add("name", "layout", f.layout, 0, "", src + ": operand layouts");
  if (!f.dtype.empty()) sink->Add("name", "dtype", f.dtype, 0, "", src + ": data types");
}

}  // namespace forgek::analysis
