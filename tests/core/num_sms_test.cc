// num_sms, the device's SM count as an expression name: its binding, its nominal value, its reserved name.
#include <gtest/gtest.h>

#include "forgek/core/candidate.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/param_corners.h"
#include "test_util.h"

namespace forgek {
namespace {

OperatorSpec Gemm() {
  OperatorSpec op;
  op.name = "gemm_bf16";
  op.params = {"M", "N", "K"};
  op.tensors = {{"A", TensorRole::input, DType::bf16, {"M", "K"}, {}},
                {"B", TensorRole::input, DType::bf16, {"K", "N"}, {}},
                {"C", TensorRole::output, DType::bf16, {"M", "N"}, {}}};
  return op;
}

const Bindings kSquare = {{"M", 4096}, {"N", 4096}, {"K", 4096}};

Candidate Parse(const std::string& manifest_json) {
  Candidate c;
  Diagnostics diags;
  std::string source = "/* forgek\n" + manifest_json + "\n*/\nextern \"C\" __global__ void k() {}\n";
  EXPECT_TRUE(ParseCandidate("c.cu", source, &c, &diags)) << FormatDiagnostics(diags);
  return c;
}

// A persistent grid as gemm_bf16's wgmma_persistent writes it, num_sms also in a let, a workspace,
// a constraint and an argument.
const char* kPersistent = R"j({
  "params": {"CTAS_PER_SM": [1, 2]},
  "let": {"units": "ceil_div(M, 128) * ceil_div(N, 256)", "ctas": "min(units, num_sms * CTAS_PER_SM)"},
  "constraints": ["num_sms >= 16"],
  "workspaces": [{"name": "partials", "bytes": "4 * ctas"}],
  "launches": [{"kernel": "k", "grid": ["ctas"], "block": [384], "args": ["C", "num_sms", "units"]}]
})j";

TEST(NumSms, ResolvesWithTheCountItIsGiven) {
  Candidate c = Parse(kPersistent);
  for (int64_t sms : {132, 114, 78}) {
    ResolvedCandidate r;
    Diagnostics diags;
    ASSERT_TRUE(ResolveCandidate(c.manifest, Gemm(), {{"CTAS_PER_SM", 1}}, kSquare, sms, &r, &diags))
        << FormatDiagnostics(diags);
    ASSERT_EQ(r.launches.size(), 1u);
    EXPECT_EQ(r.launches[0].grid[0], sms) << "512 tiles, one block per SM";
    EXPECT_EQ(r.workspaces.at(0).second, 4 * sms);
    ASSERT_EQ(r.launches[0].args.size(), 3u);
    EXPECT_EQ(r.launches[0].args[1].i, sms);
  }
  ResolvedCandidate r;
  Diagnostics diags;
  ASSERT_TRUE(ResolveCandidate(c.manifest, Gemm(), {{"CTAS_PER_SM", 2}}, {{"M", 256}, {"N", 512}, {"K", 64}}, 132, &r,
                               &diags));
  EXPECT_EQ(r.launches[0].grid[0], 4) << "fewer tiles than SMs: one block per tile";
}

TEST(NumSms, ConstraintsReadIt) {
  Candidate c = Parse(kPersistent);
  std::string why;
  EXPECT_TRUE(ConstraintsHold(c.manifest, {{"CTAS_PER_SM", 1}}, kSquare, 132, &why)) << why;
  EXPECT_FALSE(ConstraintsHold(c.manifest, {{"CTAS_PER_SM", 1}}, kSquare, 8, &why));
  EXPECT_NE(why.find("num_sms >= 16"), std::string::npos) << why;
  ResolvedCandidate r;
  Diagnostics diags;
  EXPECT_FALSE(ResolveCandidate(c.manifest, Gemm(), {{"CTAS_PER_SM", 1}}, kSquare, 8, &r, &diags));
  // The error shows the count it was resolved for, beside the config.
  EXPECT_NE(FormatDiagnostics(diags).find("num_sms=8"), std::string::npos) << FormatDiagnostics(diags);
}

TEST(NumSms, ValidationKnowsTheName) {
  Candidate c = Parse(kPersistent);
  Diagnostics diags;
  EXPECT_TRUE(ValidateCandidate(c, Gemm(), &diags)) << FormatDiagnostics(diags);
}

// A misspelling is still an unknown name, and the hint offers num_sms.
TEST(NumSms, AMisspellingIsAnUnknownNameWithAHint) {
  Candidate c = Parse(R"j({"launches": [{"kernel": "k", "grid": ["num_sm"], "block": [128], "args": []}]})j");
  Diagnostics diags;
  EXPECT_FALSE(ValidateCandidate(c, Gemm(), &diags));
  const std::string text = FormatDiagnostics(diags);
  EXPECT_NE(text.find("num_sm"), std::string::npos) << text;
  EXPECT_NE(text.find("num_sms"), std::string::npos) << text;
}

