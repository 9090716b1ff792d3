// Metric observations: bottleneck, tensor-pipe and DRAM utilisation, occupancy, L2 hit rate, bank conflicts.
#include "analysis_internal.h"

namespace forgek::analysis {

namespace {

// A unit busier than this is what limits the kernel.
constexpr double kBusyPct = 60;

bool Get(const KernelProfile& p, const char* name, double* v) {
  auto it = p.metrics.find(name);
  if (it == p.metrics.end()) return false;
  *v = it->second;
  return true;
}

}  // namespace

void AnalyzeMetrics(const KernelProfile& p, ObservationSink* sink) {
  if (p.metrics.empty()) return;
  std::string tensor_mech = sink->arch() == "sm100" ? "tcgen05_mma" : "wgmma";
  double tensor = -1, dram = -1, sm = -1, v = 0;
  double gmma = 0;
  bool has_gmma = Get(p, "sm__inst_executed_pipe_tensor_op_gmma.sum", &gmma);
  if (Get(p, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", &v) ||
      Get(p, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", &v)) {
    tensor = v;
    sink->Add("metric", "tensor_pipe_pct", Num(v), v, v > 0 && (has_gmma ? gmma > 0 : true) ? tensor_mech : "",
              "tensor pipe active " + Num(v) + "% of peak");
  }
  if (has_gmma)
    sink->Add("metric", "gmma_instructions", gmma > 0 ? "yes" : "no", gmma, gmma > 0 ? "wgmma" : "",
              "sm__inst_executed_pipe_tensor_op_gmma.sum = " + Num(gmma, 0));
  if (Get(p, "dram__throughput.avg.pct_of_peak_sustained_elapsed", &v)) {
    dram = v;
    sink->Add("metric", "dram_pct", Num(v), v, "", "DRAM throughput " + Num(v) + "% of peak");
  }
  if (Get(p, "sm__throughput.avg.pct_of_peak_sustained_elapsed", &v)) {
    sm = v;
    sink->Add("metric", "sm_pct", Num(v), v, "", "SM throughput " + Num(v) + "% of peak");
  }
  if (Get(p, "sm__warps_active.avg.pct_of_peak_sustained_active", &v))
    sink->Add("metric", "occupancy_pct", Num(v), v, "", "achieved occupancy " + Num(v) + "% of the warp slots");
  double hit = 0, miss = 0;
  if (Get(p, "lts__t_sectors_lookup_hit.sum", &hit) && Get(p, "lts__t_sectors_lookup_miss.sum", &miss) &&
      hit + miss > 0) {
    double rate = 100.0 * hit / (hit + miss);
    sink->Add("metric", "l2_hit_pct", Num(rate), rate, "", "L2 hit rate from sector lookups hit/(hit+miss)");
  }
  double ld = 0, st = 0;
  bool has_ld = Get(p, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", &ld);
  bool has_st = Get(p, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", &st);
  if (has_ld || has_st)
    sink->Add("metric", "bank_conflicts", Num(ld + st, 0), ld + st, "",
              "shared-memory bank conflicts: " + Num(ld, 0) + " on loads, " + Num(st, 0) + " on stores");

  std::string bottleneck;
  if (tensor >= kBusyPct && tensor >= dram)
    bottleneck = "tensor";
  else if (dram >= kBusyPct)
    bottleneck = "memory";
  else if (sm >= kBusyPct)
    bottleneck = "compute";
  else if (tensor >= 0 || dram >= 0 || sm >= 0)
    bottleneck = "latency";
  if (!bottleneck.empty())
    sink->Add("metric", "bottleneck", bottleneck, 0, "",
              "tensor " + Num(tensor) + "%, dram " + Num(dram) + "%, sm " + Num(sm) + "% (busy above " +
                  Num(kBusyPct, 0) + "%; -1: not measured)");
}

}  // namespace forgek::analysis
