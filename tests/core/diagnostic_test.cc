// Tests of located-error formatting.
#include "forgek/diagnostic.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace forgek
