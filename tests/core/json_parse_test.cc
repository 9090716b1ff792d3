// Parsing with a depth and size limit: deep documents are refused before a tree is built.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "core/json_parse.h"
#include "forgek/candidate.h"
#include "forgek/operator_spec.h"
#include "test_util.h"

namespace forgek {
namespace {

std::string Nested(size_t depth, char open = '[', char close = ']') {
  return std::string(depth, open) + std::string(depth, close);
}

TEST(JsonParse, ParsesOrdinaryDocuments) {
  nlohmann::json j;
  JsonParseError e;
  ASSERT_TRUE(ParseJsonLimited(R"({"a": [1, {"b": "[[[[ not nesting }}}"}]})", &j, &e)) << e.message;
  EXPECT_EQ(j["a"][1]["b"], "[[[[ not nesting }}}");
}

TEST(JsonParse, DepthAtTheLimitParsesOneMoreDoesNot) {
  nlohmann::json j;
  JsonParseError e;
  EXPECT_TRUE(ParseJsonLimited(Nested(kJsonMaxDepth), &j, &e)) << e.message;
  EXPECT_FALSE(ParseJsonLimited(Nested(kJsonMaxDepth + 1), &j, &e));
  EXPECT_NE(e.message.find("nested deeper than 128 levels"), std::string::npos) << e.message;
  EXPECT_EQ(e.offset, kJsonMaxDepth);  // the bracket that went one level too deep
}

TEST(JsonParse, VeryDeepDocumentIsRefusedQuicklyWithoutCrashing) {
  // 200 000 levels overflowed the stack (nlohmann copies and destroys trees recursively).
  std::string text = R"({"zz": )" + Nested(200000) + R"(, "params": {}})";
  auto start = std::chrono::steady_clock::now();
  nlohmann::ordered_json j = {{"untouched", true}};
  JsonParseError e;
  EXPECT_FALSE(ParseJsonLimited(text, &j, &e));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
  EXPECT_EQ(j["untouched"], true);
  EXPECT_EQ(e.offset, 7u + kJsonMaxDepth - 1);  // the object is level 1
  EXPECT_TRUE(ParseJsonLenient(text).is_discarded());
}

TEST(JsonParse, EscapedQuotesDoNotEndAString) {
  nlohmann::json j;
  JsonParseError e;
  std::string text = R"(["\"[[[[", )" + Nested(kJsonMaxDepth - 1, '{', '}') + "]";
  // The inner '{'s are not JSON objects (no keys), so the parser fails, but on syntax, not depth.
  EXPECT_FALSE(ParseJsonLimited(text, &j, &e));
  EXPECT_EQ(e.message.find("nested deeper"), std::string::npos) << e.message;
}

TEST(JsonParse, SizeLimitAndSyntaxErrorsAreReportedWithAnOffset) {
  nlohmann::json j;
  JsonParseError e;
  JsonLimits small;
  small.max_bytes = 10;
  EXPECT_FALSE(ParseJsonLimited(R"({"a": "0123456789"})", &j, &e, small));
  EXPECT_NE(e.message.find("larger than the limit of 10 bytes"), std::string::npos) << e.message;
  EXPECT_FALSE(ParseJsonLimited(R"({"a": 1,})", &j, &e));
  EXPECT_NE(e.message.find("invalid JSON"), std::string::npos) << e.message;
  EXPECT_EQ(e.offset, 8u);
  std::string err;
  EXPECT_FALSE(ParseJsonLimited(Nested(1000), "reply", &j, &err));
  EXPECT_EQ(err, "reply: JSON nested deeper than 128 levels (the limit) (at byte 128)");
}

TEST(JsonParse, DeepCandidateManifestIsALocatedError) {
  std::string seed = ReadFile(SourceDir() + "/operators/softmax_fp32/seed.cu");
  size_t at = seed.find("\"params\"");
  ASSERT_NE(at, std::string::npos);
  std::string source = seed.substr(0, at) + "\"zz\": " + Nested(200000) + ", " + seed.substr(at);
  Candidate c;
  Diagnostics diags;
  EXPECT_FALSE(ParseCandidate("deep.cu", source, &c, &diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].file, "deep.cu");
  EXPECT_GT(diags[0].line, 0);
  EXPECT_NE(diags[0].message.find("nested deeper than 128 levels"), std::string::npos) << diags[0].message;
}

TEST(JsonParse, DeepOperatorJsonIsALocatedError) {
  TempDir dir;
  WriteFile(dir.file("operator.json"), R"({"name": "x", "zz": )" + Nested(200000) + "}");
  OperatorSpec op;
  Diagnostics diags;
  EXPECT_FALSE(LoadOperator(dir.path(), &op, &diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags[0].file.find("operator.json"), std::string::npos);
  EXPECT_EQ(diags[0].line, 1);
  EXPECT_NE(diags[0].message.find("nested deeper than 128 levels"), std::string::npos) << diags[0].message;
}

}  // namespace
}  // namespace forgek
