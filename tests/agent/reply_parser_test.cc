// Reply parsing: fenced blocks, choosing the candidate's block, manifest checks against the operator.
#include <gtest/gtest.h>

#include "agent/reply_parser.h"
#include "llm_test_server.h"

namespace forgek {
namespace {

using testing::ReplyWith;
using testing::VectorAddCandidate;

TEST(FencedBlocks, FindsTagsCodeAndLines) {
  bool unclosed = true;
  auto blocks = FencedBlocks("text\n```CUDA\nint a;\n```\nmore\n````json\n{}\n````\n", &unclosed);
  EXPECT_FALSE(unclosed);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].tag, "cuda");
  EXPECT_EQ(blocks[0].code, "int a;\n");
  EXPECT_EQ(blocks[0].line, 2);
  EXPECT_EQ(blocks[1].tag, "json");
  EXPECT_EQ(blocks[1].code, "{}\n");
}

TEST(FencedBlocks, ShorterFenceInsideDoesNotClose) {
  bool unclosed = false;
  auto blocks = FencedBlocks("````cuda\n```\nstill code\n````\n", &unclosed);
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].code, "```\nstill code\n");
}

TEST(FencedBlocks, ReportsAnUnclosedBlock) {
  bool unclosed = false;
  auto blocks = FencedBlocks("```cuda\nint a;\n", &unclosed);
  EXPECT_TRUE(unclosed);
  ASSERT_EQ(blocks.size(), 1u);
}

TEST(ExtractCandidateCode, TakesTheOnlyCodeBlockAndKeepsTheProse) {
  std::string code, prose, problem;
  ASSERT_TRUE(ExtractCandidateCode("Plan: tile it.\n```cu\nA\n```\nDone.", &code, &prose, &problem)) << problem;
  EXPECT_EQ(code, "A\n");
  EXPECT_EQ(prose, "Plan: tile it.\nDone.");
}

TEST(ExtractCandidateCode, AcceptsUntaggedAndCppBlocksAndIgnoresOthers) {
  std::string code, prose, problem;
  ASSERT_TRUE(ExtractCandidateCode("```json\n{}\n```\n```\nB\n```", &code, &prose, &problem)) << problem;
  EXPECT_EQ(code, "B\n");
  ASSERT_TRUE(ExtractCandidateCode("```c++\nC\n```", &code, &prose, &problem)) << problem;
  EXPECT_EQ(code, "C\n");
}

TEST(ExtractCandidateCode, NoCodeBlockIsAnError) {
  std::string code, prose, problem;
  EXPECT_FALSE(ExtractCandidateCode("Just words.", &code, &prose, &problem));
  EXPECT_NE(problem.find("no code block"), std::string::npos);
  EXPECT_FALSE(ExtractCandidateCode("```python\nprint(1)\n```", &code, &prose, &problem));
  EXPECT_NE(problem.find("no code block"), std::string::npos);
}

TEST(ExtractCandidateCode, TwoBlocksTakeTheOneWithTheManifest) {
  std::string reply = "```cuda\nhelper\n```\n```cuda\n/* forgek {} */\nkernel\n```";
  std::string code, prose, problem;
  ASSERT_TRUE(ExtractCandidateCode(reply, &code, &prose, &problem)) << problem;
  EXPECT_EQ(code, "/* forgek {} */\nkernel\n");
}

TEST(ExtractCandidateCode, TwoManifestsOrNoneAreAnError) {
  std::string code, prose, problem;
  EXPECT_FALSE(ExtractCandidateCode("```cuda\n/* forgek */\n```\n```cuda\n/* forgek */\n```", &code, &prose, &problem));
  EXPECT_NE(problem.find("2 code blocks in the reply, 2 of them"), std::string::npos) << problem;
  EXPECT_FALSE(ExtractCandidateCode("```cuda\na\n```\n```cuda\nb\n```", &code, &prose, &problem));
  EXPECT_NE(problem.find("2 code blocks in the reply, 0 of them"), std::string::npos) << problem;
}

TEST(ExtractCandidateCode, CutOffReplyIsAnError) {
  std::string code, prose, problem;
  EXPECT_FALSE(ExtractCandidateCode("Here:\n```cuda\n/* forgek\n", &code, &prose, &problem));
  EXPECT_NE(problem.find("never closed"), std::string::npos) << problem;
}

TEST(ParseReplyCandidate, ValidReplyBecomesAProposal) {
  OperatorSpec op = testing::VectorAddOperator();
  Proposal p;
  std::string problem;
  ASSERT_TRUE(ParseReplyCandidate(ReplyWith(VectorAddCandidate(64)), op, &p, &problem)) << problem;
  EXPECT_EQ(p.candidate.source, VectorAddCandidate(64));
  EXPECT_EQ(p.candidate.path, "");
  EXPECT_EQ(p.params, (ParamAssignment{{"BLOCK", 64}}));
  EXPECT_EQ(p.family, "");
  EXPECT_NE(p.rationale.find("coalesced"), std::string::npos);
}

TEST(ParseReplyCandidate, ManifestErrorsNameTheProblem) {
  OperatorSpec op = testing::VectorAddOperator();
  std::string bad = VectorAddCandidate();
  bad.replace(bad.find("\"out\""), 5, "\"outt\"");
  Proposal p;
  std::string problem;
  EXPECT_FALSE(ParseReplyCandidate(ReplyWith(bad), op, &p, &problem));
  EXPECT_NE(problem.find("manifest has problems"), std::string::npos) << problem;
  EXPECT_NE(problem.find("outt"), std::string::npos) << problem;
}

TEST(ParseReplyCandidate, UnparsableManifestJsonIsAProblem) {
  OperatorSpec op = testing::VectorAddOperator();
  Proposal p;
  std::string problem;
  EXPECT_FALSE(ParseReplyCandidate(ReplyWith("/* forgek\n{ \"launches\": [ \n*/\n"), op, &p, &problem));
  EXPECT_NE(problem.find("candidate.cu"), std::string::npos) << problem;
}

TEST(ParseReplyCandidate, ConstraintsFailingEverywhereAreAProblem) {
  OperatorSpec op = testing::VectorAddOperator();
  std::string code = VectorAddCandidate();
  code.replace(code.find("\"launches\""), 10, "\"constraints\": [\"N % 1000 == 0\"], \"launches\"");
  Proposal p;
  std::string problem;
  EXPECT_FALSE(ParseReplyCandidate(ReplyWith(code), op, &p, &problem));
  EXPECT_NE(problem.find("constraints fail for every config"), std::string::npos) << problem;
}

}  // namespace
}  // namespace forgek
