// Tests of the scoreboard view (the table `batch --all` writes and `forgek report` starts with).
#include "forgek/report/scoreboard.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace forgek {
namespace {

TEST(ScoreboardView, AUserFilesPipeOrLineBreakCannotBreakTheTable) {
  ConfigRow r;
  r.op = "op";
  r.config = "a|b";
  r.expert_us = 10;
  r.sealed_us = 8;
  r.speedup = 1.25;
  r.kernel = "k.cu X=1";
  r.mechanisms = {"m1", "m2"};
  r.note = "line one\nline two";
  const std::string md = ScoreboardMarkdown({r}, "## T");
  EXPECT_EQ(md.rfind("## T\n\n| operator | config |", 0), 0u) << md;
  EXPECT_NE(md.find("| op | a\\|b | 10.00 | 8.00 | 1.250x | - | - | - | k.cu X=1 | m1, m2 | line one line two |\n"),
            std::string::npos)
      << md;
  nlohmann::json j = nlohmann::json::parse(ScoreboardJson({r}, "T"));
  EXPECT_EQ(j["rows"][0]["config"], "a|b") << "JSON keeps the text as it is";
  EXPECT_TRUE(j["rows"][0]["sol_pct"].is_null());
  EXPECT_TRUE(j["rows"][0]["seal"].is_null());
}

TEST(ScoreboardView, TheShortSealReasonDropsThePerConfigListButKeepsTheDispatchsReason) {
  EXPECT_EQ(ShortSealReason("not sealed: x; per config: a: 1; b: 2"), "not sealed: x");
  EXPECT_EQ(ShortSealReason("not sealed: x; per config: a: 1; the dispatch did not hold"),
            "not sealed: x; the dispatch did not hold");
  EXPECT_EQ(ShortSealReason("sealed"), "sealed");
}

}  // namespace
}  // namespace forgek
