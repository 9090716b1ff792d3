// The C++ side of scripts/forgek_torch_helper.py: finding it, `describe` of KernelBench fixtures and
// FlashInfer-Bench definitions, refusals located in the file, and the framed protocol round-tripping every dtype through a real
// `serve` process on the CPU (needs python3-torch, which scripts/install-deps.sh installs).
#include "forgek/core/torch_helper.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_util.h"

namespace forgek {
namespace {

std::string Fixture(const std::string& name) { return SourceDir() + "/tests/fixtures/import/kernelbench/" + name; }

TorchHelperPaths Paths() {
  TorchHelperPaths paths;
  std::string err;
  EXPECT_TRUE(FindTorchHelper(&paths, &err)) << err;
  return paths;
}

TEST(TorchHelper, FindsItsScriptAndRefusesABadPython) {
  TorchHelperPaths paths = Paths();
  EXPECT_NE(paths.script.find("forgek_torch_helper.py"), std::string::npos);
  const char* before = std::getenv("FORGEK_PYTHON");
  const std::string saved = before ? before : "";
  setenv("FORGEK_PYTHON", "/nonexistent/python3", 1);
  std::string err;
  EXPECT_FALSE(FindTorchHelper(&paths, &err));
  if (before) setenv("FORGEK_PYTHON", saved.c_str(), 1);
  else unsetenv("FORGEK_PYTHON");
  EXPECT_NE(err.find("FORGEK_PYTHON=/nonexistent/python3 is not an executable file"), std::string::npos) << err;
}

TEST(TorchHelper, DescribesALevel2ProblemWithParameters) {
  KernelBenchProblem p;
  ProblemError e;
  ASSERT_TRUE(DescribeKernelBench(Paths(), Fixture("level2_9_Matmul_Subtract_Multiply_ReLU.py"),
                                  {{"batch_size", 64}}, 300, &p, &e))
      << e.str();
  EXPECT_EQ(p.params, (std::vector<std::string>{"batch_size", "in_features", "out_features"}));
  EXPECT_EQ(p.config.at("batch_size"), 64);
  EXPECT_EQ(p.config.at("in_features"), 8192);
  ASSERT_EQ(p.tensors.size(), 4u);
  EXPECT_EQ(p.tensors[1].name, "linear_weight");
  EXPECT_EQ(p.tensors[1].state_key, "linear.weight");
  EXPECT_EQ(p.tensors[1].shape, (std::vector<std::string>{"out_features", "in_features"}));
  EXPECT_EQ(p.tensors[3].role, "output");
  EXPECT_EQ(p.tensors[3].dtype, "f32");
  EXPECT_TRUE(p.tensors[3].init.is_null());
}

TEST(TorchHelper, KeepsALiteralDimension) {
  KernelBenchProblem p;
  ProblemError e;
  ASSERT_TRUE(DescribeKernelBench(Paths(), Fixture("level1_89_cumsum.py"), {}, 300, &p, &e)) << e.str();
  EXPECT_EQ(p.tensors[0].shape, (std::vector<std::string>{"batch_size", "32768"}));
  EXPECT_EQ(p.fixed.value("dim", 0), 1);
}

TEST(TorchHelper, RefusalIsLocatedInTheProblemFile) {
  TempDir dir;
  std::string path = dir.file("broken.py");
  std::ofstream(path) << "import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, x)\n        return x\n";
  KernelBenchProblem p;
  ProblemError e;
  ASSERT_FALSE(DescribeKernelBench(Paths(), path, {}, 300, &p, &e));
  EXPECT_EQ(e.file, path);
  EXPECT_EQ(e.line, 4);
  EXPECT_EQ(e.str().rfind(path + ":4: syntax error", 0), 0u) << e.str();
}

TEST(TorchHelper, UnknownSizeIsRefused) {
  KernelBenchProblem p;
  ProblemError e;
  ASSERT_FALSE(DescribeKernelBench(Paths(), Fixture("level1_19_ReLU.py"), {{"rows", 8}}, 300, &p, &e));
  EXPECT_NE(e.message.find("rows"), std::string::npos) << e.message;
}

std::string Bytes(size_t n, int salt) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + salt) & 0xff);
  return s;
}

