// Tests of the bounds of candidate manifests (docs/limits.md) and of the "archs" field: a file
// beyond a bound is rejected at the field that exceeds it, quickly, with a short message.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>

#include "forgek/core/candidate.h"
#include "forgek/core/diagnostic.h"
#include "forgek/core/expr.h"
#include "forgek/core/spec_limits.h"

namespace forgek {
namespace {

std::string Manifest(const std::string& fields) {
  return "/* forgek\n{ " + fields + " }\n*/\nextern \"C\" __global__ void k(float* y) {}\n";
}

const char* kLaunch = R"({"kernel": "k", "grid": [1], "block": [32], "args": ["y"]})";

// Parses `source`; true when it fails with `says` in the message of the diagnostic at `field`.
::testing::AssertionResult RejectedAt(const std::string& source, const std::string& field, const std::string& says) {
  Candidate c;
  Diagnostics diags;
  if (ParseCandidate("k.cu", source, &c, &diags)) return ::testing::AssertionFailure() << "accepted";
  for (const Diagnostic& d : diags)
    if (d.field == field && d.message.find(says) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << FormatDiagnostics(diags).substr(0, 2000);
}

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

double CpuSecondsSince(std::clock_t t) { return static_cast<double>(std::clock() - t) / CLOCKS_PER_SEC; }

TEST(ManifestLimits, TooManyLaunches) {
  std::string launches;
  for (size_t i = 0; i < 5000; ++i) launches += (i ? ", " : "") + std::string(kLaunch);
  EXPECT_TRUE(RejectedAt(Manifest(R"("launches": [)" + launches + "]"), "launches",
                         "5000 launches; a candidate may make at most 64"));
  std::string at_limit;
  for (size_t i = 0; i < kMaxLaunchesPerCandidate; ++i) at_limit += (i ? ", " : "") + std::string(kLaunch);
  Candidate c;
  Diagnostics diags;
  EXPECT_TRUE(ParseCandidate("k.cu", Manifest(R"("launches": [)" + at_limit + "]"), &c, &diags))
      << FormatDiagnostics(diags);
}

TEST(ManifestLimits, AHugeDomainIsRejectedBeforeItsValuesAreRead) {
  std::string values;  // as many as a source of at most 1 MiB holds
  for (int i = 0; i < 150000; ++i) values += (i ? "," : "") + std::to_string(i);
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(RejectedAt(Manifest(R"("params": {"D": [)" + values + R"(]}, "launches": [)" + kLaunch + "]"),
                         "params.D", "a domain of 150000 values; at most 1024"));
  EXPECT_LT(SecondsSince(start), 10) << "rejected in bounded time";
}

TEST(ManifestLimits, AFamilyOfTooManyInstances) {
  std::string domain;
  for (int i = 0; i < 1000; ++i) domain += (i ? "," : "") + std::to_string(i);
  std::string params;
  for (const char* p : {"A", "B", "C", "D"}) params += std::string(params.empty() ? "" : ", ") + "\"" + p + "\": [" + domain + "]";
  EXPECT_TRUE(RejectedAt(Manifest(R"("params": {)" + params + R"(}, "launches": [)" + kLaunch + "]"), "params",
                         "the domains describe more than 4294967296 instances"));
}

TEST(ManifestLimits, TooManyParams) {
  std::string params;
  for (int i = 0; i < 65; ++i) params += (i ? ", " : "") + std::string("\"P") + std::to_string(i) + "\": 1";
  EXPECT_TRUE(RejectedAt(Manifest(R"("params": {)" + params + R"(}, "launches": [)" + kLaunch + "]"), "params",
                         "65 params; a candidate may declare at most 64"));
}

// Lets chained one on the next: L0 = 1, Li = L(i-1) + 1.
std::string Lets(size_t n) {
  std::string lets;
  for (size_t i = 0; i < n; ++i)
    lets += (i ? ", \"L" : "\"L") + std::to_string(i) + "\": \"" + (i ? "L" + std::to_string(i - 1) + " + 1" : "1") + "\"";
  return lets;
}

// As many short lets as a source of at most 1 MiB holds: "a0":1,"a1":1,...
std::string ShortLets(size_t n) {
  std::string lets;
  for (size_t i = 0; i < n; ++i) lets += (i ? ",\"a" : "\"a") + std::to_string(i) + "\":1";
  return lets;
}

TEST(ManifestLimits, TooManyLetsAreRejectedBeforeAnyIsRead) {
  EXPECT_TRUE(RejectedAt(Manifest(R"("let": {)" + Lets(300) + R"(}, "launches": [)" + kLaunch + "]"), "let",
                         "300 lets; a candidate may declare at most 256"));
  Candidate c;
  Diagnostics diags;
  EXPECT_TRUE(ParseCandidate("k.cu", Manifest(R"("let": {)" + Lets(kMaxLetsPerCandidate) + R"(}, "launches": [)" +
                                               kLaunch + "]"),
                             &c, &diags))
      << FormatDiagnostics(diags);
  EXPECT_EQ(c.manifest.lets.size(), kMaxLetsPerCandidate);
}

// 150 000 lets took about 70 s before anything compiled: the manifest's JSON object was built
// with a linear search per member (n^2), and each let's names were looked up in a list of the
// lets before it. Now a source holds at most 1 MiB, its object is built in n log n and the count is
// refused before any let is read: 80 000 lets (what 1 MiB holds) took minutes, now well under a second.
// Times are processor time: a loaded machine must not fail these, quadratic work must.
TEST(ManifestLimits, ManyLetsAreAnsweredInBoundedTime) {
  const std::string source = Manifest(R"("let": {)" + ShortLets(80000) + R"(}, "launches": [)" + kLaunch + "]");
  ASSERT_LT(source.size(), kMaxCandidateSourceBytes);
  std::clock_t start = std::clock();
  EXPECT_TRUE(RejectedAt(source, "let", "80000 lets; a candidate may declare at most 256"));
  EXPECT_LT(CpuSecondsSince(start), 5) << "rejected in bounded time";
  const std::string too_big = Manifest(R"("let": {)" + Lets(150000) + R"(}, "launches": [)" + kLaunch + "]");
  start = std::clock();
  Candidate c;
  Diagnostics diags;
  EXPECT_FALSE(ParseCandidate("k.cu", too_big, &c, &diags));
  EXPECT_LT(CpuSecondsSince(start), 1) << "refused from its size";
}

TEST(ManifestLimits, ASourceOverOneMebibyteIsRejectedNamingItsSizeAndTheLimit) {
  std::string source = Manifest(R"("launches": [)" + std::string(kLaunch) + "]");
  source += "// " + std::string(kMaxCandidateSourceBytes, 'x') + "\n";
  Candidate c;
  Diagnostics diags;
  EXPECT_FALSE(ParseCandidate("big.cu", source, &c, &diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].file, "big.cu");
  EXPECT_NE(diags[0].message.find("is " + std::to_string(source.size()) + " bytes"), std::string::npos)
      << diags[0].message;
  EXPECT_NE(diags[0].message.find("at most 1048576 bytes (1 MiB)"), std::string::npos) << diags[0].message;
}

TEST(ManifestLimits, ALongExpressionIsRejectedAndNotEchoed) {
  std::string expr = "1";
  for (int i = 0; i < 200000; ++i) expr += "+1";
  Diagnostic d;
  EXPECT_FALSE(Expr::Parse(expr, &d));
  EXPECT_NE(d.message.find("an expression of 400001 characters; at most 4096"), std::string::npos) << d.message;
  std::string launch = R"({"kernel": "k", "grid": [")" + expr + R"("], "block": [32], "args": ["y"]})";
  Candidate c;
  Diagnostics diags;
  EXPECT_FALSE(ParseCandidate("k.cu", Manifest(R"("launches": [)" + launch + "]"), &c, &diags));
  EXPECT_LT(FormatDiagnostics(diags).size(), 1000u) << "the expression is not echoed";
  std::string at_limit(kMaxExpressionChars, ' ');
  at_limit.back() = '1';
  EXPECT_TRUE(Expr::Parse(at_limit, &d)) << d.message;
}

TEST(ManifestLimits, ALongDiagnosticMessageIsCut) {
  Diagnostic d{"f.json", "name", 1, 2, std::string(100000, 'x')};
  std::string shown = d.str();
  EXPECT_LT(shown.size(), kMaxDiagnosticChars + 100);
  EXPECT_NE(shown.find("(98000 more characters cut)"), std::string::npos) << shown.substr(shown.size() - 60);
}

TEST(ManifestArchs, DeclaredArchsDecideWhereAKernelIsUsed) {
  Candidate c;
  Diagnostics diags;
  ASSERT_TRUE(ParseCandidate("k.cu", Manifest(R"("archs": ["sm90"], "launches": [)" + std::string(kLaunch) + "]"), &c,
                             &diags))
      << FormatDiagnostics(diags);
  EXPECT_TRUE(c.manifest.ForArch("sm90"));
  EXPECT_FALSE(c.manifest.ForArch("sm100"));
  EXPECT_EQ(c.manifest.ArchsText(), "sm90");
  Candidate any;
  ASSERT_TRUE(ParseCandidate("k.cu", Manifest(R"("launches": [)" + std::string(kLaunch) + "]"), &any, &diags));
  EXPECT_TRUE(any.manifest.ForArch("sm100")) << "no archs: every arch";
  EXPECT_TRUE(RejectedAt(Manifest(R"("archs": ["sm80"], "launches": [)" + std::string(kLaunch) + "]"), "archs[0]",
                         "unknown arch 'sm80'; one of sm90, sm100"));
  EXPECT_TRUE(RejectedAt(Manifest(R"("archs": [], "launches": [)" + std::string(kLaunch) + "]"), "archs",
                         "name at least one arch"));
  EXPECT_TRUE(RejectedAt(Manifest(R"("archs": ["sm90", "sm90"], "launches": [)" + std::string(kLaunch) + "]"),
                         "archs[1]", "appears twice"));
}

}  // namespace
}  // namespace forgek
