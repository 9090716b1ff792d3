// Seals exported for PyTorch (ExportSealTorch): the package's Python compiles, its generated shape
// functions agree with forgek's evaluation of every shipped operator's shapes and of the whole grammar,
// its torch-free checks refuse inconsistent shapes by tensor and dimension, and its C builds as the
// package builds it. The GPU suite imports the package and compares the op with torch, eager and compiled.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <sstream>

#include "forgek/core/candidate.h"
#include "forgek/core/device_library.h"
#include "forgek/core/hash.h"
#include "forgek/core/params.h"
#include "forgek/core/subprocess.h"
#include "forgek/seal/seal.h"
#include "seal/seal_export_torch.h"
#include "read_number.h"
#include "softmax_seal_fixture.h"
#include "test_util.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;

const char* kPackage = "forgek_softmax_fp32";

std::string CudaRoot() { return FORGEK_CUDA_ROOT; }

// Runs argv (stdin from `input`); true when it exits 0. *log holds stdout (what the scripts report),
// and stderr too when it fails (torch.compile's warnings would otherwise mix into the report).
bool RunTool(const std::vector<std::string>& argv, std::string* log, const std::string& input = "",
             double timeout_s = 300) {
  ProcessOptions opts;
  opts.timeout_s = timeout_s;
  opts.stdin_data = input;
  ProcessRun r = RunProcess(argv, opts);
  const bool ok = r.started && r.exit_code == 0;
  *log = r.out + (ok || r.err.empty() ? "" : "\n" + r.err);
  return ok;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) out.push_back(line);
  return out;
}

// A script that imports the generated _shapes.py of folder argv[1] alone (no torch) and, per line of
// sizes on stdin (in PARAMS order), prints each tensor's shape or "error: <message>", joined by " | ".
const char* kShapesScript = R"PY(import sys
sys.path.insert(0, sys.argv[1])
import _shapes
for line in sys.stdin:
    values = [int(v) for v in line.split()]
    out = []
    for name, _, _ in _shapes.TENSORS:
        try:
            out.append(" ".join(str(v) for v in _shapes.SHAPE_FUNCTIONS[name](*values)))
        except _shapes.ShapeError as e:
            out.append("error: " + str(e))
    print(" | ".join(out))
)PY";

// What kShapesScript must print for `values`: Expr::Eval of every dimension, the first failure's message.
std::string ExpectedShapes(const OperatorSpec& op, const std::vector<int64_t>& values) {
  Bindings b;
  for (size_t i = 0; i < op.params.size(); ++i) b[op.params[i]] = values[i];
  std::string out;
  for (size_t t = 0; t < op.tensors.size(); ++t) {
    std::string dims;
    for (const std::string& d : op.tensors[t].shape) {
      Diagnostic diag;
      std::unique_ptr<Expr> e = Expr::Parse(d, &diag);
      int64_t v = 0;
      if (!e || !e->Eval(b, &v, &diag)) {
        dims = "error: " + diag.message;
        break;
      }
      dims += (dims.empty() ? "" : " ") + std::to_string(v);
    }
    out += (t ? " | " : "") + dims;
  }
  return out;
}

// Sizes across every bound: small ones with zero and negatives, random magnitudes up to 2^40, and
// now and then INT64's ends, so that overflow and division by zero are met.
std::vector<std::vector<int64_t>> RandomSizes(size_t params, size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> kind(0, 9);
  std::uniform_int_distribution<int64_t> small(-3, 12);
  std::uniform_real_distribution<double> log_size(0, std::log(double(int64_t{1} << 40)));
  std::vector<std::vector<int64_t>> out;
  for (size_t i = 0; i < count; ++i) {
    std::vector<int64_t> v;
    for (size_t p = 0; p < params; ++p) {
      const int k = kind(rng);
      if (k < 3) v.push_back(small(rng));
      else if (k == 3) v.push_back(std::numeric_limits<int64_t>::max());
      else if (k == 4) v.push_back(std::numeric_limits<int64_t>::min());
      else v.push_back(static_cast<int64_t>(std::exp(log_size(rng))));
    }
    out.push_back(v);
  }
  return out;
}