// Every name a candidate declares is refused when it is num_sms: the error names the file, the
// field and its line.
TEST(NumSms, ADeclaredNameNumSmsIsRefusedNamingFileAndField) {
  struct Case {
    const char* manifest;
    const char* field;
  };
  const Case cases[] = {
      {R"j({"params": {"num_sms": [64, 128]}, "launches": [{"kernel": "k", "grid": [1], "block": [32], "args": []}]})j",
       "params.num_sms"},
      {R"j({"let": {"num_sms": "100"}, "launches": [{"kernel": "k", "grid": [1], "block": [32], "args": []}]})j",
       "let.num_sms"},
      {R"j({"workspaces": [{"name": "num_sms", "bytes": 4}],
            "launches": [{"kernel": "k", "grid": [1], "block": [32], "args": []}]})j",
       "workspaces[0].name"},
      {R"j({"tensor_maps": [{"name": "num_sms", "tensor": "A", "box": [64, 64]}],
            "launches": [{"kernel": "k", "grid": [1], "block": [32], "args": []}]})j",
       "tensor_maps[0].name"},
  };
  for (const Case& k : cases) {
    Candidate c = Parse(k.manifest);
    Diagnostics diags;
    EXPECT_FALSE(ValidateCandidate(c, Gemm(), &diags)) << k.field;
    bool found = false;
    for (const Diagnostic& d : diags) {
      if (d.field != k.field) continue;
      found = true;
      EXPECT_EQ(d.file, "c.cu");
      EXPECT_GT(d.line, 0) << d.str();
      EXPECT_NE(d.message.find("'num_sms' is reserved"), std::string::npos) << d.str();
    }
    EXPECT_TRUE(found) << k.field << ": " << FormatDiagnostics(diags);
  }
}

// A manifest that never went through validation cannot hide the count either.
TEST(NumSms, ResolutionRefusesAParamOrLetNamedNumSms) {
  Candidate p = Parse(R"j({"params": {"num_sms": [7]}, "launches": [{"kernel": "k", "grid": ["num_sms"], "block": [32], "args": []}]})j");
  ResolvedCandidate r;
  Diagnostics diags;
  EXPECT_FALSE(ResolveCandidate(p.manifest, Gemm(), {{"num_sms", 7}}, kSquare, 132, &r, &diags));
  EXPECT_NE(FormatDiagnostics(diags).find("'num_sms' is reserved"), std::string::npos) << FormatDiagnostics(diags);
  Candidate l = Parse(R"j({"let": {"num_sms": "7"}, "launches": [{"kernel": "k", "grid": ["num_sms"], "block": [32], "args": []}]})j");
  diags.clear();
  EXPECT_FALSE(ResolveCandidate(l.manifest, Gemm(), {}, kSquare, 132, &r, &diags));
  EXPECT_NE(FormatDiagnostics(diags).find("let.num_sms"), std::string::npos) << FormatDiagnostics(diags);
}

TEST(NumSms, TheNominalCountIsTheTargetArchs) {
  EXPECT_EQ(NominalSmCount("sm90"), 132);
  EXPECT_EQ(NominalSmCount("sm100"), 148);
  EXPECT_EQ(NominalSmCount(""), 132);
  Candidate any = Parse(R"j({"launches": [{"kernel": "k", "grid": [1], "block": [32], "args": []}]})j");
  EXPECT_EQ(NominalSmCount(any.manifest), 132);
  Candidate blackwell =
      Parse(R"j({"archs": ["sm100"], "launches": [{"kernel": "k", "grid": [1], "block": [32], "args": []}]})j");
  EXPECT_EQ(NominalSmCount(blackwell.manifest), 148);
}

// gemm_bf16's wgmma_persistent: one block per SM of the device, whatever its count; validation and
// the CI's checks see it at sm90's nominal 132.
TEST(NumSms, TheShippedPersistentGemmLaunchesOneBlockPerSm) {
  OperatorSpec op;
  Diagnostics diags;
  ASSERT_TRUE(LoadOperator(SourceDir() + "/operators/gemm_bf16", &op, &diags)) << FormatDiagnostics(diags);
  Candidate c;
  ASSERT_TRUE(LoadCandidateFile(op.dir + "/families/wgmma_persistent.cu", &c, &diags)) << FormatDiagnostics(diags);
  ASSERT_TRUE(ValidateCandidate(c, op, &diags)) << FormatDiagnostics(diags);
  EXPECT_NE(c.source.find("\"grid\": [\"min(units, num_sms)\"]"), std::string::npos);
  ParamAssignment first;
  ASSERT_TRUE(FirstValidInstance(c.manifest, op, &first));
  const ConfigSpec* big = op.FindConfig("4096^3");
  ASSERT_NE(big, nullptr);
  for (int64_t sms : {NominalSmCount(c.manifest), int64_t{114}, int64_t{78}}) {
    ResolvedCandidate r;
    ASSERT_TRUE(ResolveCandidate(c.manifest, op, first, big->values, sms, &r, &diags)) << FormatDiagnostics(diags);
    ASSERT_EQ(r.launches.size(), 1u);
    EXPECT_EQ(r.launches[0].kernel, "gemm_wgmma_persistent");
    EXPECT_EQ(r.launches[0].grid[0], sms) << "512 tiles of 128 x 256";
  }
  EXPECT_EQ(NominalSmCount(c.manifest), 132);
}

}  // namespace
}  // namespace forgek