TEST(TorchHelper, EveryDtypeRoundTripsThroughServe) {
  TorchServer server;
  std::string err;
  ASSERT_TRUE(server.Start(Paths(), "", {}, &err)) << err;
  std::vector<TorchTensor> sent;
  int salt = 0;
  for (const char* dt : {"f64", "f32", "f16", "bf16", "i8", "u8", "i32", "i64"}) {
    TorchTensor t{std::string("t_") + dt, dt, {3, 5}, Bytes(15 * TorchWireDtypeSize(dt), ++salt)};
    // Floating bit patterns that are NaN may be changed by a conversion; these are checked as bits.
    sent.push_back(t);
  }
  sent.push_back({"flags", "bool", {4}, std::string("\x01\x00\x01\x01", 4)});
  std::vector<TorchTensor> got;
  ASSERT_TRUE(server.Exchange("echo", sent, &got, &err)) << err;
  ASSERT_EQ(got.size(), sent.size());
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(got[i].name, sent[i].name);
    EXPECT_EQ(got[i].dtype, sent[i].dtype);
    EXPECT_EQ(got[i].shape, sent[i].shape);
    EXPECT_EQ(got[i].bytes, sent[i].bytes) << sent[i].dtype;
  }
  // An error reply leaves the server serving.
  EXPECT_FALSE(server.Exchange("sum", {}, &got, &err));
  EXPECT_NE(err.find("unknown op"), std::string::npos) << err;
  ASSERT_TRUE(server.Exchange("echo", {sent[0]}, &got, &err)) << err;
  EXPECT_EQ(server.Stop(), 0);
}

TEST(TorchHelper, EncodeRefusesWhatDoesNotCross) {
  std::string out, err;
  EXPECT_FALSE(EncodeTorchMessage("echo", {{"q", "e4m3", {2}, std::string(2, '\0')}}, &out, &err));
  EXPECT_NE(err.find("dtype e4m3 does not cross"), std::string::npos) << err;
  EXPECT_FALSE(EncodeTorchMessage("echo", {{"a", "f32", {2}, std::string(4, '\0')}}, &out, &err));
  EXPECT_NE(err.find("4 bytes for its shape and f32"), std::string::npos) << err;
}

TEST(TorchHelper, RunIsTheGoldenOfTheModel) {
  TorchServer server;
  std::string err;
  ASSERT_TRUE(server.Start(Paths(), Fixture("level1_19_ReLU.py"), {{"batch_size", 2}, {"dim", 2}}, &err)) << err;
  const float x[4] = {-1.5f, 2.0f, 0.0f, -0.25f};
  TorchTensor in{"x", "f32", {2, 2}, std::string(reinterpret_cast<const char*>(x), sizeof x)};
  std::vector<TorchTensor> got;
  ASSERT_TRUE(server.Exchange("run", {in}, &got, &err)) << err;
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].name, "out");
  ASSERT_EQ(got[0].bytes.size(), sizeof x);
  const float* y = reinterpret_cast<const float*>(got[0].bytes.data());
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 2.0f);
  EXPECT_EQ(y[3], 0.0f);
}

// Device tensors travel as their IPC handles in hex, with offsets; what cannot be mapped is refused
// before anything is sent.
TEST(TorchHelper, DeviceTensorsCarryTheirHandleInHex) {
  std::string handle(64, '\0');
  handle[0] = '\x01';
  handle[63] = '\xab';
  nlohmann::json j;
  std::string err;
  ASSERT_TRUE(DeviceTensorsJson({{"x", "bf16", {2, 3}, handle, 256, 12}}, &j, &err)) << err;
  ASSERT_EQ(j.size(), 1u);
  const std::string hex = j[0]["handle"];
  EXPECT_EQ(hex.size(), 128u);
  EXPECT_EQ(hex.substr(0, 2), "01");
  EXPECT_EQ(hex.substr(126), "ab");
  EXPECT_EQ(j[0]["offset"], 256);
  EXPECT_EQ(j[0]["nbytes"], 12);
  EXPECT_FALSE(DeviceTensorsJson({{"x", "bf16", {2, 3}, handle, 0, 8}}, &j, &err));
  EXPECT_NE(err.find("tensor x: 8 bytes for its shape and bf16"), std::string::npos) << err;
  EXPECT_FALSE(DeviceTensorsJson({{"q", "e4m3", {2}, handle, 0, 2}}, &j, &err));
  EXPECT_NE(err.find("dtype e4m3 does not cross"), std::string::npos) << err;
  EXPECT_FALSE(DeviceTensorsJson({{"x", "f32", {2}, "short", 0, 8}}, &j, &err));
  EXPECT_NE(err.find("an IPC handle is 64 bytes, not 5"), std::string::npos) << err;
}