class SealExportTorchTest : public SoftmaxSealFixture {
 protected:
  void SetUp() override {
    SoftmaxSealFixture::SetUp();
    python_ = FindInPath("python3");
    cc_ = FindInPath("cc");
    ASSERT_FALSE(python_.empty()) << "no `python3` in PATH: the exported Python cannot be checked";
    ASSERT_FALSE(cc_.empty()) << "no `cc` in PATH: the package's C cannot be checked";
    CompilerOptions copts;
    copts.threads = 1;
    compiler_ = std::make_unique<Compiler>(copts);
  }

  // A seal of the seed whose store keeps `cubin`.
  SealRecord SeedSeal(const std::string& id, const std::string& cubin) {
    CandidateRecord c = AddCandidate("cand-" + id, SeedSource());
    SealRecord s = NewSeal(id, c.hash);
    s.cubin_sha256 = Sha256Hex(cubin);
    std::string err;
    EXPECT_TRUE(store_.PutCubin(s.cubin_sha256, cubin, "nvrtc 13.0", false, &err)) << err;
    return StoreSeal(s);
  }

  // Exports `s` for torch into a fresh folder; "" (with a failure) when it cannot.
  std::string Export(const SealRecord& s, const OperatorSpec& op, const std::string& name = "torch") {
    const std::string dir = tmp_.file(name);
    std::string err;
    EXPECT_TRUE(ExportSealTorch(store_, s, op, *compiler_, dir, false, &err)) << err;
    return err.empty() ? dir : "";
  }

  // `op`'s _shapes.py alone in a folder of its own.
  std::string ShapesFolder(const OperatorSpec& op) {
    const std::string dir = tmp_.file("shapes-" + op.name);
    fs::create_directories(dir);
    std::string py, err;
    EXPECT_TRUE(TorchShapesModule(op, &py, &err)) << op.name << ": " << err;
    WriteFile(dir + "/_shapes.py", py);
    return dir;
  }

  // Runs `script` with python3 (argv[1] = `arg`); its output.
  std::string Python(const std::string& script, const std::string& arg, const std::string& input = "") {
    const std::string path = tmp_.file("script-" + std::to_string(scripts_++) + ".py");
    WriteFile(path, script);
    std::string out;
    EXPECT_TRUE(RunTool({python_, path, arg}, &out, input)) << out;
    return out;
  }

  // The generated shape functions against Expr::Eval on random sizes.
  void ExpectShapesAgree(const OperatorSpec& op, size_t count, uint64_t seed) {
    SCOPED_TRACE(op.name);
    const std::vector<std::vector<int64_t>> sizes = RandomSizes(op.params.size(), count, seed);
    std::string input;
    for (const auto& v : sizes) {
      for (int64_t x : v) input += std::to_string(x) + " ";
      input += "\n";
    }
    const std::vector<std::string> got = Lines(Python(kShapesScript, ShapesFolder(op), input));
    ASSERT_EQ(got.size(), sizes.size());
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::string values;
      for (int64_t x : sizes[i]) values += std::to_string(x) + " ";
      EXPECT_EQ(got[i], ExpectedShapes(op, sizes[i])) << "sizes " << values;
    }
  }

  std::string python_, cc_;
  std::unique_ptr<Compiler> compiler_;
  int scripts_ = 0;
};

