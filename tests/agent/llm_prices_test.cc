// The price table: lookup by exact name, dated versions and vendor prefixes; cost; errors.
#include <gtest/gtest.h>

#include "agent/llm_prices.h"
#include "test_util.h"

namespace forgek {
namespace {

const char* kPrices = R"({"fallback": {"input_per_mtok": 50, "output_per_mtok": 60},
  "models": {"gpt-4o": {"input_per_mtok": 2.5, "output_per_mtok": 10},
             "gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6}}})";

TEST(PriceTable, FindsExactPrefixVendorAndFallback) {
  PriceTable t;
  std::string err;
  ASSERT_TRUE(t.Parse("prices.json", kPrices, &err)) << err;
  bool fallback = true;
  EXPECT_DOUBLE_EQ(t.Find("gpt-4o", &fallback).input_per_mtok, 2.5);
  EXPECT_FALSE(fallback);
  EXPECT_DOUBLE_EQ(t.Find("gpt-4o-mini-2024-07-18").output_per_mtok, 0.6);  // longest prefix wins
  EXPECT_DOUBLE_EQ(t.Find("gpt-4o-2024-08-06").output_per_mtok, 10);
  EXPECT_DOUBLE_EQ(t.Find("openai/gpt-4o").input_per_mtok, 2.5);
  EXPECT_DOUBLE_EQ(t.Find("llama-3-70b", &fallback).input_per_mtok, 50);
  EXPECT_TRUE(fallback);
}

TEST(PriceTable, CostIsPerMillionTokens) {
  PriceTable t;
  std::string err;
  ASSERT_TRUE(t.Parse("prices.json", kPrices, &err)) << err;
  EXPECT_NEAR(t.Cost("gpt-4o", 1'000'000, 100'000), 2.5 + 1.0, 1e-12);
}

TEST(PriceTable, ErrorsNameFileAndField) {
  PriceTable t;
  std::string err;
  EXPECT_FALSE(t.Parse("p.json", "[1]", &err));
  EXPECT_EQ(err, "p.json: not a JSON object");
  EXPECT_FALSE(t.Parse("p.json", R"({"models": {}})", &err));
  EXPECT_NE(err.find("p.json: fallback: missing"), std::string::npos) << err;
  EXPECT_FALSE(t.Parse("p.json", R"({"fallback": {"input_per_mtok": 1, "output_per_mtok": 1},
                                    "models": {"m": {"input_per_mtok": -1, "output_per_mtok": 1}}})",
                       &err));
  EXPECT_NE(err.find("p.json: models.m.input_per_mtok"), std::string::npos) << err;
}

TEST(PriceTable, ShippedTableLoads) {
  PriceTable t;
  std::string err;
  ASSERT_TRUE(t.Load(SourceDir() + "/knowledge/prompts/prices.json", &err)) << err;
  bool fallback = true;
  t.Find("claude-sonnet-4-5-20250929", &fallback);
  EXPECT_FALSE(fallback);
}

}  // namespace
}  // namespace forgek
