// Tests of the suite scoreboard built from run summaries: sealed, dispatch, unsealed and failed runs.
#include "forgek/run/scoreboard.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "forgek/run/run.h"

namespace forgek {
namespace {

ConfigComparison Config(const std::string& name, double expert_us, double best_us, double incumbent_us, double sol) {
  ConfigComparison c;
  c.config = name;
  c.expert_us = expert_us;
  c.incumbent_us = incumbent_us;
  c.best_us = best_us;
  c.speedup_vs_expert = expert_us / best_us;
  c.best_sol_pct = sol;
  c.incumbent_sol_pct = sol * best_us / incumbent_us;
  // Against the datasheet's higher peaks a kernel reaches less; both bounds hold a 2 us floor.
  c.best_datasheet_sol_pct = 0.9 * c.best_sol_pct;
  c.incumbent_datasheet_sol_pct = 0.9 * c.incumbent_sol_pct;
  c.floor_us = 2;
  return c;
}

BatchRunResult Result(const std::string& op, const RunSummary& s) {
  BatchRunResult r;
  r.op = op;
  r.exit_code = 0;
  r.output = RunSummaryJson(s);
  return r;
}

TEST(Scoreboard, EveryOperatorHasRowsWhetherSealedDispatchedUnsealedOrFailed) {
  RunSummary sealed;
  sealed.seal_id = "aaaa";
  sealed.sealed_kernel = "attempt 3 (families/tiled.cu TILE=8)";
  sealed.sealed_mechanisms = {"vector_16B"};
  sealed.configs = {Config("4096", 100, 80, 100, 50)};

  RunSummary dispatch;
  dispatch.seal_id = "bbbb";
  dispatch.sealed_kernel = "attempt 2 (seed.cu BLOCK=256)";
  dispatch.sealed_mechanisms = {"warp_shuffle_reduction"};
  dispatch.configs = {Config("small", 10, 8, 10, 40), Config("large", 50, 50, 50, 90)};
  dispatch.dispatch = {{"small", "attempt 2 (seed.cu BLOCK=256)", "attempt 2: 1.250x, faster beyond noise"},
                       {"large", "incumbent (reference (reference.cu))", "incumbent: best 0.990x, the same"}};

  RunSummary unsealed;
  unsealed.incumbent = "reference (cublas.gemm_bf16)";
  unsealed.seal_reason = "not sealed: no candidate beat the incumbent on every config (best geomean 0.950x); per config: ...";
  unsealed.configs = {Config("8192^3", 1390, 1500, 1390, 92)};

  BatchRunResult failed;
  failed.op = "broken_op";
  failed.exit_code = 1;

  std::vector<ScoreboardRow> rows = BuildScoreboard(
      {Result("elementwise", sealed), Result("softmax", dispatch), Result("gemm_bf16", unsealed), failed});
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].op, "elementwise");
  EXPECT_NEAR(rows[0].sealed_us, 80, 1e-9);
  EXPECT_NEAR(rows[0].speedup, 1.25, 1e-9);
  EXPECT_NEAR(rows[0].sol_pct, 50, 1e-9);
  EXPECT_NEAR(rows[0].datasheet_sol_pct, 45, 1e-9) << "a sealed row: the seal's own SOL % against the datasheet";
  EXPECT_NEAR(rows[0].floor_us, 2, 1e-9);
  EXPECT_EQ(rows[0].kernel, "attempt 3 (families/tiled.cu TILE=8)");
  EXPECT_EQ(rows[0].mechanisms, (std::vector<std::string>{"vector_16B"}));

  EXPECT_EQ(rows[1].kernel, "attempt 2 (seed.cu BLOCK=256)");
  EXPECT_EQ(rows[2].config, "large");
  EXPECT_EQ(rows[2].kernel, "incumbent (reference (reference.cu))") << "the dispatch names each config's kernel";