TEST_F(SealExportTorchTest, ExportsAPackageWhosePythonCompilesAndWhoseCBuildsAsTheImportBuildsIt) {
  SealRecord s = SeedSeal("t0000seed", "torch cubin bytes");
  const std::string dir = Export(s, op_);
  ASSERT_FALSE(dir.empty());
  std::set<std::string> top, files;
  for (const auto& e : fs::directory_iterator(dir)) top.insert(e.path().filename().string());
  EXPECT_EQ(top, (std::set<std::string>{kPackage}));
  const std::string pkg = dir + "/" + kPackage;
  for (const auto& e : fs::directory_iterator(pkg)) files.insert(e.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{"__init__.py", "_shapes.py", std::string(kPackage) + ".h",
                                          std::string(kPackage) + ".c"}));
  const std::string init = ReadFile(pkg + "/__init__.py");
  EXPECT_NE(init.find("@torch.library.custom_op(\"forgek::softmax_fp32\", mutates_args=())\n"
                      "def softmax_fp32(x: torch.Tensor) -> torch.Tensor:"),
            std::string::npos)
      << init;
  EXPECT_NE(init.find("@softmax_fp32.register_fake"), std::string::npos);
  EXPECT_NE(init.find(s.id), std::string::npos) << "the package names the seal";
  EXPECT_EQ(ReadFile(pkg + "/_shapes.py").find("import"), std::string::npos) << "the shapes module imports nothing";
  std::string log;
  for (const std::string& py : {pkg + "/__init__.py", pkg + "/_shapes.py", SourceDir() + "/examples/torch/softmax_example.py"})
    EXPECT_TRUE(RunTool({python_, "-c", "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)",
                     py, tmp_.file("compiled.pyc")},
                    &log))
        << py << ": " << log;
  // The command of __init__.py's _build_command, against the toolkit's stub libcuda.
  EXPECT_TRUE(RunTool({cc_, "-std=c11", "-O2", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror", "-I" + pkg,
                   "-I" + CudaRoot() + "/include", pkg + "/" + kPackage + ".c", "-o", tmp_.file("libsoftmax.so"),
                   "-L" + CudaRoot() + "/lib64/stubs", "-lcuda", "-lpthread"},
                  &log))
      << log;
  EXPECT_NE(init.find("\"-std=c11\", \"-O2\", \"-fPIC\", \"-shared\""), std::string::npos) << "the test builds as the package does";
}

TEST_F(SealExportTorchTest, AFolderInUseIsRefusedAndNothingIsLeftHalfWritten) {
  SealRecord s = SeedSeal("t0000busy", "busy cubin");
  const std::string dir = tmp_.file("busy");
  fs::create_directories(dir);
  WriteFile(dir + "/keep.txt", "mine");
  std::string err;
  EXPECT_FALSE(ExportSealTorch(store_, s, op_, *compiler_, dir, false, &err));
  EXPECT_NE(err.find("not an empty folder"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir + "/" + kPackage));
}

// Every shipped operator's shapes, and an operator whose shapes use the whole grammar.
TEST_F(SealExportTorchTest, GeneratedShapeFunctionsAgreeWithForgeksEvaluation) {
  uint64_t seed = 1;
  for (const std::string& dir : ListOperatorDirs(SourceDir() + "/operators")) {
    OperatorSpec op;
    Diagnostics diags;
    ASSERT_TRUE(LoadOperator(dir, &op, &diags)) << FormatDiagnostics(diags);
    ExpectShapesAgree(op, 150, seed++);
  }
  OperatorSpec grammar;
  grammar.name = "grammar";
  grammar.params = {"A", "B", "C"};
  const std::vector<std::vector<std::string>> shapes = {
      {"A*B - C", "A / B", "A % B", "ceil_div(A, B)"},
      {"-A + min(A, B, C)", "max(A, 3) * 2", "pow2(B)", "log2(A)"},
      {"A < B", "A <= B && B != 0", "A > B || C == 0", "!A", "A >= C", "A == B"},
      {"(A - B) / (C + 1)", "A * B * C", "ceil_div(-A, B) % (C - 2)", "B == 0 || A / B > 2", "C != 0 && A % C"}};
  for (size_t i = 0; i < shapes.size(); ++i) {
    TensorSpec t;
    t.name = "t" + std::to_string(i);
    t.role = i == 0 ? TensorRole::input : i == 3 ? TensorRole::output : TensorRole::inout;
    t.shape = shapes[i];
    grammar.tensors.push_back(t);
  }
  ExpectShapesAgree(grammar, 3000, 99);
}

// A script that imports a _shapes.py (argv[1]) and prints infer_sizes of each line's Python literal
// (shapes, keyword sizes): the sizes, or "refused: <message>".
const char* kInferScript = R"PY(import ast, sys
sys.path.insert(0, sys.argv[1])
import _shapes
for line in sys.stdin:
    shapes, keyword = ast.literal_eval(line)
    try:
        print(_shapes.infer_sizes(shapes, keyword))
    except _shapes.ShapeError as e:
        print("refused:", e)
)PY";

