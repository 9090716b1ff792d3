// Tests of located-error formatting.
#include "forgek/core/diagnostic.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "forgek/core/spec_limits.h"

namespace forgek {
namespace {

TEST(Diagnostic, FormatsEveryKnownPart) {
  Diagnostic d{"operators/gemm/operator.json", "configs[1].values.M", 12, 5, "expected an integer"};
  EXPECT_EQ(d.str(), "operators/gemm/operator.json:12:5: configs[1].values.M: expected an integer");
}

TEST(Diagnostic, LeavesOutUnknownParts) {
  EXPECT_EQ((Diagnostic{"", "grid[0]", 0, 0, "unknown name 'Q'"}).str(), "grid[0]: unknown name 'Q'");
  EXPECT_EQ((Diagnostic{"", "", 3, 7, "unexpected ')'"}).str(), "line 3, column 7: unexpected ')'");
  EXPECT_EQ((Diagnostic{"a.cu", "", 0, 0, "empty"}).str(), "a.cu: empty");
}

TEST(Diagnostic, JoinsSeveral) {
  Diagnostics ds{{"a", "", 1, 0, "x"}, {"b", "f", 0, 0, "y"}};
  EXPECT_EQ(FormatDiagnostics(ds), "a:1: x\nb: f: y");
}

// 100 000 copies of one mistake give a short answer: the first few, then a count.
TEST(Diagnostic, ALongListIsCutWithACount) {
  Diagnostics ds(100000, Diagnostic{"op.json", "families[1]", 1, 2, "family 'a.cu' appears twice"});
  std::string text = FormatDiagnostics(ds);
  size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  EXPECT_EQ(lines, kMaxDiagnosticsShown + 1);
  EXPECT_NE(text.find("\n... and " + std::to_string(100000 - kMaxDiagnosticsShown) + " more"), std::string::npos);
  ds.resize(kMaxDiagnosticsShown);
  EXPECT_EQ(FormatDiagnostics(ds).find("more"), std::string::npos) << "a list at the cap is shown whole";
}

}  // namespace
}  // namespace forgek
