// Tests of the expression language: precedence, functions, every error class, adversarial input.
#include "forgek/core/expr.h"

#include <gtest/gtest.h>

#include <limits>

namespace forgek {
namespace {

const Bindings kVars = {{"M", 4096}, {"N", 1000}, {"K", 64}, {"ZERO", 0}, {"MIN", INT64_MIN}, {"MAX", INT64_MAX}};

int64_t Value(const std::string& text, const Bindings& vars = kVars) {
  int64_t v = 0;
  Diagnostic d;
  EXPECT_TRUE(EvalExpression(text, vars, &v, &d)) << text << ": " << d.str();
  return v;
}

// The error of evaluating `text` (parse or evaluation), with its column.
Diagnostic Error(const std::string& text, const Bindings& vars = kVars) {
  int64_t v = 0;
  Diagnostic d;
  EXPECT_FALSE(EvalExpression(text, vars, &v, &d)) << text << " evaluated to " << v;
  return d;
}

TEST(Expr, Precedence) {
  EXPECT_EQ(Value("1 + 2 * 3"), 7);
  EXPECT_EQ(Value("(1 + 2) * 3"), 9);
  EXPECT_EQ(Value("10 - 4 - 3"), 3);      // left to right
  EXPECT_EQ(Value("100 / 10 / 5"), 2);
  EXPECT_EQ(Value("7 % 4 * 2"), 6);
  EXPECT_EQ(Value("-2 * 3"), -6);
  EXPECT_EQ(Value("- -5"), 5);
  EXPECT_EQ(Value("1 + 2 < 4"), 1);       // sum binds tighter than comparison
  EXPECT_EQ(Value("1 < 2 && 3 > 4 || 1"), 1);
  EXPECT_EQ(Value("1 || 0 && 0"), 1);     // && binds tighter than ||
  EXPECT_EQ(Value("!0 + 1"), 2);
  EXPECT_EQ(Value("!(2 > 1)"), 0);
}

TEST(Expr, Comparisons) {
  EXPECT_EQ(Value("M < N"), 0);
  EXPECT_EQ(Value("M <= 4096"), 1);
  EXPECT_EQ(Value("M > N"), 1);
  EXPECT_EQ(Value("K >= 65"), 0);
  EXPECT_EQ(Value("K == 64"), 1);
  EXPECT_EQ(Value("K != 64"), 0);
}

TEST(Expr, Functions) {
  EXPECT_EQ(Value("ceil_div(N, 128)"), 8);
  EXPECT_EQ(Value("ceil_div(1024, 128)"), 8);
  EXPECT_EQ(Value("ceil_div(0, 128)"), 0);
  EXPECT_EQ(Value("ceil_div(-7, 2)"), -3);  // toward +infinity
  EXPECT_EQ(Value("ceil_div(7, -2)"), -3);
  EXPECT_EQ(Value("ceil_div(MAX, 2)"), INT64_MAX / 2 + 1);  // no overflow from a + b - 1
  EXPECT_EQ(Value("min(M, N, K)"), 64);
  EXPECT_EQ(Value("max(M, N, K, 5000)"), 5000);
  EXPECT_EQ(Value("pow2(10)"), 1024);
  EXPECT_EQ(Value("pow2(0)"), 1);
  EXPECT_EQ(Value("log2(1024)"), 10);
  EXPECT_EQ(Value("log2(1000)"), 9);  // floor
  EXPECT_EQ(Value("log2(1)"), 0);
  EXPECT_EQ(Value("min ( 3 , max(1, 2) )"), 2);
}

TEST(Expr, ShortCircuitGuardsDivision) {
  EXPECT_EQ(Value("ZERO != 0 && M / ZERO > 2"), 0);
  EXPECT_EQ(Value("ZERO == 0 || M / ZERO > 2"), 1);
}

TEST(Expr, NamesAreSortedAndUnique) {
  Diagnostic d;
  auto e = Expr::Parse("ceil_div(N, BN) * max(M, BM, N)", &d);
  ASSERT_TRUE(e) << d.str();
  EXPECT_EQ(e->Names(), (std::vector<std::string>{"BM", "BN", "M", "N"}));
  EXPECT_EQ(e->text(), "ceil_div(N, BN) * max(M, BM, N)");
}

TEST(Expr, ParseOnceEvaluateMany) {
  Diagnostic d;
  auto e = Expr::Parse("2*M*N", &d);
  ASSERT_TRUE(e);
  int64_t v;
  ASSERT_TRUE(e->Eval({{"M", 3}, {"N", 4}}, &v, &d));
  EXPECT_EQ(v, 24);
  ASSERT_TRUE(e->Eval({{"M", 5}, {"N", 5}}, &v, &d));
  EXPECT_EQ(v, 50);
}

TEST(Expr, ParseErrorsCarryTheColumn) {
  struct Case {
    const char* text;
    int column;
    const char* says;
  };
  const Case cases[] = {
      {"", 1, "empty"},
      {"   ", 4, "empty"},
      {"M +", 4, "end of expression"},
      {"M + * 2", 5, "unexpected '*'"},
      {"(M + 1", 1, "unclosed '('"},
      {"M + 1)", 6, "unmatched ')'"},
      {"M N", 3, "after a complete expression"},
      {"M @ 2", 3, "unexpected '@'"},
      {"1 < 2 < 3", 7, "do not chain"},
      {"foo(1)", 1, "unknown function 'foo'"},
      {"ceil_dv(M, 2)", 1, "did you mean 'ceil_div'"},
      {"ceil_div(M)", 1, "takes 2 arguments, got 1"},
      {"pow2(1, 2)", 1, "takes 1 argument, got 2"},
      {"min(M)", 1, "at least 2"},
      {"max()", 1, "got 0"},
      {"min(1, 2", 4, "unclosed '(' of min"},
      {"min(1 2)", 7, "expected ',' or ')'"},
      {"1.5 * M", 1, "only decimal integers"},
      {"2 * 1e9", 5, "invalid integer '1e9'"},
      {"0x10", 1, "invalid integer"},
      {"M = 3", 3, "unexpected '='"},
  };
  for (const Case& c : cases) {
    Diagnostic d;
    EXPECT_EQ(Expr::Parse(c.text, &d), nullptr) << c.text;
    EXPECT_EQ(d.line, 1) << c.text;
    EXPECT_EQ(d.column, c.column) << c.text << ": " << d.message;
    EXPECT_NE(d.message.find(c.says), std::string::npos) << c.text << ": " << d.message;
  }
}

TEST(Expr, EvaluationErrorsCarryTheColumn) {
  Diagnostic d = Error("M + Q");
  EXPECT_EQ(d.column, 5);
  EXPECT_NE(d.message.find("unknown name 'Q'"), std::string::npos);
  d = Error("MM * 2");
  EXPECT_NE(d.message.find("did you mean 'M'"), std::string::npos) << d.message;
  d = Error("M / ZERO");
  EXPECT_EQ(d.column, 3);
  EXPECT_NE(d.message.find("division by zero"), std::string::npos);
  d = Error("M % (K - 64)");
  EXPECT_EQ(d.column, 3);
  EXPECT_NE(d.message.find("modulo by zero"), std::string::npos);
  d = Error("ceil_div(M, ZERO)");
  EXPECT_NE(d.message.find("by zero"), std::string::npos);
  EXPECT_NE(Error("pow2(63)").message.find("[0, 62]"), std::string::npos);
  EXPECT_NE(Error("pow2(-1)").message.find("[0, 62]"), std::string::npos);
  EXPECT_NE(Error("log2(0)").message.find("positive"), std::string::npos);
  EXPECT_NE(Error("log2(-8)").message.find("positive"), std::string::npos);
}

TEST(Expr, OverflowIsAnErrorNotUndefinedBehaviour) {
  EXPECT_NE(Error("MAX + 1").message.find("overflow in '+'"), std::string::npos);
  EXPECT_NE(Error("MIN - 1").message.find("overflow in '-'"), std::string::npos);
  EXPECT_NE(Error("MAX * 2").message.find("overflow in '*'"), std::string::npos);
  EXPECT_NE(Error("M * M * M * M * M * M").message.find("overflow"), std::string::npos);
  Diagnostic d = Error("MIN / -1");
  EXPECT_EQ(d.column, 5);
  EXPECT_NE(d.message.find("overflow in '/'"), std::string::npos);
  EXPECT_NE(Error("-MIN").message.find("overflow"), std::string::npos);
  EXPECT_NE(Error("ceil_div(MIN, -1)").message.find("overflow"), std::string::npos);
  EXPECT_EQ(Value("MIN % -1"), 0);
  EXPECT_EQ(Value("MAX"), INT64_MAX);
  EXPECT_EQ(Value("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(Value("-9223372036854775807 - 1"), INT64_MIN);
}

TEST(Expr, HugeLiteralsAreRejected) {
  Diagnostic d;
  EXPECT_EQ(Expr::Parse("9223372036854775808", &d), nullptr);
  EXPECT_NE(d.message.find("does not fit in 64 bits"), std::string::npos);
  EXPECT_EQ(Expr::Parse("1 + 99999999999999999999999999999999", &d), nullptr);
  EXPECT_EQ(d.column, 5);
}

TEST(Expr, DeepNestingIsRejectedWithoutExhaustingTheStack) {
  std::string ok = std::string(64, '(') + "1" + std::string(64, ')');
  EXPECT_EQ(Value(ok), 1);
  std::string deep = std::string(65, '(') + "1" + std::string(65, ')');
  Diagnostic d;
  EXPECT_EQ(Expr::Parse(deep, &d), nullptr);
  EXPECT_NE(d.message.find("nested deeper than 64"), std::string::npos);
  EXPECT_EQ(d.column, 65);
  std::string very_deep = std::string(10000, '(') + "1" + std::string(10000, ')');
  EXPECT_EQ(Expr::Parse(very_deep, &d), nullptr);
  EXPECT_EQ(Expr::Parse(std::string(100000, '-') + "1", &d), nullptr);
  EXPECT_EQ(Expr::Parse(std::string(100000, '!') + "1", &d), nullptr);
  std::string calls;
  for (int i = 0; i < 600; ++i) calls += "min(1,";  // 3600 characters: within the length limit
  EXPECT_EQ(Expr::Parse(calls, &d), nullptr);
  EXPECT_NE(d.message.find("nested"), std::string::npos) << d.message;
}

TEST(Expr, LongFlatInputIsFineUpToTheLengthLimit) {
  std::string sum = "1";
  for (int i = 0; i < 2047; ++i) sum += "+1";  // 4095 characters (docs/limits.md: 4096)
  EXPECT_EQ(Value(sum), 2048);
  std::string garbage(1 << 20, '#');
  Diagnostic d;
  EXPECT_EQ(Expr::Parse(garbage, &d), nullptr);
  EXPECT_EQ(d.column, 1);
  EXPECT_EQ(d.message, "an expression of 1048576 characters; at most 4096 are allowed");
}

TEST(Expr, WhitespaceIsIgnored) {
  EXPECT_EQ(Value(" \tceil_div( M ,\n 128 ) "), 32);
}

}  // namespace
}  // namespace forgek