TEST_F(SealExportTorchTest, InconsistentInputShapesAreRefusedNamingTheTensorAndDimension) {
  std::vector<std::string> got = Lines(Python(kInferScript, ShapesFolder(op_), "({'x': (4, 1024)}, {})\n({'x': (4,)}, {})\n"));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], "{'M': 4, 'N': 1024}");
  EXPECT_EQ(got[1], "refused: softmax_fp32: x has 1 dimensions, but the operator's shape [M, N] has 2");

  OperatorSpec gemm;
  Diagnostics diags;
  ASSERT_TRUE(LoadOperator(SourceDir() + "/operators/gemm_bf16", &gemm, &diags)) << FormatDiagnostics(diags);
  got = Lines(Python(kInferScript, ShapesFolder(gemm),
                     "({'A': (256, 128), 'B': (128, 512)}, {})\n({'A': (256, 128), 'B': (64, 512)}, {})\n"));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], "{'M': 256, 'N': 512, 'K': 128}");
  EXPECT_EQ(got[1],
            "refused: gemm_bf16: B dimension 0 is 64, but the operator's shape [K, N] makes it K = 128 for sizes "
            "M=256 (A dimension 0), N=512 (B dimension 1), K=128 (A dimension 1)");

  // A size no input gives is a keyword; shapes built from it are checked with it.
  OperatorSpec paged;
  ASSERT_TRUE(LoadOperator(SourceDir() + "/operators/attention_decode_paged_bf16", &paged, &diags))
      << FormatDiagnostics(diags);
  const std::string folder = ShapesFolder(paged);
  EXPECT_EQ(Python("import sys\nsys.path.insert(0, sys.argv[1])\nimport _shapes\nprint(_shapes.KEYWORD_SIZES)\n", folder),
            "('CTX',)\n");
  const std::string q = "'q': (2, 8, 128), ", cache = "(16, 16, 2, 128)";
  got = Lines(Python(kInferScript, folder,
                     "({" + q + "'k_cache': " + cache + ", 'v_cache': " + cache + ", 'page_table': (2, 8)}, {'CTX': 128})\n"
                     "({" + q + "'k_cache': " + cache + ", 'v_cache': " + cache + ", 'page_table': (2, 8)}, {'CTX': 256})\n"
                     "({" + q + "'k_cache': " + cache + ", 'v_cache': " + cache + ", 'page_table': (2, 8)}, {})\n"));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_NE(got[0].find("'CTX': 128"), std::string::npos) << got[0];
  EXPECT_NE(got[1].find("refused: attention_decode_paged_bf16: k_cache dimension 0 is 16, but the operator's shape "
                        "[BATCH*CTX/PAGE, PAGE, HKV, D] makes it BATCH*CTX/PAGE = 32"),
            std::string::npos)
      << got[1];
  EXPECT_NE(got[2].find("no input's shape gives the size CTX: pass it as the keyword CTX="), std::string::npos) << got[2];
}