  EXPECT_EQ(rows[3].op, "gemm_bf16");
  EXPECT_NEAR(rows[3].sealed_us, 1390, 1e-9) << "nothing sealed: the expert reference serves it";
  EXPECT_NEAR(rows[3].speedup, 1.0, 1e-9);
  EXPECT_NEAR(rows[3].datasheet_sol_pct, 0.9 * 92 * 1500 / 1390, 1e-9) << "unsealed: the incumbent's, as its SOL %";
  EXPECT_EQ(rows[3].kernel, "reference (cublas.gemm_bf16)");
  EXPECT_EQ(rows[3].note, "not sealed: no candidate beat the incumbent on every config (best geomean 0.950x)");
  EXPECT_TRUE(rows[3].seal.empty());

  EXPECT_EQ(rows[4].op, "broken_op");
  EXPECT_EQ(rows[4].note, "run failed (exit 1)");

  std::string md = ScoreboardMarkdown(rows, "## H200");
  EXPECT_NE(md.find("| elementwise | 4096 | 100.00 | 80.00 | 1.250x | 50.0 | 45.0 | 2.00 | attempt 3 "
                    "(families/tiled.cu TILE=8) | vector_16B |  |"),
            std::string::npos)
      << md;
  nlohmann::json j = nlohmann::json::parse(ScoreboardJson(rows, "H200"));
  ASSERT_EQ(j["rows"].size(), 5u);
  EXPECT_TRUE(j["rows"][4]["expert_us"].is_null());
  EXPECT_EQ(j["rows"][1]["seal"], "bbbb");
  EXPECT_NEAR(j["rows"][0]["datasheet_sol_pct"].get<double>(), 45, 1e-9);
  EXPECT_NEAR(j["rows"][0]["floor_us"].get<double>(), 2, 1e-9);
}

TEST(Scoreboard, ADispatchRowShowsTheMechanismsOfItsOwnKernelAndANoteKeepsTheDispatchReason) {
  RunSummary dispatch;
  dispatch.seal_id = "bbbb";
  dispatch.sealed_kernel = "attempt 2 (seed.cu BLOCK=256)";
  dispatch.sealed_mechanisms = {"warp_shuffle_reduction", "vector_16B"};
  dispatch.configs = {Config("small", 10, 8, 10, 40), Config("mid", 20, 16, 20, 40), Config("large", 50, 50, 50, 90)};
  dispatch.dispatch = {
      {"small", "attempt 2 (seed.cu BLOCK=256)", "attempt 2: 1.250x, faster beyond noise", {"warp_shuffle_reduction"}},
      {"mid", "attempt 5 (vec.cu VEC=4)", "attempt 5: 1.250x, faster beyond noise", {"vector_16B"}},
      {"large", "incumbent (reference (cub.reduce))", "incumbent: best 0.990x, the same", {}}};

  // A summary written before dispatch rows carried mechanisms: the reference's row has none.
  nlohmann::json older = nlohmann::json::parse(RunSummaryJson(dispatch));
  for (nlohmann::json& d : older["dispatch"]) d.erase("mechanisms");
  BatchRunResult older_result = Result("older", dispatch);
  older_result.output = older.dump();

  RunSummary unsealed;
  unsealed.incumbent = "reference (cub.reduce)";
  unsealed.seal_reason =
      "not sealed: no candidate beat the incumbent on every config (best geomean 1.010x); per config: small: attempt "
      "2: 1.250x, faster beyond noise; large: incumbent: best 0.900x, slower beyond noise; the dispatch did not hold "
      "on confirmation: config small regresses: 0.950x, beyond its noise of 1.0%";
  unsealed.configs = {Config("small", 10, 10, 10, 40)};

  std::vector<ScoreboardRow> rows =
      BuildScoreboard({Result("softmax", dispatch), older_result, Result("unsealed", unsealed)});
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[0].mechanisms, (std::vector<std::string>{"warp_shuffle_reduction"}));
  EXPECT_EQ(rows[1].mechanisms, (std::vector<std::string>{"vector_16B"}));
  EXPECT_EQ(rows[2].kernel, "incumbent (reference (cub.reduce))");
  EXPECT_TRUE(rows[2].mechanisms.empty()) << "the reference serves it, not the dispatch's kernels";
  EXPECT_TRUE(rows[5].mechanisms.empty()) << "an older summary: the reference's row still claims nothing";
  EXPECT_EQ(rows[6].note,
            "not sealed: no candidate beat the incumbent on every config (best geomean 1.010x); the dispatch did not "
            "hold on confirmation: config small regresses: 0.950x, beyond its noise of 1.0%");
  std::string md = ScoreboardMarkdown(rows, "## H200");
  EXPECT_NE(md.find("| softmax | large | 50.00 | 50.00 | 1.000x | 90.0 | 81.0 | 2.00 | incumbent (reference (cub.reduce)) | - |"),
            std::string::npos)
      << md;
}

