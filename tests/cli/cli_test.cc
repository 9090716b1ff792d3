// End-to-end tests of the forgek binary's global behaviour: help, usage errors, exit codes.
#include <gtest/gtest.h>

#include "test_util.h"

namespace forgek {
namespace {

TEST(Cli, HelpListsGlobalOptionsWithEnvironmentTwins) {
  CommandResult r = RunForgek({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* twin : {"FORGEK_STORE", "FORGEK_ARCH", "FORGEK_VERBOSE", "FORGEK_QUIET",
                           "FORGEK_JSON", "FORGEK_LOG_FILE"})
    EXPECT_NE(r.out.find(twin), std::string::npos) << twin << " missing from --help:\n" << r.out;
}

TEST(Cli, UnknownSubcommandIsAUsageError) {
  CommandResult r = RunForgek({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty()) << "diagnostics belong on stderr, got stdout: " << r.out;
  EXPECT_FALSE(r.err.empty());
}

TEST(Cli, BadArchIsAUsageError) {
  CommandResult r = RunForgek({"--arch", "sm42", "version"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("sm42"), std::string::npos) << r.err;
}

TEST(Cli, BatchBudgetOptionsAreCheckedBeforeAnyGpuIsSought) {
  CommandResult none = RunForgek({"batch"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("name the operators to run, or --all"), std::string::npos) << none.err;
  CommandResult both = RunForgek({"batch", "softmax_fp32", "--time", "1h", "--time-per-op", "5m"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("give --time (the total) or --time-per-op, not both"), std::string::npos) << both.err;
  CommandResult bad = RunForgek({"batch", "softmax_fp32", "--time-per-op", "5 minutes"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--time-per-op must look like"), std::string::npos) << bad.err;
}

TEST(Cli, VersionAsJson) {
  CommandResult r = RunForgek({"--json", "version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("\"forgek\""), std::string::npos) << r.out;
}

}  // namespace
}  // namespace forgek
