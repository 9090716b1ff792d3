// Tests of the JSON position index and the "did you mean" helper behind located diagnostics.
#include "forgek/core/json_location.h"

#include <gtest/gtest.h>

#include "forgek/core/suggest.h"

namespace forgek {
namespace {

TEST(JsonLocation, OffsetsBecomeLinesAndColumns) {
  std::string text = "ab\ncd\n\nef";
  EXPECT_EQ(PositionOfOffset(text, 0).line, 1);
  EXPECT_EQ(PositionOfOffset(text, 1).column, 2);
  TextPosition p = PositionOfOffset(text, 4);
  EXPECT_EQ(p.line, 2);
  EXPECT_EQ(p.column, 2);
  p = PositionOfOffset(text, 7);
  EXPECT_EQ(p.line, 4);
  EXPECT_EQ(p.column, 1);
  EXPECT_EQ(PositionOfOffset(text, 1000).line, 4);  // clamped
}

TEST(JsonLocation, PathsAreFormattedLikeDiagnostics) {
  EXPECT_EQ(JsonPathKey("", "tensors"), "tensors");
  EXPECT_EQ(JsonPathKey(JsonPathIndex("tensors", 2), "shape"), "tensors[2].shape");
  EXPECT_EQ(JsonPathIndex("tensors[2].shape", 1), "tensors[2].shape[1]");
}

TEST(JsonLocation, IndexesValuesKeysAndStrings) {
  // JSON embedded at an offset in a larger file, as in a candidate.
  std::string text = "// x\n/* forgek\n{\"a\": {\"b\": [10, \"x+y\"]},\n \"c\": true}\n*/";
  size_t begin = text.find('{');
  JsonLocator loc(text, begin, text.find("*/"));
  TextPosition p = loc.ValueAt("a.b[1]");
  EXPECT_EQ(p.line, 3);
  EXPECT_EQ(p.column, static_cast<int>(text.find("\"x+y\"") - begin) + 1);
  EXPECT_EQ(loc.ValueAt("c").line, 4);
  EXPECT_EQ(loc.KeyAt("c").column, 2);
  EXPECT_EQ(loc.InString("a.b[1]", 2).column, loc.ValueAt("a.b[1]").column + 3);  // the 'y'
  // Missing paths fall back to the nearest ancestor.
  EXPECT_EQ(loc.ValueAt("a.missing").column, loc.ValueAt("a").column);
  EXPECT_EQ(loc.ValueAt("a.b[7]").column, loc.ValueAt("a.b").column);
  EXPECT_EQ(loc.ValueAt("zzz").line, 3);  // the root object
  EXPECT_TRUE(loc.duplicate_keys().empty());
}

TEST(JsonLocation, FindsDuplicateKeysAndSurvivesDeepNesting) {
  std::string text = "{\"k\": 1,\n \"k\": 2}";
  JsonLocator loc(text, 0, text.size());
  ASSERT_EQ(loc.duplicate_keys().size(), 1u);
  EXPECT_EQ(loc.duplicate_keys()[0].first, "k");
  EXPECT_EQ(loc.duplicate_keys()[0].second.line, 2);
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  JsonLocator deep_loc(deep, 0, deep.size());
  EXPECT_EQ(deep_loc.ValueAt("[0][0]").column, 3);
}

TEST(JsonLocation, CleansParseErrorMessages) {
  EXPECT_EQ(CleanJsonParseError("[json.exception.parse_error.101] parse error at line 3, column 19: syntax error "
                                "while parsing value - unexpected ']'"),
            "invalid JSON: syntax error while parsing value - unexpected ']'");
}

TEST(Suggest, CloseMatchesByEditDistance) {
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("same", "same"), 0u);
  std::vector<std::string> known = {"launches", "constraints", "params", "let"};
  EXPECT_EQ(DidYouMean("constraint", known), " (did you mean 'constraints'?)");
  EXPECT_EQ(DidYouMean("lunches", known), " (did you mean 'launches'?)");
  EXPECT_EQ(DidYouMean("zzzzzzzz", known), "");
  EXPECT_EQ(DidYouMean("Q", {"M", "N"}), "");  // one letter is close to every letter: no hint
  EXPECT_EQ(CloseMatches("gemm", {"gemv", "gemm_bf16", "germ", "softmax"}),
            (std::vector<std::string>{"gemv", "germ"}));
}

}  // namespace
}  // namespace forgek