TEST(Scoreboard, PyTorchTimedByARunStandsBesideTheSealAndOnlyThen) {
  RunSummary imported;
  imported.seal_id = "cccc";
  imported.sealed_kernel = "attempt 4 (seed.cu BLOCK=512)";
  imported.configs = {Config("kernelbench", 30, 20, 30, 60), Config("decode", 5, 4, 5, 20)};
  imported.configs[0].torch.eager.median_us = 50;
  imported.configs[0].torch.eager.rel_noise = 0.02;
  imported.configs[0].torch.eager.samples = 40;
  imported.configs[0].torch.compiled.median_us = 25;
  imported.configs[0].torch.compiled.samples = 40;
  imported.configs[0].torch_kernel = "seal";
  imported.configs[0].torch_kernel_us = 20;
  imported.configs[1].torch.eager.median_us = 8;
  imported.configs[1].torch.eager.samples = 40;
  imported.configs[1].torch.compile_error = "torch 1.13.1 has no torch.compile";
  imported.configs[1].torch_kernel = "seal";
  imported.configs[1].torch_kernel_us = 4;
  std::vector<ScoreboardRow> rows = BuildScoreboard({Result("softmax_rows", imported)});
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_TRUE(rows[0].torch.has_value());
  EXPECT_DOUBLE_EQ(rows[0].torch->numbers.eager_us, 50);
  EXPECT_DOUBLE_EQ(rows[0].torch->numbers.compile_us, 25);
  EXPECT_DOUBLE_EQ(rows[0].torch->numbers.speedup_vs_eager, 2.5);
  EXPECT_DOUBLE_EQ(rows[0].torch->numbers.speedup_vs_compile, 1.25);
  EXPECT_EQ(rows[1].torch->numbers.note, "torch.compile: torch 1.13.1 has no torch.compile");
  std::string md = ScoreboardMarkdown(rows, "## H200");
  EXPECT_NE(md.find("| torch eager us | torch.compile us | vs eager | vs compile |"), std::string::npos) << md;
  EXPECT_NE(md.find("2.500x"), std::string::npos) << md;
  EXPECT_NE(md.find("1.250x"), std::string::npos) << md;
  nlohmann::json j = nlohmann::json::parse(ScoreboardJson(rows, "H200"));
  EXPECT_DOUBLE_EQ(j["rows"][0]["torch"]["eager_us"].get<double>(), 50);
  EXPECT_TRUE(j["rows"][1]["torch"]["compile_us"].is_null());

  // No run timed PyTorch: no such columns.
  RunSummary plain;
  plain.seal_id = "dddd";
  plain.configs = {Config("4096", 100, 80, 100, 50)};
  std::string plain_md = ScoreboardMarkdown(BuildScoreboard({Result("rmsnorm", plain)}), "## H200");
  EXPECT_EQ(plain_md.find("torch eager"), std::string::npos) << plain_md;
}

}  // namespace
}  // namespace forgek
