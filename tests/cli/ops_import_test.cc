// `forgek ops import kernelbench`: the operator folder written from a KernelBench fixture, and
// nothing written when the problem, the seed or the name is refused.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace forgek {
namespace {

std::string Fixture(const std::string& name) { return SourceDir() + "/tests/fixtures/import/kernelbench/" + name; }

// A plain ReLU seed over x[batch_size, dim] -> out.
const char* kReluSeed = R"SEED(/* forgek
{ "name": "relu_seed",
  "params": {"THREADS": 256},
  "launches": [ {"kernel": "relu_seed", "grid": ["ceil_div(batch_size * dim, THREADS)"], "block": ["THREADS"],
                 "args": ["x", "out", "batch_size", "dim"]} ] }
*/
extern "C" __global__ void relu_seed(const float* x, float* out, int rows, int cols) {
  long i = (long)blockIdx.x * THREADS + threadIdx.x;
  if (i < (long)rows * cols) out[i] = x[i] > 0.f ? x[i] : 0.f;
}
)SEED";

CommandResult Import(const TempDir& tmp, std::vector<std::string> args) {
  args.insert(args.begin(), {"--operators", tmp.file("ops"), "ops", "import", "kernelbench"});
  return RunForgek(args, {"XDG_CACHE_HOME=" + tmp.file("cache")});
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
  return out;
}

TEST(OpsImport, KernelBenchReluWritesAValidOperator) {
  TempDir tmp;
  std::filesystem::create_directories(tmp.file("ops"));
  WriteFile(tmp.file("seed.cu"), kReluSeed);
  CommandResult r = Import(tmp, {Fixture("level1_19_ReLU.py"), "--seed", tmp.file("seed.cu"), "--sizes",
                                 "batch_size=64,dim=4096", "--name", "relu_fp32"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, tmp.file("ops/relu_fp32") + "\n");
  EXPECT_EQ(Entries(tmp.file("ops")), std::vector<std::string>{"relu_fp32"});
  nlohmann::json op = nlohmann::json::parse(ReadFile(tmp.file("ops/relu_fp32/operator.json")));
  EXPECT_EQ(op["golden"], "golden.py");
  EXPECT_EQ(op["params"], nlohmann::json({"batch_size", "dim"}));
  EXPECT_EQ(op["configs"][0]["values"], nlohmann::json({{"batch_size", 64}, {"dim", 4096}}));
  EXPECT_EQ(op["tensors"][1]["shape"], nlohmann::json({"batch_size", "dim"}));
  EXPECT_EQ(op["tolerance"]["rel_l2"], 1e-4);
  EXPECT_EQ(op["bytes"], "4*batch_size*dim + 4*batch_size*dim");
  EXPECT_EQ(ReadFile(tmp.file("ops/relu_fp32/golden.py")), ReadFile(Fixture("level1_19_ReLU.py")));
  CommandResult v = RunForgek({"--operators", tmp.file("ops"), "ops", "validate", "relu_fp32"},
                              {"XDG_CACHE_HOME=" + tmp.file("cache")});
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  // Importing it again is refused, the folder unchanged.
  r = Import(tmp, {Fixture("level1_19_ReLU.py"), "--seed", tmp.file("seed.cu"), "--name", "relu_fp32"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("already exists"), std::string::npos) << r.err;
}

// Level-1 and level-2 problems with plain seeds (tests/fixtures/import/seeds/): each folder validates,
// NVRTC included, with its sizes named.
TEST(OpsImport, KernelBenchLevel1AndLevel2ProblemsImportAndValidate) {
  struct Case {
    const char* file;
    const char* seed;
    const char* sizes;
    const char* name;
    const char* category;
    std::vector<std::string> params;
  };
  const Case cases[] = {
      {"level1_23_Softmax.py", "softmax_seed.cu", "batch_size=64,dim=4096", "softmax_rows", "softmax", {"batch_size", "dim"}},
      {"level1_89_cumsum.py", "cumsum_seed.cu", "batch_size=64", "cumsum_rows", "scan", {"batch_size"}},
      {"level1_36_RMSNorm_.py", "rmsnorm_seed.cu", "batch_size=4,dim1=64,dim2=64", "rmsnorm_features", "norm",
       {"batch_size", "dim1", "dim2", "features"}},
      {"level2_9_Matmul_Subtract_Multiply_ReLU.py", "linear_sub_mul_relu_seed.cu",
       "batch_size=64,in_features=1024,out_features=512", "linear_sub_mul_relu", "elementwise",
       {"batch_size", "in_features", "out_features"}},
  };
  TempDir tmp;
  std::filesystem::create_directories(tmp.file("ops"));
  const std::string seeds = SourceDir() + "/tests/fixtures/import/seeds/";
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    CommandResult r =
        Import(tmp, {Fixture(c.file), "--seed", seeds + c.seed, "--sizes", c.sizes, "--name", c.name});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    nlohmann::json op = nlohmann::json::parse(ReadFile(tmp.file(std::string("ops/") + c.name + "/operator.json")));
    EXPECT_EQ(op["params"], nlohmann::json(c.params));
    EXPECT_EQ(op["category"], c.category);
    CommandResult v = RunForgek({"--operators", tmp.file("ops"), "ops", "validate", c.name},
                                {"XDG_CACHE_HOME=" + tmp.file("cache")});
    EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  }
}

TEST(OpsImport, BrokenProblemIsRefusedWithItsLineAndNothingWritten) {
  TempDir tmp;
  std::filesystem::create_directories(tmp.file("ops"));
  WriteFile(tmp.file("seed.cu"), kReluSeed);
  std::string text = ReadFile(Fixture("level1_19_ReLU.py"));
  text.replace(text.find("return torch.relu(x)"), 20, "return torch.relu(x");
  WriteFile(tmp.file("broken.py"), text);
  CommandResult r = Import(tmp, {tmp.file("broken.py"), "--seed", tmp.file("seed.cu")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find(tmp.file("broken.py") + ":"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("syntax error"), std::string::npos) << r.err;
  EXPECT_TRUE(Entries(tmp.file("ops")).empty());
}

TEST(OpsImport, ASeedThatDoesNotFitIsRefusedAndNothingWritten) {
  TempDir tmp;
  std::filesystem::create_directories(tmp.file("ops"));
  WriteFile(tmp.file("seed.cu"), kReluSeed);
  // The ReLU seed names x, out, batch_size and dim; the level-2 problem has no `dim`.
  CommandResult r = Import(tmp, {Fixture("level2_9_Matmul_Subtract_Multiply_ReLU.py"), "--seed", tmp.file("seed.cu"),
                                 "--sizes", "batch_size=16"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("does not validate (nothing written)"), std::string::npos) << r.err;
  EXPECT_TRUE(Entries(tmp.file("ops")).empty());
}

TEST(OpsImport, UsageErrors) {
  TempDir tmp;
  std::filesystem::create_directories(tmp.file("ops"));
  WriteFile(tmp.file("seed.cu"), kReluSeed);
  EXPECT_EQ(Import(tmp, {Fixture("level1_19_ReLU.py")}).exit_code, 2);  // no --seed
  CommandResult r = Import(tmp, {Fixture("level1_19_ReLU.py"), "--seed", tmp.file("seed.cu"), "--sizes", "dim=x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("dim must be a positive integer"), std::string::npos) << r.err;
  EXPECT_EQ(Import(tmp, {tmp.file("missing.py"), "--seed", tmp.file("seed.cu")}).exit_code, 2);
  EXPECT_TRUE(Entries(tmp.file("ops")).empty());
}

}  // namespace
}  // namespace forgek
