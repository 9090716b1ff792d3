// Parsing with a depth and size limit: deep documents are refused before a tree is built.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>

#include "forgek/core/json_parse.h"
#include "forgek/core/candidate.h"
#include "forgek/core/operator_spec.h"
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

namespace forgek {
namespace {

// Every JSON reader of the tree goes through ParseJsonLimited / ParseJsonLenient: a direct
// nlohmann parse would take a deeply nested text down with a stack overflow.
// Objects that keep their members in file order (manifests, operator.json) were built with a
// linear search per member: 40 000 members took minutes. Now a repeated key is found by hashing,
// with nlohmann's meaning kept: the first place, the last value.
TEST(JsonParse, AnOrderedObjectOfManyMembersParsesInLinearTime) {
  std::string text = "{";
  for (int i = 0; i < 200000; ++i) text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  text += R"(,"k7":"again","z":{"a":[1,{"b":2}],"a":3}})";
  nlohmann::ordered_json j;
  JsonParseError error;
  // Processor time, not wall time: a loaded machine must not fail this, quadratic work must.
  const std::clock_t start = std::clock();
  ASSERT_TRUE(ParseJsonLimited(text, &j, &error)) << error.message;
  EXPECT_LT(static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC, 5.0);
  ASSERT_EQ(j.size(), 200001u);
  auto it = j.begin();
  EXPECT_EQ(it.key(), "k0");
  std::advance(it, 7);
  EXPECT_EQ(it.key(), "k7");
  EXPECT_EQ(it.value(), "again") << "a repeated key keeps its place and takes the last value";
  EXPECT_EQ(j["z"].dump(), R"({"a":3})");
  EXPECT_EQ(std::prev(j.end()).key(), "z");
  // Errors read as they did: the message and the byte it points at.
  EXPECT_FALSE(ParseJsonLimited(R"({"a": [1, }])", &j, &error));
  EXPECT_EQ(error.offset, 10u);
  EXPECT_NE(error.message.find("unexpected '}'"), std::string::npos) << error.message;
}

TEST(JsonParse, NoReaderInTheTreeParsesJsonDirectly) {
  namespace fs = std::filesystem;
  std::string offenders;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(SourceDir()) / "src")) {
    if (!entry.is_regular_file()) continue;
    const fs::path& p = entry.path();
    if (p.extension() != ".cc" && p.extension() != ".h" && p.extension() != ".cu") continue;
    if (p.filename() == "json_parse.cc" || p.filename() == "json_parse.h") continue;
    std::ifstream in(p);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      if (line.find("json::parse(") != std::string::npos || line.find("json::sax_parse(") != std::string::npos)
        offenders += fs::relative(p, SourceDir()).string() + ":" + std::to_string(n) + ": " + line + "\n";
  }
  EXPECT_TRUE(offenders.empty()) << "parse JSON with ParseJsonLimited or ParseJsonLenient (src/core/json_parse.h):\n"
                                 << offenders;
}

}  // namespace
}  // namespace forgek
