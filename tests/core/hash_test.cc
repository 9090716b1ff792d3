// Tests of content hashing.
#include "forgek/core/hash.h"

#include <gtest/gtest.h>

namespace forgek {
namespace {

TEST(Hash, Sha256KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Hash, CandidateHashDependsOnSourceAndEveryParam) {
  std::string h = CandidateHash("src", {{"BM", 128}, {"BN", 64}});
  EXPECT_EQ(h, CandidateHash("src", {{"BN", 64}, {"BM", 128}}));
  EXPECT_NE(h, CandidateHash("src", {{"BM", 128}, {"BN", 128}}));
  EXPECT_NE(h, CandidateHash("src2", {{"BM", 128}, {"BN", 64}}));
  EXPECT_NE(h, CandidateHash("src", {{"BM", 128}}));
}

}  // namespace
}  // namespace forgek