// A helper computing on the CPU cannot map the worker's GPU memory: it says so, and serves on (the
// worker then sends the tensors through the pipes).
TEST(TorchHelper, RunOnDeviceIsRefusedByAHelperOnTheCpu) {
  const char* old = std::getenv("FORGEK_TORCH_DEVICE");
  const std::string saved = old ? old : "";
  setenv("FORGEK_TORCH_DEVICE", "cpu", 1);
  TorchServer server;
  std::string err;
  const bool started = server.Start(Paths(), Fixture("level1_19_ReLU.py"), {{"batch_size", 2}, {"dim", 2}}, &err);
  if (old) setenv("FORGEK_TORCH_DEVICE", saved.c_str(), 1);
  else unsetenv("FORGEK_TORCH_DEVICE");
  ASSERT_TRUE(started) << err;
  const std::string handle(64, '\x07');
  std::vector<TorchTensor> written;
  TorchRunInfo info;
  EXPECT_FALSE(server.RunOnDevice({}, {{"x", "f32", {2, 2}, handle, 0, 16}}, {{"out", "f32", {2, 2}, handle, 16, 16}},
                                  &written, &info, &err));
  EXPECT_NE(err.find("computes on the cpu, so it cannot map the worker's GPU memory"), std::string::npos) << err;
  const float x[4] = {-1.5f, 2.0f, 0.0f, -0.25f};
  std::vector<TorchTensor> got;
  ASSERT_TRUE(server.Exchange("run", {{"x", "f32", {2, 2}, std::string(reinterpret_cast<const char*>(x), sizeof x)}},
                              &got, &err))
      << err;
  ASSERT_EQ(got.size(), 1u);
}

// The yardstick: the problem timed in its own dtypes, eager sampled as often as asked, then the
// golden still computed by the same process; a problem that cannot run is an error, the helper goes on.
TEST(TorchHelper, TimeSamplesEagerAndSaysWhatOfTorchCompile) {
  TorchServer server;
  std::string err;
  ASSERT_TRUE(server.Start(Paths(), Fixture("level1_19_ReLU.py"), {{"batch_size", 2}, {"dim", 2}}, &err)) << err;
  const float x[4] = {-1.5f, 2.0f, 0.0f, -0.25f};
  TorchTensor in{"x", "f32", {2, 2}, std::string(reinterpret_cast<const char*>(x), sizeof x)};
  TorchTimeReply t;
  ASSERT_TRUE(server.Time({}, {in}, 6, 60, &t, &err)) << err;
  EXPECT_EQ(t.device, "cpu");
  EXPECT_FALSE(t.torch_version.empty());
  ASSERT_EQ(t.us["eager"].size(), 6u);
  for (double us : t.us["eager"]) EXPECT_GT(us, 0);
  // torch.compile sampled as often, or its reason (an old torch has none).
  EXPECT_TRUE(t.us["compile"].size() == 6u || !t.errors["compile"].empty());
  std::vector<TorchTensor> got;
  ASSERT_TRUE(server.Exchange("run", {in}, &got, &err)) << err;
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(reinterpret_cast<const float*>(got[0].bytes.data())[1], 2.0f);
  // forward(x) without x: the mode's failure is its answer, not the request's.
  ASSERT_TRUE(server.Time({}, {}, 3, 60, &t, &err)) << err;
  EXPECT_TRUE(t.us["eager"].empty());
  EXPECT_NE(t.errors["eager"].find("TypeError"), std::string::npos) << t.errors["eager"];
  std::vector<TorchTensor> again;
  EXPECT_TRUE(server.Exchange("run", {in}, &again, &err)) << err;
}

