// The run's profile cache is a store's own measurement: export leaves it out, and an import never
// lets a file's cache rows stand in for a profile the importing store never made.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "forgek/knowledge/store.h"
#include "forgek/knowledge/store_io.h"
#include "test_util.h"

namespace forgek {
namespace {

ProfileRecord Profile(const std::string& subject, double time_us) {
  ProfileRecord p;
  p.operator_name = "softmax_fp32";
  p.arch = "sm90";
  p.subject = subject;
  p.profile.config = "4096x32768";
  p.profile.time_us = time_us;
  return p;
}

std::vector<ProfileRecord> Profiles(Store& store, const std::string& subject) {
  std::vector<ProfileRecord> out;
  std::string err;
  EXPECT_TRUE(store.ListProfiles("softmax_fp32", "sm90", subject, &out, &err)) << err;
  return out;
}

TEST(ProfileCacheIo, ExportLeavesTheCacheOutAndImportNeverTakesIt) {
  TempDir dir;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(dir.file("a.db"), &err)) << err;
  const std::string cache_subject = std::string(kProfileCachePrefix) + "0123abcd";
  ProfileRecord cached = Profile(cache_subject, 268.9);
  ProfileRecord analysed = Profile("reference", 268.9);
  ASSERT_TRUE(store.UpsertOperator({"softmax_fp32", "softmax", ""}, &err)) << err;
  ASSERT_TRUE(store.AddProfile(&cached, &err)) << err;
  ASSERT_TRUE(store.AddProfile(&analysed, &err)) << err;

  std::string text;
  ASSERT_TRUE(ExportStore(store, &text, &err)) << err;
  nlohmann::json doc = nlohmann::json::parse(text);
  ASSERT_EQ(doc["profiles"].size(), 1u) << doc["profiles"].dump();
  EXPECT_EQ(doc["profiles"][0]["subject"], "reference");

  // A file that carries a cache row anyway (written by hand, or by a forgek that exported it).
  nlohmann::json planted = doc["profiles"][0];
  planted["id"] = "planted";
  planted["subject"] = cache_subject;
  doc["profiles"].push_back(planted);
  Store other;
  ASSERT_TRUE(other.Open(dir.file("b.db"), &err)) << err;
  ImportStats st;
  ASSERT_TRUE(ImportStore(other, doc.dump(), "planted.json", &st, &err)) << err;
  EXPECT_EQ(st.cached_profiles_left_out, 1);
  EXPECT_EQ(st.added["profiles"], 1);
  EXPECT_TRUE(Profiles(other, cache_subject).empty()) << "a cache row was imported";
  EXPECT_EQ(Profiles(other, "reference").size(), 1u);
}

}  // namespace
}  // namespace forgek
