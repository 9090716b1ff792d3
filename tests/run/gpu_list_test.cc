// Tests of `--gpus` parsing.
#include "forgek/run/gpu_list.h"

#include <gtest/gtest.h>

namespace forgek {
namespace {

std::vector<int> Parse(const std::string& spec, int count) {
  std::vector<int> out;
  std::string err;
  EXPECT_TRUE(ParseGpuList(spec, count, &out, &err)) << spec << ": " << err;
  return out;
}

std::string Error(const std::string& spec, int count) {
  std::vector<int> out;
  std::string err;
  EXPECT_FALSE(ParseGpuList(spec, count, &out, &err)) << spec;
  return err;
}

TEST(GpuList, AllCountAndList) {
  EXPECT_EQ(Parse("all", 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(Parse("", 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(Parse("2", 8), (std::vector<int>{0, 1}));
  EXPECT_EQ(Parse("0,2,3", 4), (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(Parse("3,", 4), (std::vector<int>{3}));
}

TEST(GpuList, ErrorsNameTheProblem) {
  EXPECT_NE(Error("9", 8).find("has 8"), std::string::npos);
  EXPECT_NE(Error("0,8", 8).find("device 8 does not exist"), std::string::npos);
  EXPECT_NE(Error("1,1", 8).find("twice"), std::string::npos);
  EXPECT_NE(Error("x", 8).find("--gpus must be"), std::string::npos);
  EXPECT_NE(Error("0,,1", 8).find("not a device index"), std::string::npos);
  EXPECT_NE(Error("0", 8).find("--gpus must be"), std::string::npos);
  EXPECT_NE(Error("all", 0).find("no GPU"), std::string::npos);
}

}  // namespace
}  // namespace forgek
