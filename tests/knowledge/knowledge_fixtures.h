// Recorded inputs shared by the knowledge tests: the H200 cuBLAS GEMM profile and a gemm operator.
#pragma once

#include "forgek/knowledge/knowledge.h"
#include "test_util.h"

namespace forgek::testing_fixtures {

// cuBLAS's bf16 8192^3 kernel on H200 as CUPTI reported it (docs/profiling.md), with metrics of the
// kind the range profiler returns for it.
inline KernelProfile CublasGemmProfile() {
  KernelProfile p;
  p.label = "reference";
  p.config = "8192^3";
  KernelLaunchRecord l;
  l.name = "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT";
  l.grid[0] = 2, l.grid[1] = 66, l.grid[2] = 1;
  l.block[0] = 384;
  l.cluster[0] = 2, l.cluster[1] = 1, l.cluster[2] = 1;
  l.registers_per_thread = 168;
  l.dynamic_smem_bytes = 188636;
  l.duration_us = 1440;
  p.launches.push_back(l);
  p.metrics = {{"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", 78.5},
               {"sm__inst_executed_pipe_tensor_op_gmma.sum", 4.2e6},
               {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 21.0},
               {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 55.0},
               {"sm__warps_active.avg.pct_of_peak_sustained_active", 18.7},
               {"lts__t_sectors_lookup_hit.sum", 9.0e8},
               {"lts__t_sectors_lookup_miss.sum", 1.0e8},
               {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", 120},
               {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", 30}};
  p.time_us = 1446;
  p.flops = 2.0 * 8192.0 * 8192.0 * 8192.0;
  p.bytes = 3.0 * 2 * 8192.0 * 8192.0;
  return p;
}

inline OperatorSpec GemmOperator() {
  OperatorSpec op;
  op.name = "gemm_bf16";
  op.category = "gemm";
  op.params = {"M", "N", "K"};
  op.configs = {{"4096^3", {{"M", 4096}, {"N", 4096}, {"K", 4096}}},
                {"8192^3", {{"M", 8192}, {"N", 8192}, {"K", 8192}}},
                {"M64_N8192_K8192", {{"M", 64}, {"N", 8192}, {"K", 8192}}},
                {"1024^3", {{"M", 1024}, {"N", 1024}, {"K", 1024}}}};
  TensorSpec a;
  a.name = "A";
  a.dtype = DType::bf16;
  op.tensors = {a};
  op.flops = "2*M*N*K";
  op.bytes = "2*M*K + 2*K*N + 2*M*N";
  return op;
}

inline KnowledgeBase ShippedKnowledge() {
  KnowledgeBase kb;
  Diagnostics d;
  LoadKnowledgeBase(SourceDir() + "/knowledge", &kb, &d);
  return kb;
}

}  // namespace forgek::testing_fixtures
