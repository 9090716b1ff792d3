// docs/OPERATORS.md lists every config of the shipped suite: the README points there for the
// suite's configs instead of keeping a count of its own.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "forgek/core/operator_spec.h"
#include "test_util.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;

TEST(OperatorsDoc, TheNewestTableHasARowForEveryConfigOfTheSuite) {
  std::set<std::pair<std::string, std::string>> suite;
  std::set<std::string> operators;
  for (const fs::directory_entry& e : fs::directory_iterator(SourceDir() + "/operators")) {
    if (!fs::exists(e.path() / "operator.json")) continue;
    OperatorSpec op;
    Diagnostics diags;
    ASSERT_TRUE(LoadOperator(e.path().string(), &op, &diags)) << FormatDiagnostics(diags);
    operators.insert(op.name);
    for (const ConfigSpec& c : op.configs) suite.insert({op.name, c.name});
  }
  ASSERT_FALSE(suite.empty());

  // The newest dated section comes first: "## <date>, <GPU> (...), N operators, M configs".
  std::istringstream doc(ReadFile(SourceDir() + "/docs/OPERATORS.md"));
  std::string line;
  const std::regex heading(R"(^## .*, (\d+) operators, (\d+) configs$)");
  std::smatch m;
  bool in_section = false;
  std::set<std::pair<std::string, std::string>> rows;
  while (std::getline(doc, line)) {
    if (line.rfind("## ", 0) == 0) {
      if (in_section) break;
      if (!std::regex_match(line, m, heading)) continue;
      in_section = true;
      EXPECT_EQ(std::stoul(m[1]), operators.size()) << line;
      EXPECT_EQ(std::stoul(m[2]), suite.size()) << line;
      continue;
    }
    std::smatch row;
    if (in_section && std::regex_search(line, row, std::regex(R"(^\| ([a-z0-9_]+) \| ([^ |]+) \|)")))
      rows.insert({row[1], row[2]});
  }
  ASSERT_TRUE(in_section) << "no '## <date>, ..., N operators, M configs' section in docs/OPERATORS.md";
  for (const auto& [op, config] : suite) EXPECT_TRUE(rows.count({op, config})) << op << " " << config;
}

}  // namespace
}  // namespace forgek
