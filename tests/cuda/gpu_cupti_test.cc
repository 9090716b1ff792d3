// GPU tests of CUPTI: activity records of a cuBLAS launch and range-profiler metrics of a GEMM.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "forgek/cuda/cupti.h"
#include "forgek/cuda/library_reference.h"
#include "gpu_test_util.h"

namespace forgek {
namespace {

using gpu_test::DeviceTensors;
using gpu_test::ToBf16;
using gpu_test::Values;

// A prepared cublas.gemm_bf16 of size n^3 with its tensors.
struct PreparedGemm {
  DeviceTensors tensors;
  std::unique_ptr<LibraryReference> ref;
};

void PrepareGemm(int n, PreparedGemm* g) {
  g->tensors.Add("A", DType::bf16, {n, n}, ToBf16(Values(size_t(n) * n, 31)));
  g->tensors.Add("B", DType::bf16, {n, n}, ToBf16(Values(size_t(n) * n, 32)));
  g->tensors.AddOutput("C", DType::bf16, {n, n}, 2);
  std::string err;
  g->ref = MakeLibraryReference("cublas.gemm_bf16", &err);
  ASSERT_NE(g->ref, nullptr) << err;
  ASSERT_TRUE(g->ref->Prepare({}, g->tensors.map(), {}, &err)) << err;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST(GpuActivityCollector, RecordsACublasKernel) {
  FORGEK_SKIP_WITHOUT_GPU();
  PreparedGemm gemm;
  ASSERT_NO_FATAL_FAILURE(PrepareGemm(1024, &gemm));
  ActivityCollector collector;
  std::string err;
  ASSERT_TRUE(collector.Enable(&err)) << err;
  ActivityCollector second;
  EXPECT_FALSE(second.Enable(&err));
  EXPECT_THAT(err, ::testing::HasSubstr("another ActivityCollector"));

  ASSERT_TRUE(gemm.ref->Launch(nullptr, &err)) << err;
  std::vector<KernelLaunchRecord> records;
  ASSERT_TRUE(collector.Take(&records, &err)) << err;
  ASSERT_FALSE(records.empty());
  const KernelLaunchRecord& k = records.back();
  std::printf("cuBLAS kernel: %s grid %lldx%lldx%lld block %lldx%lldx%lld cluster %lldx%lldx%lld regs %d "
              "smem %lld+%lld local %lld %.2f us\n",
              k.name.c_str(), (long long)k.grid[0], (long long)k.grid[1], (long long)k.grid[2],
              (long long)k.block[0], (long long)k.block[1], (long long)k.block[2], (long long)k.cluster[0],
              (long long)k.cluster[1], (long long)k.cluster[2], k.registers_per_thread,
              (long long)k.static_smem_bytes, (long long)k.dynamic_smem_bytes, (long long)k.local_memory_per_thread,
              k.duration_us);
  EXPECT_FALSE(k.name.empty());
  EXPECT_GE(k.grid[0] * k.grid[1] * k.grid[2], 1);
  EXPECT_GE(k.block[0] * k.block[1] * k.block[2], 32);
  EXPECT_GT(k.registers_per_thread, 0);
  EXPECT_GT(k.static_smem_bytes + k.dynamic_smem_bytes, 0);
  EXPECT_GT(k.duration_us, 0);

  // Take drains: a second Take without launches yields nothing new.
  std::vector<KernelLaunchRecord> again;
  ASSERT_TRUE(collector.Take(&again, &err)) << err;
  EXPECT_TRUE(again.empty());
  collector.Disable();
  EXPECT_TRUE(second.Enable(&err)) << err;
}

void PrintMetrics(const char* title, const MetricValues& metrics) {
  std::printf("%s\n", title);
  for (const auto& [name, value] : metrics) std::printf("  %-75s %.4g\n", name.c_str(), value);
}

TEST(GpuRangeProfiler, DefaultMetricsOfACublasGemmPerKernel) {
  FORGEK_SKIP_WITHOUT_GPU();
  PreparedGemm gemm;
  ASSERT_NO_FATAL_FAILURE(PrepareGemm(2048, &gemm));
  RangeProfiler profiler;
  std::string err;
  ASSERT_TRUE(profiler.Init(RangeProfiler::DefaultMetrics(), &err)) << err;
  EXPECT_GE(profiler.passes(), 1u);
  int calls = 0;
  MetricValues metrics;
  std::vector<MetricValues> kernels;
  ASSERT_TRUE(profiler.Profile(
      [&](std::string* e) {
        ++calls;
        return gemm.ref->Launch(nullptr, e);
      },
      &metrics, &err, &kernels))
      << err;
  PrintMetrics("range profiler, per kernel (combined):", metrics);
  EXPECT_EQ(calls, 1);  // kernel replay: CUPTI replays the kernel, the work runs once
  ASSERT_GE(kernels.size(), 1u);
  for (const std::string& name : RangeProfiler::DefaultMetrics()) EXPECT_EQ(metrics.count(name), 1u) << name;
  // A 2048^3 bf16 GEMM keeps the tensor pipe busy (86% in the probe on H200) and uses wgmma.
  EXPECT_GT(metrics["sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"], 20);
  EXPECT_LE(metrics["sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"], 100.5);
  EXPECT_GT(metrics["sm__inst_executed_pipe_tensor_op_gmma.sum"], 0);
  EXPECT_GT(metrics["sm__throughput.avg.pct_of_peak_sustained_elapsed"], 20);
  EXPECT_GT(metrics["gpu__time_duration.sum"], 0);
  EXPECT_GT(metrics["lts__t_sectors_lookup_hit.sum"] + metrics["lts__t_sectors_lookup_miss.sum"], 0);
  // It writes C (8 MiB), which reaches DRAM.
  EXPECT_GT(metrics["dram__bytes_write.sum"], 0);

  // A second profile on the same profiler works and reports again.
  MetricValues again;
  ASSERT_TRUE(profiler.Profile([&](std::string* e) { return gemm.ref->Launch(nullptr, e); }, &again, &err)) << err;
  EXPECT_GT(again["gpu__time_duration.sum"], 0);
}

TEST(GpuRangeProfiler, WholeWorkRangeReplaysTheWorkOncePerPass) {
  FORGEK_SKIP_WITHOUT_GPU();
  PreparedGemm gemm;
  ASSERT_NO_FATAL_FAILURE(PrepareGemm(2048, &gemm));
  RangeProfiler profiler;
  std::string err;
  ASSERT_TRUE(profiler.Init(RangeProfiler::DefaultMetrics(), &err, ProfileRange::whole_work)) << err;
  int calls = 0;
  MetricValues metrics;
  std::vector<MetricValues> ranges;
  ASSERT_TRUE(profiler.Profile(
      [&](std::string* e) {
        ++calls;
        // Two launches inside the one range.
        return gemm.ref->Launch(nullptr, e) && gemm.ref->Launch(nullptr, e);
      },
      &metrics, &err, &ranges))
      << err;
  PrintMetrics("range profiler, whole work:", metrics);
  EXPECT_EQ(size_t(calls), profiler.passes());
  EXPECT_EQ(ranges.size(), 1u);
  EXPECT_GT(metrics["sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"], 0);
  EXPECT_GT(metrics["sm__inst_executed_pipe_tensor_op_gmma.sum"], 0);
  EXPECT_GT(metrics["gpu__time_duration.sum"], 0);
}

TEST(GpuRangeProfiler, UnknownMetricIsNamed) {
  FORGEK_SKIP_WITHOUT_GPU();
  RangeProfiler profiler;
  std::string err;
  EXPECT_FALSE(profiler.Init({"gpu__time_duration.sum", "sm__no_such_counter.sum"}, &err));
  EXPECT_THAT(err, ::testing::HasSubstr("sm__no_such_counter.sum"));
}

TEST(GpuRangeProfiler, FailingWorkIsReported) {
  FORGEK_SKIP_WITHOUT_GPU();
  RangeProfiler profiler;
  std::string err;
  ASSERT_TRUE(profiler.Init({"gpu__time_duration.sum"}, &err)) << err;
  MetricValues metrics;
  EXPECT_FALSE(profiler.Profile(
      [](std::string* e) {
        *e = "launch refused";
        return false;
      },
      &metrics, &err));
  EXPECT_THAT(err, ::testing::HasSubstr("launch refused"));
}

}  // namespace
}  // namespace forgek