TEST_F(SealExportTorchTest, TheCliExportsWithLangTorch) {
  SeedSeal("t0000cli", "cli cubin");
  store_.Close();
  CommandResult r = RunForgek({"--store", tmp_.file("store.db"), "--operators", SourceDir() + "/operators", "seal",
                               "export", "t0000cli", tmp_.file("cli"), "--lang", "torch"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("PyTorch package forgek_softmax_fp32"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_regular_file(tmp_.file("cli/") + kPackage + "/__init__.py"));
  r = RunForgek({"seal", "export", "--help"});
  EXPECT_NE(r.out.find("torch.ops.forgek"), std::string::npos) << r.out;
}

// ---------------------------------------------------------------------------------------------
// On a GPU with torch: the package imported and its op run against torch, eagerly and compiled.

bool HasGpu() { return RunForgek({"worker", "--probe"}).exit_code == 0; }

// Imports the package from argv[1] (its library cached under argv[2]) and, per "M N" line of stdin,
// prints "<mode> M N max_abs rel_l2" for the op against torch.softmax in float64, eager and under
// torch.compile(fullgraph=True); then one "refused <what>: <message>" line per misuse.
const char* kSoftmaxScript = R"PY(import os, sys
os.environ["FORGEK_TORCH_CACHE"] = sys.argv[2]
sys.path.insert(0, sys.argv[1])
import torch
import forgek_softmax_fp32

sizes = [tuple(int(v) for v in line.split()) for line in sys.stdin if line.strip()]
compiled = torch.compile(lambda x: torch.ops.forgek.softmax_fp32(x), fullgraph=True)
for mode, fn in (("eager", torch.ops.forgek.softmax_fp32), ("compiled", compiled)):
    torch.manual_seed(0)
    for m, n in sizes:
        x = torch.randn(m, n, device="cuda") * 2
        y = fn(x)
        ref = torch.softmax(x.double(), -1)
        d = y.double() - ref
        print(mode, m, n, f"{d.abs().max().item():.3g}", f"{(d.norm() / ref.norm()).item():.3g}", flush=True)
x = torch.randn(64, 256, device="cuda")
for what, call in (("cpu", lambda: torch.ops.forgek.softmax_fp32(x.cpu())),
                   ("dtype", lambda: torch.ops.forgek.softmax_fp32(x.double())),
                   ("strided", lambda: torch.ops.forgek.softmax_fp32(x.t())),
                   ("rank", lambda: torch.ops.forgek.softmax_fp32(x[0]))):
    try:
        call()
        print("accepted", what)
    except (TypeError, ValueError, RuntimeError) as e:
        print(f"refused {what}: {e}".splitlines()[0])
)PY";

// The same for gemm_bf16 against A @ B (in float32, bf16 inputs), then a size its constraints refuse.
const char* kGemmScript = R"PY(import os, sys
os.environ["FORGEK_TORCH_CACHE"] = sys.argv[2]
sys.path.insert(0, sys.argv[1])
import torch
import forgek_gemm_bf16

compiled = torch.compile(lambda a, b: torch.ops.forgek.gemm_bf16(a, b), fullgraph=True)
for mode, fn in (("eager", torch.ops.forgek.gemm_bf16), ("compiled", compiled)):
    torch.manual_seed(0)
    for m, n, k in ((256, 256, 256), (200, 384, 320), (512, 384, 128)):
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        c = fn(a, b)
        ref = a.float() @ b.float()
        d = c.float() - ref
        print(mode, m, n, k, f"{d.abs().max().item():.3g}", f"{(d.norm() / ref.norm()).item():.3g}", flush=True)
try:
    torch.ops.forgek.gemm_bf16(torch.randn(100, 256, device="cuda", dtype=torch.bfloat16),
                               torch.randn(256, 256, device="cuda", dtype=torch.bfloat16))
    print("accepted 100 256 256")
except forgek_gemm_bf16.ForgekError as e:
    print("refused", e.status, e)
)PY";

class GpuSealExportTorch : public SealExportTorchTest {
 protected:
  void SetUp() override {
    if (!HasGpu()) GTEST_SKIP() << "no GPU: " << RunForgek({"worker", "--probe"}).out;
    const std::string python = FindInPath("python3");
    std::string log;
    if (python.empty() || !RunTool({python, "-c", "import torch"}, &log))
      GTEST_SKIP() << "no torch: `python3 -c \"import torch\"` fails: " << (python.empty() ? "no python3 in PATH" : log);
    SealExportTorchTest::SetUp();
  }

  std::string Build(const std::string& source, const ParamAssignment& params) {
    CompileResult r = compiler_->CompileNow({"kernel.cu", ExpandedSource(source), "sm90", ParamDefines(params)});
    EXPECT_TRUE(r.ok) << r.Summary();
    return r.cubin;
  }

  // Runs `script` on the package in `dir` (stdin `input`); its lines.
  std::vector<std::string> RunPackage(const std::string& script, const std::string& dir, const std::string& input = "") {
    const std::string path = tmp_.file("gpu-" + std::to_string(scripts_++) + ".py");
    WriteFile(path, script);
    std::string out;
    EXPECT_TRUE(RunTool({python_, path, dir, tmp_.file("torch-cache")}, &out, input, 900)) << out;
    return Lines(out);
  }
};

// One "<mode> sizes... max_abs rel_l2" line within `tol`.
void ExpectWithin(const std::string& line, const std::string& mode, const std::string& sizes, const Tolerance& tol) {
  SCOPED_TRACE(line);
  ASSERT_EQ(line.rfind(mode + " " + sizes + " ", 0), 0u);
  std::stringstream fields(line.substr(mode.size() + sizes.size() + 2));
  const double max_abs = ReadNumber(fields), rel_l2 = ReadNumber(fields);
  EXPECT_GE(max_abs, 0);
  EXPECT_LE(max_abs, tol.max_abs);
  EXPECT_LE(rel_l2, tol.rel_l2);
}

