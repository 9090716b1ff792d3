// Errors found when a candidate is resolved under a config (a division by zero that only one
// config's values reach) name the file, line and column of the expression, as docs/expressions.md
// promises for every expression error: parsing alone cannot find them.
#include <gtest/gtest.h>

#include "forgek/core/candidate.h"
#include "forgek/core/operator_spec.h"
#include "test_util.h"

namespace forgek {
namespace {

const std::string kOperatorDir = SourceDir() + "/operators/softmax_fp32";

// A softmax candidate whose manifest fields are given; line 4 holds `launch_fields`.
std::string Source(const std::string& before, const std::string& launch_fields) {
  return "/* forgek\n{\n" + before + "  \"launches\": [\n    {\"kernel\": \"k\", " + launch_fields +
         "}\n  ]\n}\n*/\nextern \"C\" __global__ void k(const float* x, float* y, int M, int N) {}\n";
}

// The 1-based line and column of the first `needle` in `text`.
std::pair<int, int> PositionOf(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  int line = 1, column = 1;
  for (size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') ++line, column = 1;
    else ++column;
  }
  return {line, column};
}

class ResolveLocation : public ::testing::Test {
 protected:
  void SetUp() override {
    Diagnostics diags;
    ASSERT_TRUE(LoadOperator(kOperatorDir, &op_, &diags)) << FormatDiagnostics(diags);
  }

  // Resolves `source` (fixed params) under the operator's first config; returns its diagnostics.
  Diagnostics Resolve(const std::string& source) {
    Candidate c;
    Diagnostics diags;
    EXPECT_TRUE(ParseCandidate("cand.cu", source, &c, &diags)) << FormatDiagnostics(diags);
    EXPECT_TRUE(ValidateCandidate(c, op_, &diags)) << FormatDiagnostics(diags);
    ParamAssignment params;
    for (const ParamSpec& p : c.manifest.params) params[p.name] = p.values[0];
    ResolvedCandidate r;
    EXPECT_FALSE(ResolveCandidate(c.manifest, op_, params, op_.configs[0].values, 132, &r, &diags));
    return diags;
  }

  OperatorSpec op_;
};

TEST_F(ResolveLocation, ADivisionByZeroInALaunchNamesItsFileLineAndColumn) {
  const std::string source = Source("", R"j("grid": ["M / (N - N)"], "block": [32], "args": ["x", "y", "M", "N"])j");
  Diagnostics diags = Resolve(source);
  ASSERT_EQ(diags.size(), 1u) << FormatDiagnostics(diags);
  const auto [line, column] = PositionOf(source, "/ (N - N)");  // the operator that divides
  EXPECT_EQ(diags[0].file, "cand.cu");
  EXPECT_EQ(diags[0].line, line);
  EXPECT_EQ(diags[0].column, column);
  EXPECT_EQ(diags[0].field, "launches[0].grid[0]");
  EXPECT_NE(diags[0].message.find("division by zero"), std::string::npos) << diags[0].message;
  EXPECT_EQ(diags[0].str().rfind("cand.cu:" + std::to_string(line) + ":" + std::to_string(column) +
                                     ": launches[0].grid[0]: ",
                                 0),
            0u)
      << diags[0].str();
}

TEST_F(ResolveLocation, ALetAConstraintAndAPrefixedArgumentAreLocatedToo) {
  {
    const std::string source = Source(R"j(  "let": {"ROWS": "M", "BAD": "ROWS % (N - N)"},
)j",
                                      R"j("grid": ["M"], "block": [32], "args": ["x", "y", "M", "BAD"])j");
    Diagnostics diags = Resolve(source);
    ASSERT_EQ(diags.size(), 1u) << FormatDiagnostics(diags);
    const auto [line, column] = PositionOf(source, "% (N - N)");
    EXPECT_EQ(diags[0].field, "let.BAD");
    EXPECT_EQ(diags[0].line, line);
    EXPECT_EQ(diags[0].column, column);
    EXPECT_NE(diags[0].message.find("modulo by zero"), std::string::npos) << diags[0].message;
  }
  {
    const std::string source = Source(R"j(  "constraints": ["N > 0", "M / (N - N) > 1"],
)j",
                                      R"j("grid": ["M"], "block": [32], "args": ["x", "y", "M", "N"])j");
    Diagnostics diags = Resolve(source);
    ASSERT_EQ(diags.size(), 1u) << FormatDiagnostics(diags);
    const auto [line, column] = PositionOf(source, "/ (N - N) > 1");
    EXPECT_EQ(diags[0].field, "constraints");
    EXPECT_EQ(diags[0].line, line);
    EXPECT_EQ(diags[0].column, column);
  }
  {
    const std::string source =
        Source("", R"j("grid": ["M"], "block": [32], "args": ["x", "y", "i64:ceil_div(M, N - N)", "N"])j");
    Diagnostics diags = Resolve(source);
    ASSERT_EQ(diags.size(), 1u) << FormatDiagnostics(diags);
    const auto [line, column] = PositionOf(source, "ceil_div(M, N - N)");  // past the "i64:" prefix
    EXPECT_EQ(diags[0].field, "launches[0].args[2]");
    EXPECT_EQ(diags[0].line, line);
    EXPECT_EQ(diags[0].column, column);
  }
}

TEST_F(ResolveLocation, AValueOutOfRangeIsLocatedAtItsField) {
  const std::string source = Source("", R"j("grid": ["M"], "block": ["N * 4"], "args": ["x", "y", "M", "N"])j");
  Diagnostics diags = Resolve(source);
  ASSERT_FALSE(diags.empty());
  const auto [line, column] = PositionOf(source, "\"N * 4\"");
  EXPECT_EQ(diags[0].field, "launches[0].block[0]");
  EXPECT_EQ(diags[0].file, "cand.cu");
  EXPECT_EQ(diags[0].line, line);
  EXPECT_EQ(diags[0].column, column);
}

TEST_F(ResolveLocation, AManifestBuiltInMemoryHasNoPosition) {
  Candidate c;
  Diagnostics diags;
  const std::string source =
      Source("", R"j("grid": ["M / (N - N)"], "block": [32], "args": ["x", "y", "M", "N"])j");
  ASSERT_TRUE(ParseCandidate("cand.cu", source, &c, &diags));
  CandidateManifest m = c.manifest;
  m.origin.reset();
  ResolvedCandidate r;
  EXPECT_FALSE(ResolveCandidate(m, op_, {}, op_.configs[0].values, 132, &r, &diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].file, "");
  EXPECT_EQ(diags[0].line, 0);
}

}  // namespace
}  // namespace forgek
