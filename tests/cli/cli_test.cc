// End-to-end tests of the forgek binary's global behaviour: help, usage errors, exit codes.
#include <gtest/gtest.h>

#include <sstream>

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

TEST(Cli, VersionAsJson) {
  CommandResult r = RunForgek({"--json", "version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("\"forgek\""), std::string::npos) << r.out;
}

// The subcommands a --help lists (the first word of each line under "SUBCOMMANDS:").
std::vector<std::string> SubcommandsIn(const std::string& help) {
  std::vector<std::string> names;
  std::istringstream in(help);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("Subcommands:", 0) == 0 || line.rfind("SUBCOMMANDS:", 0) == 0) {
      inside = true;
    } else if (inside && line.empty()) {
      inside = false;
    } else if (inside) {
      std::istringstream words(line);
      std::string name;
      if (words >> name) names.push_back(name);
    }
  }
  return names;
}

// Checks `path`'s --help for an example of itself, then every subcommand below it.
void CheckExamples(std::vector<std::string> path, int* checked) {
  std::vector<std::string> args = path;
  args.push_back("--help");
  CommandResult r = RunForgek(args);
  std::string command = "forgek";
  for (const std::string& p : path) command += " " + p;
  EXPECT_EQ(r.exit_code, 0) << command;
  size_t examples = r.out.find("Examples:\n  forgek ");
  EXPECT_NE(examples, std::string::npos) << command << " --help shows no example:\n" << r.out;
  // The examples use the command itself (global options may come between its words).
  if (examples != std::string::npos) {
    EXPECT_NE(r.out.find(" " + path.back(), examples), std::string::npos) << command << ":\n" << r.out;
  }
  ++*checked;
  for (const std::string& sub : SubcommandsIn(r.out)) {
    path.push_back(sub);
    CheckExamples(path, checked);
    path.pop_back();
  }
}

TEST(Cli, EverySubcommandsHelpShowsAnExample) {
  CommandResult top = RunForgek({"--help"});
  std::vector<std::string> commands = SubcommandsIn(top.out);
  ASSERT_GE(commands.size(), 10u) << top.out;
  int checked = 0;
  for (const std::string& c : commands) CheckExamples({c}, &checked);
  EXPECT_GE(checked, 25) << "the nested subcommands (ops list, seal diff, ...) are checked too";
}

TEST(Cli, QuietAndVerboseExcludeEachOther) {
  CommandResult r = RunForgek({"-q", "-v", "version"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--quiet"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

}  // namespace
}  // namespace forgek
