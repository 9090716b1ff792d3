// `forgek ops import kernelbench|flashinfer`: the operator folder written from a KernelBench or
// FlashInfer-Bench fixture, and nothing written when the problem, the seed or the name is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

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

// No --seed: forgek writes the seed of an elementwise problem from its traced forward; the folder
// validates, NVRTC included. A problem that is not elementwise is refused, naming why, nothing written.
TEST(OpsImport, ForgekWritesTheSeedOfAnElementwiseProblem) {
  TempDir tmp;
  std::filesystem::create_directories(tmp.file("ops"));
  CommandResult r = Import(tmp, {Fixture("level1_19_ReLU.py"), "--sizes", "batch_size=64,dim=4096", "--name", "relu_w"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string seed = ReadFile(tmp.file("ops/relu_w/seed.cu"));
  EXPECT_NE(seed.find("Written by forgek from the problem's traced forward"), std::string::npos) << seed;
  EXPECT_NE(seed.find("fmaxf(v0, 0.f)"), std::string::npos) << seed;
  CommandResult v = RunForgek({"--operators", tmp.file("ops"), "ops", "validate", "relu_w"},
                              {"XDG_CACHE_HOME=" + tmp.file("cache")});
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;

  // bf16 tensors, a module activation, numbers and a clamp: the seed compiles too.
  r = Import(tmp, {SourceDir() + "/tests/fixtures/import/written/activations_bf16.py", "--name", "act_bf16"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  v = RunForgek({"--operators", tmp.file("ops"), "ops", "validate", "act_bf16"}, {"XDG_CACHE_HOME=" + tmp.file("cache")});
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;

  r = Import(tmp, {Fixture("level2_9_Matmul_Subtract_Multiply_ReLU.py"), "--sizes",
                   "batch_size=64,in_features=1024,out_features=512", "--name", "linear_w"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("forgek writes one only for an elementwise problem"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("give --seed FILE or --agent llm"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(tmp.file("ops/linear_w")));
  EXPECT_EQ(Entries(tmp.file("ops")).size(), 2u);
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
    double max_abs_at_least;  // KernelBench's rtol of the outputs' magnitude, at least 1e-3 (fp32)
  };
  const Case cases[] = {
      {"level1_23_Softmax.py", "softmax_seed.cu", "batch_size=64,dim=4096", "softmax_rows", "softmax",
       {"batch_size", "dim"}, 1e-3},
      // Running sums of 32768 values in [0, 1) reach ~16384: rtol 1e-4 of twice that.
      {"level1_89_cumsum.py", "cumsum_seed.cu", "batch_size=64", "cumsum_rows", "scan", {"batch_size"}, 3.0},
      {"level1_36_RMSNorm_.py", "rmsnorm_seed.cu", "batch_size=4,dim1=64,dim2=64", "rmsnorm_features", "norm",
       {"batch_size", "dim1", "dim2", "features"}, 1e-3},
      {"level2_9_Matmul_Subtract_Multiply_ReLU.py", "linear_sub_mul_relu_seed.cu",
       "batch_size=64,in_features=1024,out_features=512", "linear_sub_mul_relu", "elementwise",
       {"batch_size", "in_features", "out_features"}, 1e-3},
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
    EXPECT_GE(op["tolerance"]["max_abs"].get<double>(), c.max_abs_at_least) << op["tolerance"].dump();
    if (c.max_abs_at_least > 1e-3) {
      EXPECT_LT(op["tolerance"]["max_abs"].get<double>(), 4.0) << op["tolerance"].dump();
    }
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
  // No --seed: forgek writes the seed of this elementwise problem (ForgekWritesTheSeedOfAnElementwiseProblem).
  CommandResult r = Import(tmp, {Fixture("level1_19_ReLU.py"), "--seed", tmp.file("seed.cu"), "--sizes", "dim=x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("dim must be a positive integer"), std::string::npos) << r.err;
  EXPECT_EQ(Import(tmp, {tmp.file("missing.py"), "--seed", tmp.file("seed.cu")}).exit_code, 2);
  EXPECT_TRUE(Entries(tmp.file("ops")).empty());
}

// ---- FlashInfer-Bench ----

std::string FiFixture(const std::string& name) { return SourceDir() + "/tests/fixtures/import/flashinfer/" + name; }
std::string Seed(const std::string& name) { return SourceDir() + "/tests/fixtures/import/seeds/" + name; }

CommandResult ImportFi(const TempDir& tmp, std::vector<std::string> args, bool json = false) {
  args.insert(args.begin(), {"--operators", tmp.file("ops"), "ops", "import", "flashinfer"});
  if (json) args.insert(args.begin(), "--json");
  return RunForgek(args, {"XDG_CACHE_HOME=" + tmp.file("cache")});
}

CommandResult Validate(const TempDir& tmp, const std::string& name) {
  return RunForgek({"--operators", tmp.file("ops"), "ops", "validate", name}, {"XDG_CACHE_HOME=" + tmp.file("cache")});
}

// The 1-based line of the first occurrence of `needle` in `text`.
int LineOf(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  if (at == std::string::npos) return 0;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

// Three definitions of FlashInfer-Bench's published data (tests/fixtures/import/README.md), with the
// plain seeds of tests/fixtures/import/seeds/: each folder validates, NVRTC and the golden included.
TEST(OpsImport, FlashInferDefinitionsImportAndValidate) {
  TempDir tmp;
  std::filesystem::create_directories(tmp.file("ops"));

  // GEMM with its 43 workloads: one config per M, smallest first.
  CommandResult r = ImportFi(tmp, {FiFixture("gemm_n4096_k4096.json"), "--workloads", FiFixture("gemm_n4096_k4096.jsonl"),
                                   "--seed", Seed("gemm_nt_f16_seed.cu")},
                             true);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  nlohmann::json out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out["name"], "gemm_n4096_k4096");
  EXPECT_EQ(out["workloads"], 43);
  EXPECT_EQ(out["configs"].size(), 43u);
  nlohmann::json op = nlohmann::json::parse(ReadFile(tmp.file("ops/gemm_n4096_k4096/operator.json")));
  EXPECT_EQ(op["params"], nlohmann::json({"M", "N", "K"}));
  EXPECT_EQ(op["category"], "gemm");
  EXPECT_EQ(op["golden"], "golden.json");
  EXPECT_EQ(op["configs"][0], nlohmann::json({{"name", "M1"}, {"values", {{"M", 1}, {"N", 4096}, {"K", 4096}}}}));
  EXPECT_EQ(op["configs"][42]["name"], "M8192");
  EXPECT_EQ(op["tensors"][0], nlohmann::json({{"name", "A"}, {"role", "input"}, {"dtype", "f16"}, {"shape", {"M", "K"}},
                                              {"init", {{"dist", "normal"}, {"mean", 0}, {"std", 1}}}}));
  EXPECT_EQ(op["tensors"][2]["role"], "output");
  EXPECT_EQ(op["tolerance"]["rel_l2"], 1e-2);
  EXPECT_GT(op["tolerance"]["max_abs"].get<double>(), 1.0);  // rtol of outputs in the hundreds
  nlohmann::json golden = nlohmann::json::parse(ReadFile(tmp.file("ops/gemm_n4096_k4096/golden.json")));
  EXPECT_EQ(golden["flashinfer"], nlohmann::json::parse(ReadFile(FiFixture("gemm_n4096_k4096.json"))));
  CommandResult v = Validate(tmp, "gemm_n4096_k4096");
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;

  // Fused add + RMSNorm in bf16, its reference's eps fixed in the text.
  r = ImportFi(tmp, {FiFixture("fused_add_rmsnorm_h4096.json"), "--workloads", FiFixture("fused_add_rmsnorm_h4096.jsonl"),
                     "--seed", Seed("fused_add_rmsnorm_bf16_seed.cu")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, tmp.file("ops/fused_add_rmsnorm_h4096") + "\n");
  op = nlohmann::json::parse(ReadFile(tmp.file("ops/fused_add_rmsnorm_h4096/operator.json")));
  EXPECT_EQ(op["category"], "norm");
  EXPECT_EQ(op["configs"].size(), 14u);
  EXPECT_EQ(op["configs"][0]["name"], "batch_size1");
  EXPECT_EQ(op["tensors"][3], nlohmann::json({{"name", "output"}, {"role", "output"}, {"dtype", "bf16"},
                                              {"shape", {"batch_size", "hidden_size"}}}));
  v = Validate(tmp, "fused_add_rmsnorm_h4096");
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;

  // The documentation's RMSNorm without workloads: --sizes and --scalars; eps becomes a scalar.
  r = ImportFi(tmp, {FiFixture("rmsnorm_d4096.json"), "--sizes", "batch_size=64", "--scalars", "eps=1e-6", "--seed",
                     Seed("rmsnorm_f16_seed.cu"), "--name", "rmsnorm_f16"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  op = nlohmann::json::parse(ReadFile(tmp.file("ops/rmsnorm_f16/operator.json")));
  EXPECT_EQ(op["configs"], nlohmann::json::array({{{"name", "batch_size64"}, {"values", {{"batch_size", 64}, {"hidden_size", 4096}}}}}));
  EXPECT_EQ(op["scalars"], nlohmann::json::array({{{"name", "eps"}, {"dtype", "f32"}, {"value", 1e-6}}}));
  v = Validate(tmp, "rmsnorm_f16");
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  EXPECT_EQ(Entries(tmp.file("ops")).size(), 3u);
  // The golden is given golden.json's eps: an operator.json that says another is refused.
  op["scalars"][0]["value"] = 1e-5;
  WriteFile(tmp.file("ops/rmsnorm_f16/operator.json"), op.dump(2));
  v = Validate(tmp, "rmsnorm_f16");
  EXPECT_EQ(v.exit_code, 1) << v.out << v.err;
  EXPECT_NE((v.out + v.err).find("scalar eps: the golden gives f32 1e-06, operator.json says f32 1e-05"), std::string::npos)
      << v.out << v.err;
}

// Each broken definition or workloads file is refused at FILE:LINE:COLUMN naming the field, and
// nothing is written.
TEST(OpsImport, FlashInferBrokenDefinitionIsRefusedLocatedAndNothingWritten) {
  TempDir tmp;
  std::filesystem::create_directories(tmp.file("ops"));
  const std::string seed = Seed("gemm_nt_f16_seed.cu");
  const std::string gemm = ReadFile(FiFixture("gemm_n4096_k4096.json"));
  auto refused = [&tmp, &seed](const std::string& text, const std::string& want, int line,
                               const std::vector<std::string>& more = {}) {
    WriteFile(tmp.file("def.json"), text);
    std::vector<std::string> args = {tmp.file("def.json"), "--seed", seed, "--sizes", "M=4"};
    if (!more.empty()) args = {tmp.file("def.json"), "--seed", seed};
    args.insert(args.end(), more.begin(), more.end());
    CommandResult r = ImportFi(tmp, args);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find(want), std::string::npos) << r.err;
    const std::string file = more.empty() ? tmp.file("def.json") : more[1];
    EXPECT_NE(r.err.find(file + ":" + std::to_string(line) + ":"), std::string::npos) << r.err;
    EXPECT_TRUE(Entries(tmp.file("ops")).empty());
  };
  {
    SCOPED_TRACE("bad JSON");
    std::string text = gemm;
    text.replace(text.find("\"gemm\",") + 6, 1, "");  // the comma after op_type
    refused(text, "invalid JSON", LineOf(gemm, "\"tags\""));
  }
  {
    SCOPED_TRACE("unknown dtype");
    std::string text = gemm;
    text.replace(text.find("\"float16\""), 9, "\"float13\"");
    refused(text, "inputs.A.dtype: 'float13' is not a FlashInfer-Bench dtype", LineOf(text, "float13"));
  }
  {
    SCOPED_TRACE("an output's shape names no axis");
    nlohmann::ordered_json def = nlohmann::ordered_json::parse(gemm);
    def["outputs"]["C"]["shape"] = {"M", "Q"};
    const std::string text = def.dump(2);
    refused(text, "outputs.C.shape[1]: 'Q' is not an axis of the definition (its axes: M, N, K)", LineOf(text, "\"Q\""));
  }
  {
    SCOPED_TRACE("an output sized by the data");
    nlohmann::ordered_json def = nlohmann::ordered_json::parse(gemm);
    def["axes"]["nnz"] = {{"type", "var"}};
    def["outputs"]["C"]["shape"] = {"nnz"};
    const std::string text = def.dump(2);
    refused(text, "outputs.C.shape[0]: axis nnz is in no input's shape", LineOf(text, "\"nnz\"\n"));
  }
  {
    SCOPED_TRACE("a workload missing an axis");
    WriteFile(tmp.file("w.jsonl"), "{\"workload\": {\"uuid\": \"a\", \"axes\": {\"M\": 8}, \"inputs\": {}}}\n\n"
                                   "{\"workload\": {\"uuid\": \"b\", \"axes\": {}, \"inputs\": {}}}\n");
    refused(gemm, "workload.axes: no value for the var axis M", 3, {"--workloads", tmp.file("w.jsonl")});
  }
  {
    SCOPED_TRACE("recorded inputs");
    WriteFile(tmp.file("w.jsonl"), "{\"definition\": \"gemm_n4096_k4096\", \"workload\": {\"uuid\": \"a\", \"axes\": {\"M\": 8}, "
                                   "\"inputs\": {\"A\": {\"type\": \"safetensors\", \"path\": \"a.safetensors\", "
                                   "\"tensor_key\": \"A\"}}}}\n");
    refused(gemm, "workload.inputs.A.type: recorded data (safetensors)", 1, {"--workloads", tmp.file("w.jsonl")});
  }
}

TEST(OpsImport, FlashInferUsageErrors) {
  TempDir tmp;
  std::filesystem::create_directories(tmp.file("ops"));
  const std::string gemm = FiFixture("gemm_n4096_k4096.json"), seed = Seed("gemm_nt_f16_seed.cu");
  EXPECT_EQ(ImportFi(tmp, {gemm, "--sizes", "M=4"}).exit_code, 2);  // no --seed
  CommandResult r = ImportFi(tmp, {gemm, "--seed", seed});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("var axes M need values: give --workloads FILE.jsonl or --sizes"), std::string::npos) << r.err;
  r = ImportFi(tmp, {gemm, "--seed", seed, "--sizes", "M=4,N=8"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("N is a const axis of the definition (4096)"), std::string::npos) << r.err;
  r = ImportFi(tmp, {FiFixture("rmsnorm_d4096.json"), "--seed", Seed("rmsnorm_f16_seed.cu"), "--sizes", "batch_size=4"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("scalar input eps needs a value: give --scalars eps=V"), std::string::npos) << r.err;
  r = ImportFi(tmp, {gemm, "--seed", seed, "--workloads", FiFixture("gemm_n4096_k4096.jsonl"), "--sizes", "M=4"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(ImportFi(tmp, {tmp.file("missing.json"), "--seed", seed, "--sizes", "M=4"}).exit_code, 2);
  EXPECT_TRUE(Entries(tmp.file("ops")).empty());
}

}  // namespace
}  // namespace forgek
