// Imported token counts are bounded as a provider's usage is: a count beyond 2^40 is refused.
#include <gtest/gtest.h>

#include <cstdint>

#include "forgek/core/token_count.h"
#include "knowledge/import_check.h"

namespace forgek::store_detail {
namespace {

TEST(ImportTokenBound, TokenCountsAboveTheBoundAreRefusedNamingTheBound) {
  for (const char* field : {"prompt_tokens", "completion_tokens"}) {
    ColumnInfo column{field, "INTEGER", true};
    std::string err;
    EXPECT_TRUE(CheckImportValue("exchanges", column, kMaxTokenCount, &err)) << err;
    EXPECT_TRUE(CheckImportValue("exchanges", column, 0, &err)) << err;
    for (nlohmann::json huge : {nlohmann::json(kMaxTokenCount + 1), nlohmann::json(INT64_MAX)}) {
      err.clear();
      EXPECT_FALSE(CheckImportValue("exchanges", column, huge, &err)) << field;
      EXPECT_EQ(err, "expected a token count up to 1099511627776, got " + huge.dump());
    }
  }
}

}  // namespace
}  // namespace forgek::store_detail
