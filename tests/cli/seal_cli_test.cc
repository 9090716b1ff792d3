// End-to-end tests of `forgek seal list|diff` on a store with two seals: aligned columns, JSON.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "forgek/knowledge/store.h"
#include "test_util.h"

namespace forgek {
namespace {

// A store holding seal aaaa1111... and its child bbbb2222....
std::string StoreWithTwoSeals(const TempDir& dir) {
  std::string path = dir.file("store.db");
  Store store;
  std::string err;
  EXPECT_TRUE(store.Open(path, &err)) << err;
  SealRecord a;
  a.id = "aaaa1111aaaa1111";
  a.operator_name = "gemm_bf16";
  a.arch = "sm90";
  a.candidate_hash = "c1";
  a.params_json = R"({"BM": 128, "BN": 128})";
  a.config_us = {{"4096^3", 200.0}, {"8192^3", 1600.0}};
  a.geomean_speedup = 1.2;
  a.created_at = "2026-11-29T10:00:00Z";
  EXPECT_TRUE(store.AddSeal(a, &err)) << err;
  SealRecord b = a;
  b.id = "bbbb2222bbbb2222";
  b.parent = a.id;
  b.candidate_hash = "c2";
  b.params_json = R"({"BM": 128, "BN": 256})";
  b.config_us = {{"4096^3", 160.0}, {"8192^3", 1500.0}};
  b.geomean_speedup = 1.15;
  b.created_at = "2026-11-30T10:00:00Z";
  EXPECT_TRUE(store.AddSeal(b, &err)) << err;
  return path;
}

// `knowledge forget --seal` removes one seal by id prefix; its child then descends from nothing.
TEST(SealCli, KnowledgeForgetSealRemovesOneSeal) {
  TempDir dir;
  std::string store = StoreWithTwoSeals(dir);
  CommandResult r = RunForgek({"--store", store, "knowledge", "forget", "--seal", "aaaa1111"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("forgot 1 row(s)"), std::string::npos) << r.out;
  r = RunForgek({"--store", store, "--json", "seal", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json seals = nlohmann::json::parse(r.out);
  ASSERT_EQ(seals.size(), 1u) << r.out;
  EXPECT_EQ(seals[0]["id"], "bbbb2222bbbb2222");
  EXPECT_EQ(seals[0]["parent"], "");
  r = RunForgek({"--store", store, "knowledge", "forget", "--seal", "zzzz"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no seal with id zzzz"), std::string::npos) << r.err;
  r = RunForgek({"--store", store, "knowledge", "forget", "--seal", "bbbb", "--op", "gemm_bf16"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--seal"), std::string::npos) << r.err;
}

TEST(SealCli, ListShowsTheSpeedupAsOneWord) {
  TempDir dir;
  std::string store = StoreWithTwoSeals(dir);
  CommandResult r = RunForgek({"--store", store, "seal", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" 1.200x "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" 1.150x "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("1.200 "), std::string::npos) << "no gap between number and unit: " << r.out;
}

TEST(SealCli, DiffWithJsonPrintsJson) {
  TempDir dir;
  std::string store = StoreWithTwoSeals(dir);
  CommandResult r = RunForgek({"--store", store, "--json", "seal", "diff", "aaaa1111", "bbbb2222"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);  // throws (and fails the test) on text
  EXPECT_EQ(j["a"]["id"], "aaaa1111aaaa1111");
  EXPECT_EQ(j["b"]["parent"], "aaaa1111aaaa1111");
  EXPECT_EQ(j["params"]["BN"], nlohmann::json::array({128, 256}));
  ASSERT_EQ(j["configs"].size(), 2u);
  EXPECT_EQ(j["configs"][0]["config"], "4096^3");
  EXPECT_DOUBLE_EQ(j["configs"][0]["b_speedup_over_a"].get<double>(), 200.0 / 160.0);
  EXPECT_TRUE(j["b_descends_from_a"].get<bool>());
  EXPECT_FALSE(j["a_descends_from_b"].get<bool>());

  r = RunForgek({"--store", store, "seal", "diff", "aaaa1111", "bbbb2222"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("b descends from a"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace forgek
