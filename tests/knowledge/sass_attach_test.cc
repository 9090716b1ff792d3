// SASS for profiles: only cubins of ours are disassembled; library calls and failures leave profiles alone.
#include <gtest/gtest.h>

#include "forgek/knowledge/knowledge.h"

namespace forgek {
namespace {

std::vector<KernelProfile> TwoProfiles() {
  std::vector<KernelProfile> p(2);
  p[0].config = "a";
  p[1].config = "b";
  p[1].sass = "kept";
  return p;
}

TEST(AttachSass, ALibraryCallHasNoCubinToDisassemble) {
  KernelUnderTest k;
  k.label = "reference";
  k.library = "cublas.gemm_bf16";
  std::vector<KernelProfile> p = TwoProfiles();
  AttachSass(k, &p);
  EXPECT_TRUE(p[0].sass.empty());
  EXPECT_EQ(p[1].sass, "kept");
}

TEST(AttachSass, ACubinThatDoesNotDisassembleLeavesTheProfilesAsTheyAre) {
  KernelUnderTest k;
  k.label = "candidate";
  k.cubin = "not a cubin";
  std::vector<KernelProfile> p = TwoProfiles();
  AttachSass(k, &p);  // no disassembler, or one that rejects the bytes: either way nothing changes
  EXPECT_TRUE(p[0].sass.empty());
  EXPECT_EQ(p[1].sass, "kept");
}

}  // namespace
}  // namespace forgek
