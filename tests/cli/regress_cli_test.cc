// `forgek regress` end to end on the CPU: its usage errors cost no GPU time and write nothing, and
// without a GPU it stops with one line (the classification and reports: tests/seal/regress_test.cc).
#include <gtest/gtest.h>

#include <filesystem>

#include "forgek/knowledge/store.h"
#include "test_util.h"

namespace forgek {
namespace {

std::string Operators() { return SourceDir() + "/operators"; }
bool HasGpu() { return RunForgek({"worker", "--probe"}).exit_code == 0; }

TEST(CliRegress, UsageMistakesExitTwoNamingTheOptionAndWriteNothing) {
  TempDir dir;
  const std::string store = dir.file("store.db");
  struct Case {
    std::vector<std::string> args;
    std::string names;
  };
  const std::vector<Case> cases = {
      {{"--threshold", "1.5"}, "--threshold 1.5"},
      {{"--threshold", "-0.1"}, "--threshold"},
      {{"--ops", "softmax_fp32,no_such_operator"}, "no_such_operator"},
      {{"--junit", dir.file("missing-folder/nightly.xml")}, "--junit"},
      {{"--json-file", dir.path()}, "--json-file"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"--store", store, "--operators", Operators(), "regress"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    CommandResult r = RunForgek(args);
    EXPECT_EQ(r.exit_code, 2) << c.names << "\n" << r.err;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(store)) << "a usage error opens no store";
}

TEST(CliRegress, AStoreThatDoesNotExistIsAFailureNotAnEmptyPass) {
  TempDir dir;
  CommandResult r = RunForgek({"--store", dir.file("typo.db"), "--operators", Operators(), "regress"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(dir.file("typo.db")), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("typo.db"))) << "no store is created";
}

TEST(CliRegress, WithoutAGpuExitsOneWithOneLineReason) {
  if (HasGpu()) GTEST_SKIP() << "a GPU is present";
  TempDir dir;
  {
    Store store;
    std::string err;
    ASSERT_TRUE(store.Open(dir.file("store.db"), &err)) << err;
  }
  CommandResult r = RunForgek({"--store", dir.file("store.db"), "--operators", Operators(), "regress", "--junit",
                               dir.file("nightly.xml")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("no NVIDIA driver"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("nightly.xml"))) << "no report of a check that never ran";
}

TEST(CliRegress, HelpExplainsTheClassesAndTheExitCodes) {
  CommandResult r = RunForgek({"regress", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* s : {"--junit", "--json-file", "--threshold", "--ops", "--across-versions", "slower", "wrong",
                        "skipped", "Exit codes"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

}  // namespace
}  // namespace forgek
