// Making outside text valid UTF-8: valid text unchanged, each bad byte one U+FFFD.
#include <gtest/gtest.h>

#include "forgek/core/utf8_text.h"

namespace forgek {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST(Utf8Text, ValidTextIsUnchanged) {
  for (const std::string& s : {std::string(), std::string("plain ascii\n"), std::string("caf\xC3\xA9"),
                               std::string("\xE2\x82\xAC 5"), std::string("\xF0\x9F\x98\x80"),
                               std::string("\xF4\x8F\xBF\xBF"), std::string("a\0b", 3)}) {
    EXPECT_TRUE(IsValidUtf8(s)) << s;
    EXPECT_EQ(ValidUtf8(s), s);
  }
}

TEST(Utf8Text, EachInvalidByteBecomesOneReplacementCharacter) {
  EXPECT_EQ(ValidUtf8("caf\xE9"), "caf" + kFffd);                         // Latin-1
  EXPECT_EQ(ValidUtf8("\xC3"), kFffd);                                    // cut at the end
  EXPECT_EQ(ValidUtf8("\xE2\x82" "x"), kFffd + kFffd + "x");              // cut in the middle
  EXPECT_EQ(ValidUtf8("\xC0\xAF"), kFffd + kFffd);                        // overlong '/'
  EXPECT_EQ(ValidUtf8("\xE0\x80\xAF"), kFffd + kFffd + kFffd);            // overlong, 3 bytes
  EXPECT_EQ(ValidUtf8("\xED\xA0\x80"), kFffd + kFffd + kFffd);            // a UTF-16 surrogate
  EXPECT_EQ(ValidUtf8("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);  // past U+10FFFF
  EXPECT_EQ(ValidUtf8("\xFF" "ok"), kFffd + "ok");
  EXPECT_EQ(ValidUtf8("\x80"), kFffd);                                    // a lone continuation byte
  for (const char* bad : {"caf\xE9", "\xC3", "\xED\xA0\x80", "\xFF"}) {
    EXPECT_FALSE(IsValidUtf8(bad)) << bad;
    EXPECT_TRUE(IsValidUtf8(ValidUtf8(bad))) << bad;
  }
}

}  // namespace
}  // namespace forgek