// A built-in operator's yardstick (scripts/torch_ops.py): a helper serving no problem file draws the
// inputs from the config's inits and times the named form.
TEST(TorchHelper, TimeTorchOpsTimesANamedFormOnItsOwnInputs) {
  TorchServer server;
  std::string err;
  ASSERT_TRUE(server.Start(Paths(), "", {}, &err)) << err;
  const nlohmann::json config = {
      {"op", "softmax_fp32"}, {"name", "small"}, {"values", {{"M", 4}, {"N", 8}}}, {"scalars", nlohmann::json::array()},
      {"tensors",
       {{{"name", "x"}, {"role", "input"}, {"dtype", "f32"}, {"shape", {4, 8}},
         {"init", {{"dist", "normal"}, {"mean", 0}, {"std", 2}}}},
        {{"name", "y"}, {"role", "output"}, {"dtype", "f32"}, {"shape", {4, 8}}}}}};
  TorchTimeReply t;
  ASSERT_TRUE(server.TimeTorchOps("softmax_fp32", config, 5, 60, &t, &err)) << err;
  EXPECT_EQ(t.us["eager"].size(), 5u);
  EXPECT_FALSE(server.TimeTorchOps("no_such_op", config, 5, 60, &t, &err));
  EXPECT_NE(err.find("no operator no_such_op"), std::string::npos) << err;
  EXPECT_EQ(server.Stop(), 0);
}

// A definition kept as forgek's golden.json: its axes are the params, its scalar input comes with
// its value, and the reference's largest output is reported.
TEST(TorchHelper, DescribesAFlashInferDefinition) {
  TempDir tmp;
  const std::string def = ReadFile(SourceDir() + "/tests/fixtures/import/flashinfer/rmsnorm_d4096.json");
  WriteFile(tmp.file("golden.json"), "{\"flashinfer\": " + def + ", \"scalars\": {\"eps\": 1e-06}}");
  KernelBenchProblem p;
  ProblemError e;
  ASSERT_TRUE(DescribeKernelBench(Paths(), tmp.file("golden.json"), {{"batch_size", 2}}, 300, &p, &e)) << e.str();
  EXPECT_EQ(p.kind, "flashinfer");
  EXPECT_EQ(p.params, (std::vector<std::string>{"batch_size", "hidden_size"}));
  EXPECT_EQ(p.config, (std::map<std::string, int64_t>{{"batch_size", 2}, {"hidden_size", 4096}}));
  ASSERT_EQ(p.tensors.size(), 3u);
  EXPECT_EQ(p.tensors[0].name, "input");
  EXPECT_EQ(p.tensors[0].dtype, "f16");
  EXPECT_EQ(p.tensors[2].role, "output");
  EXPECT_EQ(p.scalars, nlohmann::json::parse(R"([{"name": "eps", "dtype": "f32", "value": 1e-06}])"));
  EXPECT_GT(p.max_abs["output"], 1.0);
  // Without its scalar's value the bare definition is refused, naming the input.
  EXPECT_FALSE(DescribeKernelBench(Paths(), SourceDir() + "/tests/fixtures/import/flashinfer/rmsnorm_d4096.json",
                                   {{"batch_size", 2}}, 300, &p, &e));
  EXPECT_NE(e.message.find("inputs.eps: a scalar input with no value"), std::string::npos) << e.message;
}

TEST(TorchHelper, RunIsTheDefinitionsReference) {
  TempDir tmp;
  WriteFile(tmp.file("golden.json"), R"({"flashinfer": {"name": "scale", "axes": {"n": {"type": "var"}},
    "inputs": {"x": {"shape": ["n"], "dtype": "float32"}, "s": {"shape": null, "dtype": "float32"}},
    "outputs": {"y": {"shape": ["n"], "dtype": "float32"}},
    "reference": "def run(x, s):\n    return {'y': x * s}\n"}, "scalars": {"s": 2.5}})");
  TorchServer server;
  std::string err;
  ASSERT_TRUE(server.Start(Paths(), tmp.file("golden.json"), {}, &err)) << err;
  const float x[3] = {-1.5f, 2.0f, 0.25f};
  std::vector<TorchTensor> got;
  ASSERT_TRUE(server.Exchange("run", {{"x", "f32", {3}, std::string(reinterpret_cast<const char*>(x), sizeof x)}}, &got, &err))
      << err;
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].name, "y");
  EXPECT_EQ(got[0].dtype, "f32");
  ASSERT_EQ(got[0].bytes.size(), sizeof x);
  const float* y = reinterpret_cast<const float*>(got[0].bytes.data());
  EXPECT_EQ(y[0], -3.75f);
  EXPECT_EQ(y[1], 5.0f);
  EXPECT_EQ(y[2], 0.625f);
}

}  // namespace
}  // namespace forgek
