// URL helpers: userinfo found, secrets masked for printing, endpoint paths put before the query.
#include <gtest/gtest.h>

#include "forgek/core/url_text.h"

namespace forgek {
namespace {

TEST(UrlText, UserinfoIsFoundOnlyInTheHostPart) {
  EXPECT_TRUE(UrlHasUserinfo("http://user:sk-SECRET@127.0.0.1:8000/v1"));
  EXPECT_TRUE(UrlHasUserinfo("https://token@api.example.com"));
  EXPECT_FALSE(UrlHasUserinfo("https://api.example.com/v1"));
  EXPECT_FALSE(UrlHasUserinfo("https://api.example.com/v1/users/@me"));
  EXPECT_FALSE(UrlHasUserinfo("https://api.example.com/v1?email=a@b.c"));
}

TEST(UrlText, RedactMasksUserinfoQueryValuesAndFragmentButKeepsHostAndPath) {
  EXPECT_EQ(RedactUrl("http://user:sk-URLSECRET@127.0.0.1:18602/v1?key=sk-QUERYSECRET"),
            "http://***@127.0.0.1:18602/v1?key=***");
  EXPECT_EQ(RedactUrl("https://api.example.com/v1"), "https://api.example.com/v1");
  EXPECT_EQ(RedactUrl("https://h/v1?api-version=2024&key=abc&bare"), "https://h/v1?api-version=***&key=***&***");
  EXPECT_EQ(RedactUrl("https://a@b@h/x#frag-secret"), "https://***@h/x#***");
  EXPECT_EQ(RedactUrl("https://h?k=v"), "https://h?k=***");
  EXPECT_EQ(RedactUrl("not a url?k=v"), "not a url?k=***");
}

TEST(UrlText, AnEndpointGoesIntoThePathBeforeTheQuery) {
  EXPECT_EQ(UrlWithPath("http://h:1/v1", "/chat/completions"), "http://h:1/v1/chat/completions");
  EXPECT_EQ(UrlWithPath("http://h:1/v1?api-version=1", "/chat/completions"),
            "http://h:1/v1/chat/completions?api-version=1");
  EXPECT_EQ(UrlWithPath("http://h:1/v1/?a=b#f", "/chat/completions"), "http://h:1/v1/chat/completions?a=b#f");
  EXPECT_EQ(UrlWithPath("https://api.anthropic.com", "/v1/messages"), "https://api.anthropic.com/v1/messages");
  EXPECT_EQ(UrlWithPath("https://h?x=1", "/v1/messages"), "https://h/v1/messages?x=1");
}

}  // namespace
}  // namespace forgek