// The fixture's seal on every suite config and two sizes outside it, eagerly and compiled; misuse refused.
TEST_F(GpuSealExportTorch, TheSoftmaxOpMatchesTorchSoftmaxEagerAndCompiled) {
  SealRecord s = SeedSeal("g0000torch", Build(SeedSource(), params_));
  const std::string dir = Export(s, op_);
  ASSERT_FALSE(dir.empty());
  std::vector<std::string> sizes;
  for (const ConfigSpec& c : op_.configs) sizes.push_back(std::to_string(c.values.at("M")) + " " + std::to_string(c.values.at("N")));
  sizes.push_back("333 5000");
  sizes.push_back("1 7");
  std::string input;
  for (const std::string& sz : sizes) input += sz + "\n";
  const std::vector<std::string> lines = RunPackage(kSoftmaxScript, dir, input);
  ASSERT_EQ(lines.size(), 2 * sizes.size() + 4);
  for (size_t i = 0; i < sizes.size(); ++i) {
    ExpectWithin(lines[i], "eager", sizes[i], op_.tolerance);
    ExpectWithin(lines[sizes.size() + i], "compiled", sizes[i], op_.tolerance);
  }
  const size_t r = 2 * sizes.size();
  EXPECT_EQ(lines[r], "refused cpu: softmax_fp32: x is on cpu; the op runs on CUDA tensors");
  EXPECT_EQ(lines[r + 1], "refused dtype: softmax_fp32: x is torch.float64; the operator takes torch.float32");
  EXPECT_EQ(lines[r + 2].rfind("refused strided: softmax_fp32: x is not contiguous", 0), 0u) << lines[r + 2];
  EXPECT_EQ(lines[r + 3], "refused rank: softmax_fp32: x has 1 dimensions, but the operator's shape [M, N] has 2");
}

// gemm_bf16's warp-specialised TMA family (the C export's GPU gemm) against A @ B.
TEST_F(GpuSealExportTorch, TheGemmOpMatchesAMatmulEagerAndCompiled) {
  OperatorSpec gemm;
  Diagnostics diags;
  ASSERT_TRUE(LoadOperator(SourceDir() + "/operators/gemm_bf16", &gemm, &diags)) << FormatDiagnostics(diags);
  const std::string source = ReadFile(gemm.dir + "/families/wgmma_tma_ws.cu");
  const ParamAssignment params = {{"BM", 128}, {"BN", 128}, {"BK", 64}, {"STAGES", 4}, {"CLUSTER_M", 2}, {"GROUP_M", 8}};
  CandidateRecord c;
  c.hash = "cand-torch-gemm";
  c.operator_name = gemm.name;
  c.source = source;
  c.params_json = ParamsJson(params);
  bool inserted = false;
  std::string err;
  ASSERT_TRUE(store_.PutCandidate(c, &inserted, &err)) << err;
  const std::string cubin = Build(source, params);
  ASSERT_TRUE(store_.PutCubin(Sha256Hex(cubin), cubin, "nvrtc 13.0", false, &err)) << err;
  SealRecord s = NewSeal("g0000torchgemm", c.hash);
  s.operator_name = gemm.name;
  s.params_json = c.params_json;
  s.cubin_sha256 = Sha256Hex(cubin);
  StoreSeal(s);
  const std::string dir = Export(s, gemm, "gemm");
  ASSERT_FALSE(dir.empty());
  const std::vector<std::string> lines = RunPackage(kGemmScript, dir);
  ASSERT_EQ(lines.size(), 7u);
  const char* sizes[] = {"256 256 256", "200 384 320", "512 384 128"};
  for (size_t i = 0; i < 3; ++i) {
    ExpectWithin(lines[i], "eager", sizes[i], gemm.tolerance);
    ExpectWithin(lines[3 + i], "compiled", sizes[i], gemm.tolerance);
  }
  EXPECT_EQ(lines[6],
            "refused UNSUPPORTED_SIZE gemm_bf16: UNSUPPORTED_SIZE: constraint 'ceil_div(M, BM) % CLUSTER_M == 0' does "
            "not hold (sizes M=100, N=256, K=256)");
}

}  // namespace
}  // namespace forgek
