// `forgek ops bench`: its printers from given rows, its argument errors, and the no-GPU path.
#include "cli/bench_rows.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace forgek::cli {
namespace {

// A timed row (gemm 4096^3 in 200 us: 687 TFLOP/s) and a failed one.
std::vector<BenchRow> Rows() {
  BenchRow ok;
  ok.op = "gemm_bf16";
  ok.config = "4096^3";
  ok.reference = "cublas.gemm_bf16";
  ok.time.median_us = 200;
  ok.time.rel_noise = 0.012;
  ok.time.samples = 50;
  ok.flops = 2.0 * 4096 * 4096 * 4096;
  ok.bytes = 3.0 * 2 * 4096 * 4096;
  ok.sol_us = 150;
  ok.datasheet_sol_us = 120;
  ok.floor_us = 2.5;
  BenchRow bad;
  bad.op = "softmax_fp32";
  bad.config = "4096x4096";
  bad.reference = "reference.cu";
  bad.status = "wrong";
  bad.detail = "config 4096x4096: y[0, 1] = nan";
  bad.flops = 5;
  bad.sol_us = 12.5;
  return {ok, bad};
}

TEST(OpsBenchRows, MarkdownTableHasOneLinePerConfigAndListsFailures) {
  EXPECT_EQ(BenchMarkdown(Rows(), "NVIDIA H200"),
            "Expert references on NVIDIA H200.\n\n"
            "| operator | config | reference | status | time us | noise | TFLOP/s | GB/s | SOL us | SOL % | sheet % | "
            "floor us |\n"
            "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
            "| gemm_bf16 | 4096^3 | cublas.gemm_bf16 | ok | 200.00 | ±1.2% | 687.2 | 503 | 150.00 | 75.0% | 60.0% | 2.50 |\n"
            "| softmax_fp32 | 4096x4096 | reference.cu | wrong | - | - | - | - | 12.50 | - | - | - |\n"
            "\n```\nsoftmax_fp32 4096x4096: wrong: config 4096x4096: y[0, 1] = nan\n```\n");
}

TEST(OpsBenchRows, JsonKeepsNumbersAndNullsTheUnmeasured) {
  nlohmann::json j = BenchJson(Rows(), "NVIDIA H200");
  EXPECT_EQ(j["device"], "NVIDIA H200");
  ASSERT_EQ(j["rows"].size(), 2u);
  const nlohmann::json& ok = j["rows"][0];
  EXPECT_EQ(ok["operator"], "gemm_bf16");
  EXPECT_EQ(ok["status"], "ok");
  EXPECT_DOUBLE_EQ(ok["time_us"].get<double>(), 200);
  EXPECT_DOUBLE_EQ(ok["noise"].get<double>(), 0.012);
  EXPECT_NEAR(ok["tflops"].get<double>(), 687.19, 0.01);
  EXPECT_NEAR(ok["gbps"].get<double>(), 503.3, 0.1);
  EXPECT_DOUBLE_EQ(ok["sol_pct"].get<double>(), 75);
  EXPECT_DOUBLE_EQ(ok["datasheet_sol_pct"].get<double>(), 60);
  EXPECT_DOUBLE_EQ(ok["floor_us"].get<double>(), 2.5);
  EXPECT_EQ(ok["samples"], 50);
  const nlohmann::json& bad = j["rows"][1];
  EXPECT_EQ(bad["status"], "wrong");
  EXPECT_TRUE(bad["time_us"].is_null());
  EXPECT_TRUE(bad["sol_pct"].is_null());
  EXPECT_TRUE(bad["datasheet_sol_pct"].is_null()) << "no datasheet bound, no datasheet %";
  EXPECT_DOUBLE_EQ(bad["sol_us"].get<double>(), 12.5);
  EXPECT_EQ(bad["detail"], "config 4096x4096: y[0, 1] = nan");
}

TEST(OpsBenchRows, TextAlignsColumns) {
  std::string text = BenchText(Rows(), "NVIDIA H200");
  EXPECT_EQ(text.substr(0, text.find('\n')), "expert references on NVIDIA H200");
  EXPECT_NE(text.find("gemm_bf16     4096^3     cublas.gemm_bf16  ok       200.00  ±1.2%    687.2   503  150.00  75.0%"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("softmax_fp32 4096x4096: wrong: "), std::string::npos) << text;
}

CommandResult Bench(std::vector<std::string> args) {
  static TempDir home;
  args.insert(args.begin(), {"--store", home.file("store.db"), "ops", "bench"});
  return RunForgek(args, {"XDG_CACHE_HOME=" + home.path()});
}

TEST(OpsBenchCli, ArgumentErrors) {
  CommandResult both = Bench({"--markdown", "--json", "softmax_fp32"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("at most one of --markdown and --json"), std::string::npos) << both.err;
  CommandResult seeds = Bench({"--seeds", "0"});
  EXPECT_EQ(seeds.exit_code, 2) << seeds.err;
  CommandResult unknown = Bench({"softmax_fp33"});
  EXPECT_EQ(unknown.exit_code, 2);  // an unknown name is a usage error, as for run --op
  EXPECT_NE(unknown.err.find("softmax_fp32"), std::string::npos) << "suggests the close name: " << unknown.err;
}

TEST(OpsBenchCli, WithoutAGpuItSaysSo) {
  if (RunForgek({"worker", "--probe"}).exit_code == 0) GTEST_SKIP() << "a GPU is present";
  CommandResult r = Bench({"--markdown", "softmax_fp32"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no usable GPU: "), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace forgek::cli
