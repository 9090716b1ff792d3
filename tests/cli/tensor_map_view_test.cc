// `ops validate` refuses a tensor map that views more than its buffer, and an unbounded workspace,
// naming the kernel file, the tensor map and the config.
#include <gtest/gtest.h>

#include "operator_copy.h"
#include "test_util.h"

namespace forgek {
namespace {

// tiny_scale's seed with `extra` manifest fields and `args` for its one launch.
void WriteSeed(const std::string& ops, const std::string& extra, const std::string& args) {
  WriteFile(ops + "/tiny_scale/seed.cu", R"cu(/* forgek
{ "name": "scale_seed", "params": {"THREADS": 128}, )cu" + extra + R"cu(
  "launches": [ {"kernel": "scale_seed", "grid": ["ceil_div(N, THREADS)"], "block": ["THREADS"],
                 "args": [)cu" + args + R"cu(]} ] }
*/
extern "C" __global__ void scale_seed(const float* x, float* y, float alpha, int n) {}
)cu");
}

TEST(TensorMapView, OpsValidateRefusesAViewBeyondItsWorkspace) {
  TempDir dir;
  std::string ops = CopyTinyScale(dir.file("ops"));
  WriteSeed(ops, R"j("workspaces": [{"name": "ws", "bytes": 16}],
  "tensor_maps": [{"name": "tm", "tensor": "ws", "shape": ["pow2(31)", "pow2(31)"], "box": [1, 1]}],)j",
            R"("x", "y", "alpha", "N", "tm")");
  CommandResult r = RunForgek({"--operators", ops, "ops", "validate", "--no-compile", "tiny_scale"},
                              {"XDG_CACHE_HOME=" + dir.path()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // was 0: the view passed
  std::string all = r.out + r.err;
  EXPECT_NE(all.find(ops + "/tiny_scale/seed.cu"), std::string::npos) << all;
  EXPECT_NE(all.find("tensor_maps[0].shape"), std::string::npos) << all;
  EXPECT_NE(all.find("tensor map 'tm' views 2147483648 x 2147483648 elements of 4 bytes"), std::string::npos) << all;
  EXPECT_NE(all.find("config 'small'"), std::string::npos) << all;
}

TEST(TensorMapView, OpsValidateRefusesAWorkspaceOfTwoToThe62Bytes) {
  TempDir dir;
  std::string ops = CopyTinyScale(dir.file("ops"));
  WriteSeed(ops, R"j("workspaces": [{"name": "ws", "bytes": "pow2(62)"}],)j", R"("x", "y", "alpha", "N", "ws")");
  CommandResult r = RunForgek({"--operators", ops, "ops", "validate", "--no-compile", "tiny_scale"},
                              {"XDG_CACHE_HOME=" + dir.path()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // was 0
  std::string all = r.out + r.err;
  EXPECT_NE(all.find("workspaces[0].bytes"), std::string::npos) << all;
  EXPECT_NE(all.find("a workspace may hold at most 1099511627776"), std::string::npos) << all;
}

}  // namespace
}  // namespace forgek
