// Seals exported as C (ExportSealC): the pair compiles warning-free as C11 and C++17 against cuda.h,
// embeds the store's cubins byte for byte, plans launches exactly as ResolveCandidate resolves them
// for any sizes, refuses unsupported sizes with its error code, follows a dispatch seal's rule, and
// exports from a store copied elsewhere without compiling; the C++ example of docs/using-seals.md
// builds against it. The GPU suite runs the export and the example.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "forgek/core/candidate.h"
#include "forgek/core/device_library.h"
#include "forgek/core/hash.h"
#include "forgek/core/params.h"
#include "forgek/core/subprocess.h"
#include "forgek/seal/seal.h"
#include "read_number.h"
#include "softmax_seal_fixture.h"
#include "test_util.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;

const char* kStem = "forgek_softmax_fp32";

std::string CudaRoot() { return FORGEK_CUDA_ROOT; }

bool RunTool(const std::vector<std::string>& argv, std::string* log, const std::string& stdin_data = "",
         const std::vector<std::string>& env = {}) {
  ProcessOptions opts;
  opts.timeout_s = 300;
  opts.stdin_data = stdin_data;
  if (!env.empty()) {
    opts.replace_environment = true;
    opts.environment = env;
    if (const char* path = std::getenv("PATH")) opts.environment.push_back(std::string("PATH=") + path);
  }
  ProcessRun r = RunProcess(argv, opts);
  *log = r.out + (r.err.empty() ? "" : "\n" + r.err);
  return r.started && r.exit_code == 0;
}

// An i32/i64 launch argument's value as the plan holds it; 0 for anything else.
int64_t PlanArgValue(const ResolvedArg& a) {
  return a.kind == ResolvedArg::Kind::i32 || a.kind == ResolvedArg::Kind::i64 ? a.i : 0;
}

// Each param of `m` at the first value of its domain (a fixed kernel's values; a family's first instance).
ParamAssignment FirstValues(const CandidateManifest& m) {
  ParamAssignment p;
  for (const ParamSpec& s : m.params) p[s.name] = s.values.front();
  return p;
}

// Writes the C program `source` to dir/gpu_driver.c and builds it with the export `stem` in `dir`
// against the toolkit's stub libcuda, every warning an error; the program's path.
std::string BuildGpuDriver(const std::string& dir, const char* source, const std::string& stem) {
  const std::string cc = FindInPath("cc");
  EXPECT_FALSE(cc.empty()) << "no `cc` in PATH";
  WriteFile(dir + "/gpu_driver.c", source);
  std::string log;
  EXPECT_TRUE(RunTool({cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-I" + dir, "-I" + CudaRoot() + "/include",
                       dir + "/gpu_driver.c", dir + "/" + stem + ".c", "-o", dir + "/gpu_driver",
                       "-L" + CudaRoot() + "/lib64/stubs", "-lcuda", "-lpthread", "-lm"},
                      &log))
      << log;
  return dir + "/gpu_driver";
}

// The GPU drivers below print errors with %g: an infinite or NaN error must read back as such.
TEST(ReadNumber, ReadsInfAndNanWhereTheStreamOperatorStoresZero) {
  std::stringstream line("0.25 inf -inf nan 1e-3 x");
  EXPECT_EQ(ReadNumber(line), 0.25);
  EXPECT_EQ(ReadNumber(line), std::numeric_limits<double>::infinity());
  EXPECT_EQ(ReadNumber(line), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(ReadNumber(line)));
  EXPECT_EQ(ReadNumber(line), 1e-3);
  EXPECT_TRUE(std::isnan(ReadNumber(line))) << "not a number";
  EXPECT_TRUE(std::isnan(ReadNumber(line))) << "nothing left";
  std::stringstream shifted("inf");
  double v = -1;
  shifted >> v;
  EXPECT_EQ(v, 0) << "what operator>> does, and why ReadNumber exists";
}

class SealExportCTest : public SoftmaxSealFixture {
 protected:
  void SetUp() override {
    SoftmaxSealFixture::SetUp();
    cc_ = FindInPath("cc");
    cxx_ = FindInPath("c++");
    ASSERT_FALSE(cc_.empty()) << "no `cc` in PATH: the exported C cannot be checked";
    ASSERT_FALSE(cxx_.empty()) << "no `c++` in PATH";
    CompilerOptions copts;
    copts.threads = 1;
    compiler_ = std::make_unique<Compiler>(copts);
  }

  static std::string Family(const std::string& file) { return ReadFile(OperatorDir() + "/families/" + file); }

  // Stores `source` with `params` as candidate cand-<id> and returns its hash.
  std::string PutCandidate(const std::string& id, const std::string& source, const ParamAssignment& params) {
    CandidateRecord c;
    c.hash = "cand-" + id;
    c.operator_name = op_.name;
    c.source = source;
    c.params_json = ParamsJson(params);
    bool inserted = false;
    std::string err;
    EXPECT_TRUE(store_.PutCandidate(c, &inserted, &err)) << err;
    return c.hash;
  }

  void PutCubin(const std::string& bytes) {
    std::string err;
    EXPECT_TRUE(store_.PutCubin(Sha256Hex(bytes), bytes, "nvrtc 13.0", false, &err)) << err;
  }

  // A seal of one kernel whose store keeps `cubin` (any bytes: nothing here loads it).
  SealRecord SealOf(const std::string& id, const std::string& source, const ParamAssignment& params,
                    const std::string& cubin) {
    SealRecord s = NewSeal(id, PutCandidate(id, source, params));
    s.params_json = ParamsJson(params);
    s.cubin_sha256 = Sha256Hex(cubin);
    PutCubin(cubin);
    return StoreSeal(s);
  }

  // Exports `s` as C into a fresh folder; "" (with a failure) when it cannot.
  std::string Export(const SealRecord& s, const std::string& name = "c") {
    const std::string dir = tmp_.file(name);
    std::string err;
    EXPECT_TRUE(ExportSealC(store_, s, op_, *compiler_, dir, false, &err)) << err;
    return err.empty() ? dir : "";
  }

  // The pair compiles warning-free as C11 and as C++17 against the toolkit's cuda.h.
  void ExpectCompiles(const std::string& dir, const std::string& stem = kStem) {
    const std::string c = dir + "/" + stem + ".c";
    std::string log;
    EXPECT_TRUE(RunTool({cc_, "-std=c11", "-Wall", "-Wextra", "-Werror", "-c", "-I" + dir, "-I" + CudaRoot() + "/include",
                     c, "-o", dir + "/c11.o"},
                    &log))
        << log;
    EXPECT_TRUE(RunTool({cxx_, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-x", "c++", "-c", "-I" + dir,
                     "-I" + CudaRoot() + "/include", c, "-o", dir + "/cxx17.o"},
                    &log))
        << log;
  }

  // A host-only program built with the export: it includes the .c (to reach the embedded cubins),
  // writes cubin I to <out>.I, and per "M N" line of stdin prints the plan, or with "call" the
  // status of a launch on no GPU. Linked against the toolkit's stub libcuda, which answers every
  // driver call with an error: the program runs where no driver is installed.
  std::string BuildHostDriver(const std::string& dir, size_t cubins) {
    std::string c = "#include \"" + std::string(kStem) + ".c\"\n#include <stdio.h>\n#include <string.h>\n\n";
    c += "static void dump(const char* out, int i, const unsigned char* bytes, size_t n) {\n"
         "  char path[4096];\n"
         "  FILE* f;\n"
         "  snprintf(path, sizeof path, \"%s.%d\", out, i);\n"
         "  f = fopen(path, \"wb\");\n"
         "  if (f == NULL) return;\n"
         "  fwrite(bytes, 1, n, f);\n"
         "  fclose(f);\n}\n\n"
         "int main(int argc, char** argv) {\n"
         "  long long m, n;\n"
         "  const int call = argc > 2 && strcmp(argv[2], \"call\") == 0;\n";
    for (size_t i = 0; i < cubins; ++i)
      c += "  dump(argv[1], " + std::to_string(i) + ", fk_cubin_" + std::to_string(i) + ", sizeof fk_cubin_" +
           std::to_string(i) + ");\n";
    c += "  while (scanf(\"%lld %lld\", &m, &n) == 2) {\n"
         "    forgek_softmax_fp32_launch_plan plan;\n"
         "    forgek_softmax_fp32_status s;\n"
         "    int i, a;\n"
         "    if (call) {\n"
         "      s = forgek_softmax_fp32(NULL, (const void*)(uintptr_t)256, (void*)(uintptr_t)256, m, n, NULL, 0);\n"
         "      printf(\"%s %s\\n\", forgek_softmax_fp32_status_name(s), forgek_softmax_fp32_last_error());\n"
         "      continue;\n"
         "    }\n"
         "    s = forgek_softmax_fp32_plan(m, n, &plan);\n"
         "    if (s != FORGEK_SOFTMAX_FP32_OK) {\n"
         "      printf(\"%s %s\\n\", forgek_softmax_fp32_status_name(s), plan.message);\n"
         "      continue;\n"
         "    }\n"
         "    printf(\"ok kernel=%d ws=%zu\", plan.kernel, plan.workspace_bytes);\n"
         "    for (i = 0; i < plan.num_launches; ++i) {\n"
         "      const forgek_softmax_fp32_launch* l = &plan.launches[i];\n"
         "      printf(\" %s g=%u,%u,%u b=%u,%u,%u c=%u,%u,%u s=%u a=\", l->kernel, l->grid[0], l->grid[1], l->grid[2],\n"
         "             l->block[0], l->block[1], l->block[2], l->cluster[0], l->cluster[1], l->cluster[2],\n"
         "             l->dynamic_smem_bytes);\n"
         "      for (a = 0; a < l->num_args; ++a) printf(\"%s%lld\", a ? \",\" : \"\", (long long)l->args[a]);\n"
         "    }\n"
         "    printf(\"\\n\");\n"
         "  }\n"
         "  return 0;\n}\n";
    WriteFile(dir + "/driver.c", c);
    std::string log;
    EXPECT_TRUE(RunTool({cc_, "-std=c11", "-Wall", "-Wextra", "-Werror", "-I" + dir, "-I" + CudaRoot() + "/include",
                     dir + "/driver.c", "-o", dir + "/driver", "-L" + CudaRoot() + "/lib64/stubs", "-lcuda", "-lpthread"},
                    &log))
        << log;
    // The stub's soname is libcuda.so.1; a folder of its own names it so for the loader.
    std::error_code ec;
    fs::create_directories(dir + "/stub", ec);
    fs::create_symlink(CudaRoot() + "/lib64/stubs/libcuda.so", dir + "/stub/libcuda.so.1", ec);
    return dir + "/driver";
  }

  // The source compiled now with `params` (the seal's cubin as a run would have kept it): NVRTC,
  // no GPU needed.
  std::string Build(const std::string& source, const ParamAssignment& params) {
    CompileResult r = compiler_->CompileNow({"kernel.cu", ExpandedSource(source), "sm90", ParamDefines(params)});
    EXPECT_TRUE(r.ok) << r.Summary();
    return r.cubin;
  }

  // A gemm_bf16 dispatch as a run seals one (a table of kernels per suite config, a fallback for
  // every other size), stored and exported as C into `dir`: wgmma_tma_ws (128x128, cluster of 2) for
  // 4096^3 and the persistent family (its first instance: the big path, and the split-K skinny
  // path for M <= 64) for the other configs and as the fallback. Fills `gemm` with the operator.
  void ExportGemmDispatch(const std::string& dir, OperatorSpec* gemm) {
    Diagnostics diags;
    ASSERT_TRUE(LoadOperator(SourceDir() + "/operators/gemm_bf16", gemm, &diags)) << FormatDiagnostics(diags);
    Candidate persistent, ws;
    ASSERT_TRUE(LoadCandidateFile(gemm->dir + "/families/wgmma_persistent.cu", &persistent, &diags))
        << FormatDiagnostics(diags);
    ASSERT_TRUE(LoadCandidateFile(gemm->dir + "/families/wgmma_tma_ws.cu", &ws, &diags)) << FormatDiagnostics(diags);
    const ParamAssignment first = FirstValues(persistent.manifest);
    const std::vector<std::tuple<std::string, std::string, ParamAssignment>> entries = {
        {"wgmma_persistent.cu", persistent.source, first},
        {"wgmma_tma_ws.cu", ws.source,
         {{"BM", 128}, {"BN", 128}, {"BK", 64}, {"STAGES", 4}, {"CLUSTER_M", 2}, {"GROUP_M", 8}}}};
    nlohmann::json kernels = nlohmann::json::array();
    std::string err;
    for (size_t i = 0; i < entries.size(); ++i) {
      const auto& [label, source, params] = entries[i];
      CandidateRecord c;
      c.hash = "cand-gemm-dispatch-" + std::to_string(i);
      c.operator_name = gemm->name;
      c.source = source;
      c.params_json = ParamsJson(params);
      bool inserted = false;
      ASSERT_TRUE(store_.PutCandidate(c, &inserted, &err)) << err;
      const std::string cubin = Build(source, params);
      ASSERT_FALSE(cubin.empty()) << label;
      PutCubin(cubin);
      kernels.push_back({{"candidate", c.hash}, {"params", params}, {"cubin_sha256", Sha256Hex(cubin)}, {"label", label}});
    }
    nlohmann::json table = nlohmann::json::array();
    for (const ConfigSpec& config : gemm->configs)
      table.push_back({{"config", config.name}, {"kernel", config.name == "4096^3" ? 1 : 0}, {"why", "test"}});
    ASSERT_EQ(table.size(), 4u);
    const nlohmann::json dispatch = {{"kernels", kernels}, {"table", table}, {"fallback", 0}};
    SealRecord s = NewSeal("g0000gemmdispatch", kernels[0]["candidate"].get<std::string>());
    s.operator_name = gemm->name;
    s.params_json = ParamsJson(first);
    s.cubin_sha256 = kernels[0]["cubin_sha256"].get<std::string>();
    s.metadata_json = nlohmann::json{{"dispatch", dispatch}}.dump();
    StoreSeal(s);
    ASSERT_TRUE(ExportSealC(store_, s, *gemm, *compiler_, dir, false, &err)) << err;
  }

  // examples/cpp/softmax_main.cc built against the export in `dir` with the commands of
  // docs/using-seals.md (the export as C11, the program as C++17, linked with the toolkit's stub
  // libcuda), every warning an error; the program's path.
  std::string BuildCppExample(const std::string& dir, const std::string& example = "softmax_main",
                              const std::string& stem = kStem) {
    const std::vector<std::string> warnings = {"-Wall", "-Wextra", "-Wpedantic", "-Wshadow", "-Werror"};
    auto with_warnings = [&](std::vector<std::string> argv) {
      argv.insert(argv.begin() + 1, warnings.begin(), warnings.end());
      return argv;
    };
    const std::string object = dir + "/" + stem + ".o", program = dir + "/" + example;
    std::string log;
    EXPECT_TRUE(RunTool(with_warnings({cc_, "-std=c11", "-O2", "-c", dir + "/" + stem + ".c", "-I",
                                       CudaRoot() + "/include", "-o", object}),
                        &log))
        << log;
    EXPECT_TRUE(RunTool(with_warnings({cxx_, "-std=c++17", "-O2", SourceDir() + "/examples/cpp/" + example + ".cc", object,
                                       "-I", dir, "-I", CudaRoot() + "/include", "-L", CudaRoot() + "/lib64/stubs",
                                       "-lcuda", "-lpthread", "-o", program}),
                        &log))
        << log;
    return program;
  }

  // The driver's output for `sizes` ("M N" lines), one line each.
  std::vector<std::string> RunDriver(const std::string& driver, const std::vector<std::pair<int64_t, int64_t>>& sizes,
                                     bool call = false) {
    std::string input;
    for (const auto& [m, n] : sizes) input += std::to_string(m) + " " + std::to_string(n) + "\n";
    std::string out;
    std::vector<std::string> argv = {driver, tmp_.file("cubin")};
    if (call) argv.push_back("call");
    EXPECT_TRUE(RunTool(argv, &out, input, {"LD_LIBRARY_PATH=" + fs::path(driver).parent_path().string() + "/stub"}))
        << out;
    std::vector<std::string> lines;
    std::stringstream ss(out);
    for (std::string line; std::getline(ss, line);) lines.push_back(line);
    return lines;
  }

  // What the driver must print for (m, n) with kernel `entry` (params `params`) serving it: the plan
  // of ResolveCandidate, or UNSUPPORTED_SIZE where the tensors or the manifest refuse the sizes.
  std::string Expected(const Candidate& c, const ParamAssignment& params, int entry, int64_t m, int64_t n) {
    int64_t bytes = 0;
    if (m < 1 || n < 1 || __builtin_mul_overflow(m, n, &bytes) || __builtin_mul_overflow(bytes, int64_t{4}, &bytes))
      return "UNSUPPORTED_SIZE";
    ResolvedCandidate rc;
    Diagnostics diags;
    if (!ResolveCandidate(c.manifest, op_, params, {{"M", m}, {"N", n}}, 132, &rc, &diags)) return "UNSUPPORTED_SIZE";
    int64_t ws = 0;
    for (const auto& [name, b] : rc.workspaces) ws += (b + 255) / 256 * 256;
    std::string out = "ok kernel=" + std::to_string(entry) + " ws=" + std::to_string(ws);
    for (const ResolvedLaunch& l : rc.launches) {
      auto dims = [](const int64_t d[3]) {
        return std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]);
      };
      out += " " + l.kernel + " g=" + dims(l.grid) + " b=" + dims(l.block) + " c=" + dims(l.cluster) +
             " s=" + std::to_string(l.smem) + " a=";
      for (size_t a = 0; a < l.args.size(); ++a) out += (a ? "," : "") + std::to_string(PlanArgValue(l.args[a]));
    }
    return out;
  }

  // Sizes around every bound: zero and negative, the suite, random ones across magnitudes, and
  // sizes whose expressions overflow or leave the launch limits.
  static std::vector<std::pair<int64_t, int64_t>> Sizes(size_t count) {
    const int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
    std::vector<std::pair<int64_t, int64_t>> out = {
        {4096, 32768}, {65536, 1024}, {16384, 4096}, {1, 1}, {1, 4}, {0, 1024}, {1024, 0}, {-1, 1024}, {kMin, 8},
        {8, kMax}, {kMax, 4}, {int64_t{1} << 31, 4}, {(int64_t{1} << 31) - 1, 4}, {4, int64_t{1} << 31},
        {3, 1022}, {3, 1023}, {100, 32768}, {100, 32772}, {100, 262144}, {100, 262148}, {7, 1024}, {7, 1028},
        {int64_t{1} << 40, int64_t{1} << 40}};
    std::mt19937_64 rng(27);
    std::uniform_real_distribution<double> log_m(0, std::log(70000.0)), log_n(0, std::log(300000.0));
    std::uniform_int_distribution<int> four(0, 3);
    while (out.size() < count) {
      int64_t n = static_cast<int64_t>(std::exp(log_n(rng)));
      if (four(rng) != 0) n = (n + 3) / 4 * 4;  // mostly multiples of 4, as vector kernels want
      out.push_back({static_cast<int64_t>(std::exp(log_m(rng))), n});
    }
    return out;
  }

  std::string cc_, cxx_;
  std::unique_ptr<Compiler> compiler_;
};

TEST_F(SealExportCTest, ExportsAPairThatCompilesAsC11AndCxx17AndEmbedsTheStoresCubin) {
  const std::string cubin = std::string("\x7f" "ELF\0\x01 the sealed bytes, NUL and all \xff\x80", 40);
  SealRecord s = SealOf("c0000seed", SeedSource(), params_, cubin);
  const std::string dir = Export(s);
  ASSERT_FALSE(dir.empty());
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) files.insert(e.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{std::string(kStem) + ".h", std::string(kStem) + ".c"}));
  const std::string header = ReadFile(dir + "/" + kStem + ".h");
  EXPECT_NE(header.find("forgek_softmax_fp32_status forgek_softmax_fp32(CUstream stream, const void* x, void* y, "
                        "int64_t M, int64_t N, void* workspace, size_t workspace_bytes);"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find("forgek_softmax_fp32_plan(int64_t M, int64_t N, forgek_softmax_fp32_launch_plan* plan);"),
            std::string::npos);
  EXPECT_NE(header.find("FORGEK_SOFTMAX_FP32_UNSUPPORTED_SIZE = 1"), std::string::npos);
  EXPECT_NE(header.find(s.id), std::string::npos) << "the header names the seal";
  const std::string source = ReadFile(dir + "/" + kStem + ".c");
  EXPECT_EQ(source.find("Eval"), std::string::npos) << "no expression interpreter in the output";
  EXPECT_NE(source.find(Sha256Hex(cubin)), std::string::npos);
  ExpectCompiles(dir);

  const std::string driver = BuildHostDriver(dir, 1);
  ASSERT_FALSE(RunDriver(driver, {{4096, 32768}}).empty());
  EXPECT_EQ(ReadFile(tmp_.file("cubin.0")), cubin) << "the embedded bytes are the store's";
}

// The plan of every exported kernel, on sizes across every bound, is ResolveCandidate's: same
// launches (those whose `when` holds), dimensions, shared memory and argument values, and
// UNSUPPORTED_SIZE exactly where forgek's own resolution refuses the sizes.
TEST_F(SealExportCTest, ThePlanAgreesWithResolveCandidateOnRandomSizes) {
  struct Case {
    std::string file;  // "" : the seed
    ParamAssignment params;
  };
  const ParamAssignment by_length = {{"SHORT_PATH", 1}, {"WARP_ROWS", 4}, {"WARP_ITEMS", 8}, {"WARPS", 4},
                                     {"STAGES", 3},     {"CTAS_PER_SM", 2}, {"EVICT_FIRST", 0}, {"CTA_ITEMS", 8},
                                     {"MIN_THREADS", 128}, {"LOAD", 0},   {"STORE", 1}};
  ParamAssignment bulk = by_length;
  bulk["SHORT_PATH"] = 0;
  const std::vector<Case> cases = {
      {"", {{"THREADS", 256}}},
      {"by_row_length.cu", by_length},  // a warp kernel for short rows, clusters of up to 8 CTAs above
      {"by_row_length.cu", bulk},       // dynamic shared memory beyond 48 KiB, a grid bounded by residency
      {"cluster_split_rows.cu", {{"CLUSTER", 4}, {"BLOCK", 256}, {"VEC", 4}, {"MAX_ITEMS", 8}}},
      {"row_per_block.cu", {{"BLOCK", 512}, {"VEC", 2}, {"SMEM_CACHE", 1}}},
      {"row_per_warp.cu", {{"ROWS_PER_BLOCK", 8}, {"VEC", 4}, {"MAX_ITEMS", 16}}},
  };
  const std::vector<std::pair<int64_t, int64_t>> sizes = Sizes(300);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& k = cases[i];
    SCOPED_TRACE(k.file.empty() ? "seed.cu" : k.file);
    const std::string source = k.file.empty() ? SeedSource() : Family(k.file);
    Candidate parsed;
    Diagnostics diags;
    ASSERT_TRUE(ParseCandidate(k.file, source, &parsed, &diags)) << FormatDiagnostics(diags);
    SealRecord s = SealOf("c000plan" + std::to_string(i), source, k.params, "cubin of case " + std::to_string(i));
    const std::string dir = Export(s, "plan" + std::to_string(i));
    ASSERT_FALSE(dir.empty());
    ExpectCompiles(dir);
    const std::vector<std::string> lines = RunDriver(BuildHostDriver(dir, 1), sizes);
    ASSERT_EQ(lines.size(), sizes.size());
    int supported = 0;
    for (size_t j = 0; j < sizes.size(); ++j) {
      const auto [m, n] = sizes[j];
      const std::string want = Expected(parsed, k.params, 0, m, n);
      SCOPED_TRACE("M=" + std::to_string(m) + " N=" + std::to_string(n));
      if (want == "UNSUPPORTED_SIZE") {
        EXPECT_EQ(lines[j].rfind("UNSUPPORTED_SIZE ", 0), 0u) << lines[j];
      } else {
        EXPECT_EQ(lines[j], want);
        ++supported;
      }
    }
    EXPECT_GT(supported, 100) << "most drawn sizes are served";
  }
}

// A size that breaks a constraint: the plan says which, with the sizes; the launch returns the same
// code and message before any driver call (the stub driver would fail every call).
TEST_F(SealExportCTest, AnUnsupportedSizeReturnsTheErrorCodeNamingTheConstraint) {
  SealRecord s = SealOf("c0000warp", Family("row_per_warp.cu"), {{"ROWS_PER_BLOCK", 4}, {"VEC", 4}, {"MAX_ITEMS", 8}},
                        "warp cubin");
  const std::string dir = Export(s);
  ASSERT_FALSE(dir.empty());
  const std::string driver = BuildHostDriver(dir, 1);
  std::vector<std::string> plans = RunDriver(driver, {{4096, 1022}, {0, 1024}, {4096, 1024}, {3000000000, 4}});
  ASSERT_EQ(plans.size(), 4u);
  EXPECT_EQ(plans[0], "UNSUPPORTED_SIZE constraint 'N % VEC == 0' does not hold (sizes M=4096, N=1022)");
  EXPECT_EQ(plans[1],
            "UNSUPPORTED_SIZE tensors[0].shape[0]: tensor 'x' dimension 'M' is 0; a tensor's dimensions must be at "
            "least 1 (sizes M=0, N=1024)");
  EXPECT_EQ(plans[2].rfind("ok kernel=0 ws=0 softmax_row_per_warp g=1024,1,1 b=128,1,1 c=1,1,1 s=0 a=0,0,4096,1024", 0),
            0u)
      << plans[2];
  EXPECT_EQ(plans[3],
            "UNSUPPORTED_SIZE launches[0].args[2]: 'M' is 3000000000; must be in [-2147483648, 2147483647] (sizes "
            "M=3000000000, N=4)");
  std::vector<std::string> calls = RunDriver(driver, {{4096, 1022}, {4096, 1024}}, true);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0], "UNSUPPORTED_SIZE constraint 'N % VEC == 0' does not hold (sizes M=4096, N=1022)");
  EXPECT_EQ(calls[1].rfind("CUDA_ERROR cuStreamGetCtx (the stream's context): ", 0), 0u)
      << "a supported size reaches the driver, here the stub: " << calls[1];
}

// A persistent kernel's grid reads num_sms, the device's SM count (docs/expressions.md). The export
// binds it in C: the call reads the count of its stream's device from the driver once per context,
// the public plan that of the current context, and where there is none (no driver: the stub) the
// sealed arch's nominal count. A fake driver preloaded over the stub answers the queries with 78
// SMs and counts them.
TEST_F(SealExportCTest, NumSmsIsTheDevicesCountReadOncePerContextElseTheNominalOne) {
  const std::string source =
      "/* forgek\n{\"launches\": [{\"kernel\": \"softmax_persistent\", \"grid\": [\"min(M, num_sms*2)\"], \"block\": [256],\n"
      "  \"args\": [\"x\", \"y\", \"M\", \"N\", \"num_sms\"]}]}\n*/\n"
      "extern \"C\" __global__ void softmax_persistent(const float* x, float* y, int M, int N, int sms) {}\n";
  SealRecord s = SealOf("c0000persistent", source, {}, "persistent cubin");
  const std::string dir = Export(s);
  ASSERT_FALSE(dir.empty());
  const std::string header = ReadFile(dir + "/" + kStem + ".h");
  EXPECT_NE(header.find("#define FORGEK_SOFTMAX_FP32_NOMINAL_SMS 132"), std::string::npos) << header;
  EXPECT_NE(header.find("int64_t num_sms;"), std::string::npos) << "the plan says which count it is for";
  const std::string c = ReadFile(dir + "/" + kStem + ".c");
  EXPECT_NE(c.find("cuDeviceGetAttribute(&count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device)"), std::string::npos);
  EXPECT_NE(c.find("int64_t v_num_sms = num_sms;"), std::string::npos) << "the manifest's name is bound";
  ExpectCompiles(dir);
  const std::string driver = BuildHostDriver(dir, 1);

  // No driver: the nominal count.
  std::vector<std::string> plans = RunDriver(driver, {{1000, 64}, {100, 64}});
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(plans[0], "ok kernel=0 ws=0 softmax_persistent g=264,1,1 b=256,1,1 c=1,1,1 s=0 a=0,0,1000,64,132");
  EXPECT_EQ(plans[1], "ok kernel=0 ws=0 softmax_persistent g=100,1,1 b=256,1,1 c=1,1,1 s=0 a=0,0,100,64,132");

  // A device of 78 SMs behind a current context.
  const std::string fake = dir + "/fake_driver.c";
  WriteFile(fake,
            "#include <cuda.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
            "#define FAKE_CONTEXT ((CUcontext)(uintptr_t)0x1000)\n"
            "CUresult cuCtxGetCurrent(CUcontext* c) { *c = FAKE_CONTEXT; return CUDA_SUCCESS; }\n"
            "CUresult cuStreamGetCtx(CUstream s, CUcontext* c) { (void)s; *c = FAKE_CONTEXT; return CUDA_SUCCESS; }\n"
            "CUresult cuCtxGetId(CUcontext c, unsigned long long* id) { (void)c; *id = 7; return CUDA_SUCCESS; }\n"
            "CUresult cuCtxPushCurrent(CUcontext c) { (void)c; return CUDA_SUCCESS; }\n"
            "CUresult cuCtxPopCurrent(CUcontext* c) { if (c) *c = FAKE_CONTEXT; return CUDA_SUCCESS; }\n"
            "CUresult cuCtxGetDevice(CUdevice* d) { *d = 0; return CUDA_SUCCESS; }\n"
            "CUresult cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice d) {\n"
            "  (void)d;\n"
            "  if (a != CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) return CUDA_ERROR_INVALID_VALUE;\n"
            "  fprintf(stderr, \"fake driver: SM count read\\n\");\n"
            "  *v = 78;\n"
            "  return CUDA_SUCCESS;\n"
            "}\n");
  std::string log;
  ASSERT_TRUE(RunTool({cc_, "-shared", "-fPIC", "-I" + CudaRoot() + "/include", fake, "-o", dir + "/fake_driver.so"},
                      &log))
      << log;
  auto run = [&](bool call) {
    std::vector<std::string> argv = {driver, tmp_.file("cubin")};
    if (call) argv.push_back("call");
    std::string out;
    EXPECT_TRUE(RunTool(argv, &out, "1000 64\n100 64\n1000 64\n",
                        {"LD_LIBRARY_PATH=" + dir + "/stub", "LD_PRELOAD=" + dir + "/fake_driver.so"}))
        << out;
    return out;
  };
  auto reads = [](const std::string& out) {
    int n = 0;
    for (size_t at = out.find("SM count read"); at != std::string::npos; at = out.find("SM count read", at + 1)) ++n;
    return n;
  };
  const std::string planned = run(false);
  EXPECT_NE(planned.find("ok kernel=0 ws=0 softmax_persistent g=156,1,1 b=256,1,1 c=1,1,1 s=0 a=0,0,1000,64,78\n"
                         "ok kernel=0 ws=0 softmax_persistent g=100,1,1 b=256,1,1 c=1,1,1 s=0 a=0,0,100,64,78\n"),
            std::string::npos)
      << planned;
  // Three calls in one context: the count is read once, then kept with the context's modules (the
  // stub then fails the module load, after the plan).
  const std::string called = run(true);
  EXPECT_EQ(reads(called), 1) << called;
  EXPECT_NE(called.find("CUDA_ERROR cuModuleLoadData"), std::string::npos) << called;
}

// A dispatch seal: the table row whose values equal the sizes, else the fallback where it accepts
// them, else the expert reference (not exported: UNSUPPORTED_SIZE saying so).
TEST_F(SealExportCTest, ADispatchSealFollowsTheTableThenTheFallbackThenTheReference) {
  const ParamAssignment warp = {{"ROWS_PER_BLOCK", 4}, {"VEC", 4}, {"MAX_ITEMS", 8}};
  const ParamAssignment cluster = {{"CLUSTER", 4}, {"BLOCK", 256}, {"VEC", 4}, {"MAX_ITEMS", 8}};
  const std::string warp_hash = PutCandidate("d-warp", Family("row_per_warp.cu"), warp);
  const std::string cluster_hash = PutCandidate("d-cluster", Family("cluster_split_rows.cu"), cluster);
  PutCubin("warp cubin");
  PutCubin("cluster cubin");
  nlohmann::json dispatch = {
      {"kernels",
       {{{"candidate", warp_hash}, {"params", warp}, {"cubin_sha256", Sha256Hex("warp cubin")}, {"label", "attempt 4"}},
        {{"candidate", cluster_hash}, {"params", cluster}, {"cubin_sha256", Sha256Hex("cluster cubin")}, {"label", "attempt 9"}},
        {{"reference", "reference (reference.cu)"}}}},
      {"table",
       {{{"config", "4096x32768"}, {"kernel", 1}, {"why", "attempt 9: 1.300x, faster beyond noise"}},
        {{"config", "65536x1024"}, {"kernel", 0}, {"why", "attempt 4: 1.200x, faster beyond noise"}},
        {{"config", "16384x4096"}, {"kernel", 2}, {"why", "incumbent: best 0.990x, the same within noise"}}}},
      {"fallback", 0}};
  SealRecord s = NewSeal("d0000dispatch", warp_hash);
  s.params_json = ParamsJson(warp);
  s.cubin_sha256 = Sha256Hex("warp cubin");
  s.metadata_json = nlohmann::json{{"dispatch", dispatch}}.dump();
  StoreSeal(s);
  const std::string dir = Export(s);
  ASSERT_FALSE(dir.empty());
  ExpectCompiles(dir);
  std::vector<std::string> lines =
      RunDriver(BuildHostDriver(dir, 2), {{4096, 32768}, {65536, 1024}, {16384, 4096}, {100, 64}, {100, 66}, {4096, 1024}});
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[0].rfind("ok kernel=1 ws=0 softmax_cluster_split_rows g=16384,1,1 b=256,1,1 c=4,1,1", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("ok kernel=0 ws=0 softmax_row_per_warp", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2],
            "UNSUPPORTED_SIZE the seal serves these sizes (config 16384x4096) with the expert reference (reference "
            "(reference.cu)), which a C export does not hold (sizes M=16384, N=4096)");
  EXPECT_EQ(lines[3].rfind("ok kernel=0 ws=0 softmax_row_per_warp g=25,1,1", 0), 0u) << "the fallback: " << lines[3];
  EXPECT_EQ(lines[4],
            "UNSUPPORTED_SIZE the seal's fallback, kernel 0, does not accept these sizes, so its rule gives them to "
            "the expert reference (reference (reference.cu)), which a C export does not hold: constraint 'N % VEC == "
            "0' does not hold (sizes M=100, N=66)");
  EXPECT_EQ(lines[5].rfind("ok kernel=0 ", 0), 0u) << "not a row (its values differ): the fallback: " << lines[5];
  std::set<std::string> embedded = {ReadFile(tmp_.file("cubin.0")), ReadFile(tmp_.file("cubin.1"))};
  EXPECT_EQ(embedded, (std::set<std::string>{"warp cubin", "cluster cubin"}));

  // A table written before fallbacks were recorded: the seal's own kernel serves outside the table.
  dispatch.erase("fallback");
  SealRecord old = NewSeal("d0000nofallback", PutCandidate("d-own", SeedSource(), params_));
  old.params_json = ParamsJson(params_);
  old.cubin_sha256 = Sha256Hex("own cubin");
  PutCubin("own cubin");
  old.metadata_json = nlohmann::json{{"dispatch", dispatch}}.dump();
  StoreSeal(old);
  const std::string old_dir = Export(old, "old");
  ASSERT_FALSE(old_dir.empty());
  lines = RunDriver(BuildHostDriver(old_dir, 3), {{100, 66}});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("ok kernel=3 ws=0 softmax_fp32_seed g=100,1,1 b=256,1,1", 0), 0u) << lines[0];
}

// A store copied to a machine that did not seal: the source cannot be compiled there (here it does
// not compile at all), and the C export still embeds the kept cubin.
TEST_F(SealExportCTest, ExportsFromACopiedStoreWithoutCompiling) {
  const std::string cubin = "the cubin sealed elsewhere";
  SealRecord s = SealOf("c0000copied", SeedSource() + "\n#error this machine cannot compile it\n", params_, cubin);
  store_.Close();
  fs::create_directories(tmp_.file("elsewhere"));
  fs::copy_file(tmp_.file("store.db"), tmp_.file("elsewhere/store.db"));
  Store copy;
  std::string err;
  ASSERT_TRUE(copy.Open(tmp_.file("elsewhere/store.db"), &err)) << err;
  ASSERT_TRUE(ExportSealC(copy, s, op_, *compiler_, tmp_.file("copied"), false, &err)) << err;
  ExpectCompiles(tmp_.file("copied"));
  BuildHostDriver(tmp_.file("copied"), 1);
  RunDriver(tmp_.file("copied/driver"), {});
  EXPECT_EQ(ReadFile(tmp_.file("cubin.0")), cubin);
  EXPECT_NE(ReadFile(tmp_.file("copied/") + kStem + ".h").find("the sealed ones the store keeps"), std::string::npos);
}

// The C++ example of docs/using-seals.md builds, warning-free, against the export of a softmax seal,
// as the doc builds it (here without a GPU: the stub libcuda links it, the GPU suite runs it).
TEST_F(SealExportCTest, TheCppExampleBuildsAgainstTheExport) {
  SealRecord s = SealOf("c0000example", SeedSource(), params_, "example cubin");
  const std::string dir = Export(s);
  ASSERT_FALSE(dir.empty());
  EXPECT_TRUE(fs::is_regular_file(BuildCppExample(dir)));
}

// examples/cpp/gemm_main.cc builds against a gemm_bf16 dispatch export, every warning an error.
TEST_F(SealExportCTest, TheCppGemmExampleBuildsAgainstAGemmDispatch) {
  OperatorSpec gemm;
  const std::string dir = tmp_.file("gemm-example");
  ExportGemmDispatch(dir, &gemm);
  if (HasFatalFailure()) return;
  EXPECT_TRUE(fs::is_regular_file(BuildCppExample(dir, "gemm_main", "forgek_gemm_bf16")));
}

// Without its cubin and with a source that no longer compiles there is nothing to embed; a folder
// that is not empty is refused as ExportSeal refuses it.
TEST_F(SealExportCTest, RefusesWhatItCannotExportNamingTheSeal) {
  SealRecord s = NewSeal("c0000nocubin", PutCandidate("nocubin", SeedSource() + "\n#error gone\n", params_));
  s.cubin_sha256 = Sha256Hex("never kept");
  StoreSeal(s);
  std::string err;
  EXPECT_FALSE(ExportSealC(store_, s, op_, *compiler_, tmp_.file("none"), false, &err));
  EXPECT_NE(err.find("seal c0000nocubin"), std::string::npos) << err;
  EXPECT_NE(err.find("no longer compiles"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(tmp_.file("none")));

  SealRecord ok = SealOf("c0000full", SeedSource(), params_, "bytes");
  fs::create_directories(tmp_.file("full"));
  WriteFile(tmp_.file("full/keep.txt"), "mine");
  EXPECT_FALSE(ExportSealC(store_, ok, op_, *compiler_, tmp_.file("full"), false, &err));
  EXPECT_NE(err.find("not an empty folder"), std::string::npos) << err;
  EXPECT_EQ(ReadFile(tmp_.file("full/keep.txt")), "mine");
}

// TMA tensor maps (gemm_bf16's warp-specialised family: maps over A and B, a cluster, 130 KiB of
// shared memory): the export compiles, and its plan's maps are ResolveCandidate's in the driver's
// form (innermost dimension first, byte strides of the outer ones).
TEST_F(SealExportCTest, TensorMapsArePlannedInTheDriversForm) {
  OperatorSpec gemm;
  Diagnostics diags;
  ASSERT_TRUE(LoadOperator(SourceDir() + "/operators/gemm_bf16", &gemm, &diags)) << FormatDiagnostics(diags);
  const std::string source = ReadFile(gemm.dir + "/families/wgmma_tma_ws.cu");
  const ParamAssignment params = {{"BM", 128}, {"BN", 128}, {"BK", 64}, {"STAGES", 4}, {"CLUSTER_M", 2}, {"GROUP_M", 8}};
  CandidateRecord c;
  c.hash = "cand-gemm";
  c.operator_name = gemm.name;
  c.source = source;
  c.params_json = ParamsJson(params);
  bool inserted = false;
  std::string err;
  ASSERT_TRUE(store_.PutCandidate(c, &inserted, &err)) << err;
  PutCubin("gemm cubin");
  SealRecord s = NewSeal("t0000gemm", c.hash);
  s.operator_name = gemm.name;
  s.params_json = c.params_json;
  s.cubin_sha256 = Sha256Hex("gemm cubin");
  StoreSeal(s);
  const std::string dir = tmp_.file("gemm");
  ASSERT_TRUE(ExportSealC(store_, s, gemm, *compiler_, dir, false, &err)) << err;
  ExpectCompiles(dir, "forgek_gemm_bf16");
  WriteFile(dir + "/maps.c", R"(#include "forgek_gemm_bf16.h"
#include <stdio.h>
int main(void) {
  long long m, n, k;
  while (scanf("%lld %lld %lld", &m, &n, &k) == 3) {
    forgek_gemm_bf16_launch_plan plan;
    int i, d;
    if (forgek_gemm_bf16_plan(m, n, k, &plan) != FORGEK_GEMM_BF16_OK) {
      printf("UNSUPPORTED_SIZE %s\n", plan.message);
      continue;
    }
    printf("ok smem=%u cluster=%u", plan.launches[0].dynamic_smem_bytes, plan.launches[0].cluster[0]);
    for (i = 0; i < plan.num_tensor_maps; ++i) {
      const forgek_gemm_bf16_tensor_map* t = &plan.tensor_maps[i];
      printf(" %s", t->name);
      for (d = 0; d < (int)t->rank; ++d) printf(" %llu/%u", (unsigned long long)t->dims[d], t->box[d]);
      for (d = 0; d + 1 < (int)t->rank; ++d) printf(" s%llu", (unsigned long long)t->strides[d]);
    }
    printf("\n");
  }
  return 0;
}
)");
  std::error_code ec;
  fs::create_directories(dir + "/stub", ec);
  fs::create_symlink(CudaRoot() + "/lib64/stubs/libcuda.so", dir + "/stub/libcuda.so.1", ec);
  std::string log;
  ASSERT_TRUE(RunTool({cc_, "-std=c11", "-Wall", "-Wextra", "-Werror", "-I" + dir, "-I" + CudaRoot() + "/include",
                       dir + "/maps.c", dir + "/forgek_gemm_bf16.c", "-o", dir + "/maps", "-L" + CudaRoot() + "/lib64/stubs",
                       "-lcuda", "-lpthread"},
                      &log))
      << log;
  const std::vector<std::vector<int64_t>> sizes = {{4096, 4096, 4096}, {64, 8192, 8192}, {200, 384, 320},
                                                   {100, 256, 256},    {256, 200, 256},  {256, 256, 100}};
  std::string input;
  for (const auto& v : sizes) input += std::to_string(v[0]) + " " + std::to_string(v[1]) + " " + std::to_string(v[2]) + "\n";
  std::string out;
  ASSERT_TRUE(RunTool({dir + "/maps"}, &out, input, {"LD_LIBRARY_PATH=" + dir + "/stub"})) << out;
  Candidate parsed;
  ASSERT_TRUE(ParseCandidate("wgmma_tma_ws.cu", source, &parsed, &diags)) << FormatDiagnostics(diags);
  std::stringstream lines(out);
  for (const auto& v : sizes) {
    std::string line;
    ASSERT_TRUE(std::getline(lines, line)) << out;
    SCOPED_TRACE(line);
    ResolvedCandidate rc;
    Diagnostics why;
    if (!ResolveCandidate(parsed.manifest, gemm, params, {{"M", v[0]}, {"N", v[1]}, {"K", v[2]}}, 132, &rc, &why)) {
      EXPECT_EQ(line.rfind("UNSUPPORTED_SIZE constraint '", 0), 0u) << FormatDiagnostics(why);
      continue;
    }
    std::string want = "ok smem=" + std::to_string(rc.launches[0].smem) + " cluster=" +
                       std::to_string(rc.launches[0].cluster[0]);
    for (const ResolvedTensorMap& t : rc.tensor_maps) {
      want += " " + t.name;
      const size_t rank = t.shape.size();
      for (size_t d = 0; d < rank; ++d)
        want += " " + std::to_string(t.shape[rank - 1 - d]) + "/" + std::to_string(t.box[rank - 1 - d]);
      int64_t stride = 2;  // bf16
      for (size_t d = 0; d + 1 < rank; ++d) want += " s" + std::to_string(stride *= t.shape[rank - 1 - d]);
    }
    EXPECT_EQ(line, want);
  }
}

TEST_F(SealExportCTest, TheCliExportsWithLangC) {
  SealRecord s = SealOf("c0000clicli", SeedSource(), params_, "cli cubin");
  store_.Close();
  const std::vector<std::string> common = {"--store", tmp_.file("store.db"), "--operators", SourceDir() + "/operators"};
  auto args = [&](std::vector<std::string> rest) {
    std::vector<std::string> all = common;
    all.insert(all.end(), rest.begin(), rest.end());
    return all;
  };
  CommandResult r = RunForgek(args({"seal", "export", "c0000cli", tmp_.file("cli"), "--lang", "c"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("as C to"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_regular_file(tmp_.file("cli/") + kStem + ".c"));
  EXPECT_TRUE(fs::is_regular_file(tmp_.file("cli/") + kStem + ".h"));
  r = RunForgek(args({"seal", "export", "c0000cli", tmp_.file("folder")}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_regular_file(tmp_.file("folder/launch.json"))) << "the default stays the folder";
  r = RunForgek(args({"seal", "export", "c0000cli", tmp_.file("rust"), "--lang", "rust"}));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE((r.out + r.err).find("--lang"), std::string::npos) << r.out << r.err;
  r = RunForgek({"seal", "export", "--help"});
  EXPECT_NE(r.out.find("--lang"), std::string::npos) << r.out;
}

// ---------------------------------------------------------------------------------------------
// On a GPU: the exported C built with cc into a program and run.

bool HasGpu() { return RunForgek({"worker", "--probe"}).exit_code == 0; }

// A program that runs forgek_softmax_fp32 on random inputs for each "M N" line of stdin and compares
// it with a softmax in double precision on the CPU: one line per size, "ok M N max_abs" or why not.
const char* kSoftmaxDriver = R"(#include "forgek_softmax_fp32.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { printf("driver error %d at %s\n", (int)r_, #x); return 1; } } while (0)

int main(void) {
  CUdevice dev;
  CUcontext ctx;
  CUstream stream;
  long long m, n;
  unsigned long long seed = 88172645463325252ULL;
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&dev, 0));
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  while (scanf("%lld %lld", &m, &n) == 2) {
    size_t count = (size_t)m * (size_t)n, i;
    float* x = (float*)malloc(count * sizeof(float));
    float* y = (float*)malloc(count * sizeof(float));
    CUdeviceptr dx, dy;
    double max_abs = 0, err2 = 0, ref2 = 0;
    long long row;
    forgek_softmax_fp32_status s;
    if (x == NULL || y == NULL) { printf("out of host memory\n"); return 1; }
    for (i = 0; i < count; ++i) {
      seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
      x[i] = (float)(((double)(seed >> 11) / 9007199254740992.0) * 8.0 - 4.0);
    }
    CHECK(cuMemAlloc(&dx, count * sizeof(float)));
    CHECK(cuMemAlloc(&dy, count * sizeof(float)));
    CHECK(cuMemcpyHtoD(dx, x, count * sizeof(float)));
    CHECK(cuMemsetD32(dy, 0x7fc00000u, count)); CHECK(cuCtxSynchronize());  /* NaN: an element left unwritten shows; the legacy stream is not waited for by a non-blocking one */
    s = forgek_softmax_fp32(stream, (const void*)(uintptr_t)dx, (void*)(uintptr_t)dy, m, n, NULL, 0);
    if (s != FORGEK_SOFTMAX_FP32_OK) {
      printf("%s %s\n", forgek_softmax_fp32_status_name(s), forgek_softmax_fp32_last_error());
    } else {
      CHECK(cuStreamSynchronize(stream));
      CHECK(cuMemcpyDtoH(y, dy, count * sizeof(float)));
      for (row = 0; row < m; ++row) {
        const float* xr = x + (size_t)row * (size_t)n;
        const float* yr = y + (size_t)row * (size_t)n;
        double mx = -INFINITY, sum = 0;
        long long j;
        for (j = 0; j < n; ++j) mx = xr[j] > mx ? xr[j] : mx;
        for (j = 0; j < n; ++j) sum += exp(xr[j] - mx);
        for (j = 0; j < n; ++j) {
          double want = exp(xr[j] - mx) / sum, d = fabs((double)yr[j] - want);
          if (!(d <= max_abs)) max_abs = isnan(d) ? INFINITY : d;
          err2 += d * d;
          ref2 += want * want;
        }
      }
      printf("ok %lld %lld %.3g %.3g\n", m, n, max_abs, sqrt(err2 / ref2));
    }
    cuMemFree(dx);
    cuMemFree(dy);
    free(x);
    free(y);
  }
  CHECK(forgek_softmax_fp32_unload(ctx) == FORGEK_SOFTMAX_FP32_OK ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN);
  CHECK(cuStreamDestroy(stream));
  CHECK(cuDevicePrimaryCtxRelease(dev));
  return 0;
}
)";

// Builds `dir`'s export with the driver above against the real libcuda and runs it on `sizes`;
// every size must be served and within the operator's tolerance.
void RunSoftmaxOnGpu(const OperatorSpec& op, const std::string& dir, const std::vector<std::pair<int64_t, int64_t>>& sizes) {
  const std::string driver = BuildGpuDriver(dir, kSoftmaxDriver, kStem);
  if (::testing::Test::HasFailure()) return;
  std::string input;
  for (const auto& [m, n] : sizes) input += std::to_string(m) + " " + std::to_string(n) + "\n";
  ProcessOptions opts;
  opts.timeout_s = 600;
  opts.stdin_data = input;
  ProcessRun run = RunProcess({driver}, opts);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  std::stringstream lines(run.out);
  for (const auto& [m, n] : sizes) {
    std::string line;
    ASSERT_TRUE(std::getline(lines, line)) << run.out;
    SCOPED_TRACE("M=" + std::to_string(m) + " N=" + std::to_string(n));
    std::stringstream fields(line);
    std::string ok;
    int64_t got_m = 0, got_n = 0;
    double max_abs = 0, rel_l2 = 0;
    fields >> ok >> got_m >> got_n;
    max_abs = ReadNumber(fields);
    rel_l2 = ReadNumber(fields);
    ASSERT_EQ(ok, "ok") << line;
    EXPECT_EQ(got_m, m);
    EXPECT_EQ(got_n, n);
    EXPECT_LE(max_abs, op.tolerance.max_abs) << line;
    EXPECT_LE(rel_l2, op.tolerance.rel_l2) << line;
  }
}

class GpuSealExportC : public SealExportCTest {
 protected:
  void SetUp() override {
    if (!HasGpu()) GTEST_SKIP() << "no GPU: " << RunForgek({"worker", "--probe"}).out;
    SealExportCTest::SetUp();
  }
};

// The fixture's seal (the seed), on every suite config and on two sizes outside the suite.
TEST_F(GpuSealExportC, TheSoftmaxSeedRunsAndMatchesACpuSoftmax) {
  SealRecord s = SealOf("g0000seed", SeedSource(), params_, Build(SeedSource(), params_));
  const std::string dir = Export(s);
  ASSERT_FALSE(dir.empty());
  std::vector<std::pair<int64_t, int64_t>> sizes;
  for (const ConfigSpec& c : op_.configs) sizes.push_back({c.values.at("M"), c.values.at("N")});
  sizes.push_back({333, 5000});
  sizes.push_back({1, 7});
  RunSoftmaxOnGpu(op_, dir, sizes);
}

// A dispatch over kernels that use clusters, dynamic shared memory beyond 48 KiB and `when`: each
// size runs the kernel the rule picks (a table row, else the fallback).
TEST_F(GpuSealExportC, ADispatchOfClusterAndSharedMemoryKernelsRunsEachSize) {
  const ParamAssignment cluster = {{"CLUSTER", 4}, {"BLOCK", 256}, {"VEC", 4}, {"MAX_ITEMS", 8}};
  const ParamAssignment block = {{"BLOCK", 512}, {"VEC", 2}, {"SMEM_CACHE", 1}};
  const ParamAssignment by_length = {{"SHORT_PATH", 1}, {"WARP_ROWS", 4}, {"WARP_ITEMS", 8}, {"WARPS", 4},
                                     {"STAGES", 3},     {"CTAS_PER_SM", 2}, {"EVICT_FIRST", 0}, {"CTA_ITEMS", 8},
                                     {"MIN_THREADS", 128}, {"LOAD", 0},   {"STORE", 1}};
  nlohmann::json kernels = nlohmann::json::array();
  const std::vector<std::tuple<std::string, ParamAssignment>> entries = {
      {"cluster_split_rows.cu", cluster}, {"row_per_block.cu", block}, {"by_row_length.cu", by_length}};
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& [file, params] = entries[i];
    const std::string cubin = Build(Family(file), params);
    PutCubin(cubin);
    kernels.push_back({{"candidate", PutCandidate("gd" + std::to_string(i), Family(file), params)},
                       {"params", params},
                       {"cubin_sha256", Sha256Hex(cubin)},
                       {"label", file}});
  }
  nlohmann::json dispatch = {{"kernels", kernels},
                             {"table",
                              {{{"config", "4096x32768"}, {"kernel", 0}, {"why", "test"}},
                               {{"config", "16384x4096"}, {"kernel", 1}, {"why", "test"}}}},
                             {"fallback", 2}};
  SealRecord s = NewSeal("g0000dispatch", kernels[2]["candidate"].get<std::string>());
  s.params_json = ParamsJson(by_length);
  s.cubin_sha256 = kernels[2]["cubin_sha256"].get<std::string>();
  s.metadata_json = nlohmann::json{{"dispatch", dispatch}}.dump();
  StoreSeal(s);
  const std::string dir = Export(s);
  ASSERT_FALSE(dir.empty());
  // Rows: the cluster kernel, the shared-memory kernel (16 KiB rows: 64 KiB of it); outside the
  // table the fallback's warp path (N <= 1024) and its cluster path (N up to 8 x 32768).
  RunSoftmaxOnGpu(op_, dir, {{4096, 32768}, {16384, 4096}, {65536, 1024}, {777, 300}, {64, 100000}});
}

// The C++ example against the fixture's seal: the suite size and the size outside it match the CPU
// within the operator's tolerance (the program checks and says "ok"), the size no kernel takes is
// reported with its status and the plan's message, and the program exits 0.
TEST_F(GpuSealExportC, TheCppExampleRunsTheSealAndReportsAnUnsupportedSize) {
  SealRecord s = SealOf("g0000example", SeedSource(), params_, Build(SeedSource(), params_));
  const std::string dir = Export(s);
  ASSERT_FALSE(dir.empty());
  const std::string program = BuildCppExample(dir);
  ProcessOptions opts;
  opts.timeout_s = 300;
  ProcessRun run = RunProcess({program}, opts);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  std::vector<std::string> lines;
  std::stringstream out(run.out);
  for (std::string line; std::getline(out, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u) << run.out;
  EXPECT_EQ(lines[0].rfind("forgek_softmax_fp32 on ", 0), 0u) << lines[0];
  const std::string served[] = {"16384 x 4096: kernel 0 (seal g0000example), max |error| ",
                                "333 x 5000: kernel 0 (seal g0000example), max |error| "};
  for (size_t i = 0; i < 2; ++i) {
    const std::string& line = lines[1 + i];
    SCOPED_TRACE(line);
    EXPECT_EQ(line.rfind(served[i], 0), 0u);
    EXPECT_NE(line.find(" us per call ("), std::string::npos) << "the time of the call";
    EXPECT_TRUE(line.size() > 4 && line.compare(line.size() - 4, 4, ": ok") == 0);
  }
  EXPECT_EQ(lines[3],
            "3000000000 x 4: UNSUPPORTED_SIZE launches[0].grid[0]: 'M' is 3000000000; must be in [1, 2147483647] "
            "(sizes M=3000000000, N=4)");
}

// A program that runs forgek_gemm_bf16 on random bf16 inputs for each "M N K" line of stdin and
// compares it with a product in double precision: "ok M N K max_abs rel_l2", or the status.
const char* kGemmDriver = R"(#include "forgek_gemm_bf16.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { printf("driver error %d at %s\n", (int)r_, #x); return 1; } } while (0)
static unsigned short to_bf16(float f) { unsigned int u; memcpy(&u, &f, 4); u += 0x7fff + ((u >> 16) & 1); return (unsigned short)(u >> 16); }
static float from_bf16(unsigned short h) { unsigned int u = (unsigned int)h << 16; float f; memcpy(&f, &u, 4); return f; }
int main(void) {
  CUdevice dev; CUcontext ctx; CUstream stream; long long m, n, k;
  unsigned long long seed = 88172645463325252ULL;
  CHECK(cuInit(0)); CHECK(cuDeviceGet(&dev, 0)); CHECK(cuDevicePrimaryCtxRetain(&ctx, dev)); CHECK(cuCtxSetCurrent(ctx));
  CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  while (scanf("%lld %lld %lld", &m, &n, &k) == 3) {
    unsigned short *a = malloc(m*k*2), *b = malloc(k*n*2), *c = malloc(m*n*2);
    CUdeviceptr da, db, dc; long long i, j, l; double err2 = 0, ref2 = 0, maxabs = 0;
    forgek_gemm_bf16_status s;
    for (i = 0; i < m*k; ++i) { seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17; a[i] = to_bf16((float)((double)(seed >> 11) / 9007199254740992.0 * 2 - 1)); }
    for (i = 0; i < k*n; ++i) { seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17; b[i] = to_bf16((float)((double)(seed >> 11) / 9007199254740992.0 * 2 - 1)); }
    CHECK(cuMemAlloc(&da, m*k*2)); CHECK(cuMemAlloc(&db, k*n*2)); CHECK(cuMemAlloc(&dc, m*n*2));
    CHECK(cuMemcpyHtoD(da, a, m*k*2)); CHECK(cuMemcpyHtoD(db, b, k*n*2)); CHECK(cuMemsetD16(dc, 0x7fc0, m*n)); CHECK(cuCtxSynchronize());
    s = forgek_gemm_bf16(stream, (const void*)(uintptr_t)da, (const void*)(uintptr_t)db, (void*)(uintptr_t)dc, m, n, k, NULL, 0);
    if (s != FORGEK_GEMM_BF16_OK) { printf("%s %s\n", forgek_gemm_bf16_status_name(s), forgek_gemm_bf16_last_error()); }
    else {
      CHECK(cuStreamSynchronize(stream)); CHECK(cuMemcpyDtoH(c, dc, m*n*2));
      for (i = 0; i < m; ++i) for (j = 0; j < n; ++j) { double acc = 0, d; for (l = 0; l < k; ++l) acc += (double)from_bf16(a[i*k+l]) * from_bf16(b[l*n+j]);
        d = fabs(from_bf16(c[i*n+j]) - acc); if (!(d <= maxabs)) maxabs = isnan(d) ? INFINITY : d; err2 += d*d; ref2 += acc*acc; }
      printf("ok %lld %lld %lld %.3g %.3g\n", m, n, k, maxabs, sqrt(err2/ref2));
    }
    cuMemFree(da); cuMemFree(db); cuMemFree(dc); free(a); free(b); free(c);
  }
  return 0;
}
)";

// gemm_bf16's warp-specialised TMA family: two tensor maps encoded per call, a cluster of 2, 130 KiB
// of dynamic shared memory; a size its constraints refuse returns the error code.
TEST_F(GpuSealExportC, AGemmWithTensorMapsRunsAndMatchesACpuGemm) {
  OperatorSpec gemm;
  Diagnostics diags;
  ASSERT_TRUE(LoadOperator(SourceDir() + "/operators/gemm_bf16", &gemm, &diags)) << FormatDiagnostics(diags);
  const std::string source = ReadFile(gemm.dir + "/families/wgmma_tma_ws.cu");
  const ParamAssignment params = {{"BM", 128}, {"BN", 128}, {"BK", 64}, {"STAGES", 4}, {"CLUSTER_M", 2}, {"GROUP_M", 8}};
  CandidateRecord c;
  c.hash = "cand-gpu-gemm";
  c.operator_name = gemm.name;
  c.source = source;
  c.params_json = ParamsJson(params);
  bool inserted = false;
  std::string err;
  ASSERT_TRUE(store_.PutCandidate(c, &inserted, &err)) << err;
  const std::string cubin = Build(source, params);
  PutCubin(cubin);
  SealRecord s = NewSeal("g0000gemm", c.hash);
  s.operator_name = gemm.name;
  s.params_json = c.params_json;
  s.cubin_sha256 = Sha256Hex(cubin);
  StoreSeal(s);
  const std::string dir = tmp_.file("gemm");
  ASSERT_TRUE(ExportSealC(store_, s, gemm, *compiler_, dir, false, &err)) << err;
  const std::string driver = BuildGpuDriver(dir, kGemmDriver, "forgek_gemm_bf16");
  ASSERT_FALSE(HasFailure());
  std::string out;
  ASSERT_TRUE(RunTool({driver}, &out, "256 256 256\n200 384 320\n512 384 128\n100 256 256\n")) << out;
  std::stringstream lines(out);
  for (const char* size : {"256 256 256", "200 384 320", "512 384 128"}) {
    std::string line;
    ASSERT_TRUE(std::getline(lines, line)) << out;
    SCOPED_TRACE(size);
    std::stringstream fields(line);
    std::string ok;
    int64_t m = 0, n = 0, k = 0;
    double max_abs = 0, rel_l2 = 0;
    fields >> ok >> m >> n >> k;
    max_abs = ReadNumber(fields);
    rel_l2 = ReadNumber(fields);
    ASSERT_EQ(ok, "ok") << line;
    EXPECT_EQ(std::to_string(m) + " " + std::to_string(n) + " " + std::to_string(k), size);
    EXPECT_LE(max_abs, gemm.tolerance.max_abs) << line;
    EXPECT_LE(rel_l2, gemm.tolerance.rel_l2) << line;
  }
  std::string refused;
  ASSERT_TRUE(std::getline(lines, refused)) << out;
  EXPECT_EQ(refused,
            "UNSUPPORTED_SIZE constraint 'ceil_div(M, BM) % CLUSTER_M == 0' does not hold (sizes M=100, N=256, K=256)");
}

// A program that, for each "M N K gx gy gz bx by bz smem" line of stdin, runs forgek_gemm_bf16 on
// random bf16 inputs and the operator's golden kernel (argv[1]: its cubin, argv[2]: its name; the
// rest of the line is its launch) on the same inputs, and compares them as the worker does:
// "ok M N K kernel max_abs rel_l2 C_NaNs golden_NaNs" (the kernel the plan picked; elements left NaN,
// i.e. unwritten, in each output), or the status and its message.
const char* kGemmGoldenDriver = R"(#include "forgek_gemm_bf16.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { printf("driver error %d at %s\n", (int)r_, #x); return 1; } } while (0)
static unsigned short to_bf16(float f) { unsigned int u; memcpy(&u, &f, 4); u += 0x7fff + ((u >> 16) & 1); return (unsigned short)(u >> 16); }
static float from_bf16(unsigned short h) { unsigned int u = (unsigned int)h << 16; float f; memcpy(&f, &u, 4); return f; }
static unsigned long long seed = 88172645463325252ULL;
static float uniform(void) { seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17; return (float)((double)(seed >> 11) / 9007199254740992.0 * 2 - 1); }
int main(int argc, char** argv) {
  CUdevice dev; CUcontext ctx; CUstream stream; CUmodule golden_module; CUfunction golden;
  long long m, n, k; unsigned gx, gy, gz, bx, by, bz, smem;
  if (argc != 3) { printf("usage: driver GOLDEN_CUBIN GOLDEN_KERNEL\n"); return 2; }
  CHECK(cuInit(0)); CHECK(cuDeviceGet(&dev, 0)); CHECK(cuDevicePrimaryCtxRetain(&ctx, dev)); CHECK(cuCtxSetCurrent(ctx));
  CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CHECK(cuModuleLoad(&golden_module, argv[1])); CHECK(cuModuleGetFunction(&golden, golden_module, argv[2]));
  while (scanf("%lld %lld %lld %u %u %u %u %u %u %u", &m, &n, &k, &gx, &gy, &gz, &bx, &by, &bz, &smem) == 10) {
    size_t i, count = (size_t)(m*n);
    unsigned short *a = malloc(m*k*2), *b = malloc(k*n*2), *c = malloc(count*2);
    float* g = malloc(count*4);
    CUdeviceptr da, db, dc, dg; double err2 = 0, ref2 = 0, maxabs = 0;
    int im = (int)m, in = (int)n, ik = (int)k;
    void* golden_args[6];
    forgek_gemm_bf16_launch_plan plan;
    forgek_gemm_bf16_status s;
    for (i = 0; i < (size_t)(m*k); ++i) a[i] = to_bf16(uniform());
    for (i = 0; i < (size_t)(k*n); ++i) b[i] = to_bf16(uniform());
    CHECK(cuMemAlloc(&da, m*k*2)); CHECK(cuMemAlloc(&db, k*n*2)); CHECK(cuMemAlloc(&dc, count*2)); CHECK(cuMemAlloc(&dg, count*4));
    CHECK(cuMemcpyHtoD(da, a, m*k*2)); CHECK(cuMemcpyHtoD(db, b, k*n*2));
    CHECK(cuMemsetD16(dc, 0x7fc0, count)); CHECK(cuMemsetD32(dg, 0x7fc00000u, count));  /* NaN: what is not written shows */
    CHECK(cuCtxSynchronize());  /* the memsets run on the legacy stream, which a non-blocking stream does not wait for */
    golden_args[0] = &da; golden_args[1] = &db; golden_args[2] = &dg; golden_args[3] = &im; golden_args[4] = &in; golden_args[5] = &ik;
    CHECK(cuLaunchKernel(golden, gx, gy, gz, bx, by, bz, smem, stream, golden_args, NULL));
    s = forgek_gemm_bf16_plan(m, n, k, &plan);
    if (s == FORGEK_GEMM_BF16_OK)
      s = forgek_gemm_bf16(stream, (const void*)(uintptr_t)da, (const void*)(uintptr_t)db, (void*)(uintptr_t)dc, m, n, k, NULL, 0);
    if (s != FORGEK_GEMM_BF16_OK) { printf("%s %s %s\n", forgek_gemm_bf16_status_name(s), plan.message, forgek_gemm_bf16_last_error()); }
    else {
      CHECK(cuStreamSynchronize(stream)); CHECK(cuMemcpyDtoH(c, dc, count*2)); CHECK(cuMemcpyDtoH(g, dg, count*4));
      size_t c_nan = 0, g_nan = 0;
      for (i = 0; i < count; ++i) {
        double d = fabs((double)from_bf16(c[i]) - g[i]);
        c_nan += isnan(from_bf16(c[i])); g_nan += isnan(g[i]);
        if (!(d <= maxabs)) maxabs = isnan(d) ? INFINITY : d;
        err2 += d*d; ref2 += (double)g[i]*g[i];
      }
      printf("ok %lld %lld %lld %d %.3g %.3g %zu %zu\n", m, n, k, plan.kernel, maxabs, isnan(ref2) ? INFINITY : sqrt(err2/ref2), c_nan, g_nan);
    }
    fflush(stdout);
    cuMemFree(da); cuMemFree(db); cuMemFree(dc); cuMemFree(dg); free(a); free(b); free(c); free(g);
  }
  return 0;
}
)";

// A gemm_bf16 dispatch as a run seals one (a table of kernels per suite config, a fallback for every
// other size), exported as C and checked against the operator's own golden kernel on the GPU, then
// called from examples/cpp/gemm_main.cc: every suite config and two sizes outside the suite, one
// large and one decode-sized. The table gives
// 4096^3 to the warp-specialised TMA family (cluster of 2) and the rest to the persistent family,
// whose skinny path (split-K across a cluster) takes M <= 64; the fallback is the persistent family.
TEST_F(GpuSealExportC, AGemmDispatchMatchesTheGoldenOnEverySuiteConfigAndTwoSizesOutside) {
  OperatorSpec gemm;
  Diagnostics diags;
  const std::string dir = tmp_.file("gemm-dispatch");
  ExportGemmDispatch(dir, &gemm);
  if (HasFatalFailure()) return;

  // The golden, compiled as the worker compiles it, and its launch for each size from its manifest.
  Candidate golden;
  ASSERT_TRUE(LoadCandidateFile(gemm.dir + "/" + gemm.golden, &golden, &diags)) << FormatDiagnostics(diags);
  const ParamAssignment golden_params = FirstValues(golden.manifest);
  WriteFile(dir + "/golden.cubin", Build(golden.source, golden_params));
  struct Size { Bindings values; int kernel; };
  std::vector<Size> sizes;
  for (const ConfigSpec& config : gemm.configs) sizes.push_back({config.values, config.name == "4096^3" ? 1 : 0});
  sizes.push_back({{{"M", 3000}, {"N", 4096}, {"K", 4096}}, 0});  // outside: the fallback's large path
  sizes.push_back({{{"M", 32}, {"N", 4096}, {"K", 2048}}, 0});    // outside: its skinny (split-K) path
  std::string input;
  std::string kernel_name;
  for (const Size& size : sizes) {
    ResolvedCandidate launch;
    ASSERT_TRUE(ResolveCandidate(golden.manifest, gemm, golden_params, size.values, 132, &launch, &diags)) << FormatDiagnostics(diags);
    ASSERT_EQ(launch.launches.size(), 1u);
    const ResolvedLaunch& l = launch.launches[0];
    // The driver passes (A, B, C, M, N, K), the golden's arguments today; a change shows here.
    ASSERT_EQ(l.args.size(), 6u);
    const char* names[] = {"A", "B", "C"};
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(l.args[i].kind, ResolvedArg::Kind::tensor);
      EXPECT_EQ(l.args[i].name, names[i]);
    }
    for (int i = 3; i < 6; ++i) ASSERT_EQ(l.args[i].kind, ResolvedArg::Kind::i32) << l.args[i].name;
    EXPECT_EQ(l.args[3].i, size.values.at("M"));
    EXPECT_EQ(l.args[4].i, size.values.at("N"));
    EXPECT_EQ(l.args[5].i, size.values.at("K"));
    kernel_name = l.kernel;
    input += std::to_string(size.values.at("M")) + " " + std::to_string(size.values.at("N")) + " " +
             std::to_string(size.values.at("K"));
    for (int64_t v : {l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2], l.smem})
      input += " " + std::to_string(v);
    input += "\n";
  }
  const std::string driver = BuildGpuDriver(dir, kGemmGoldenDriver, "forgek_gemm_bf16");
  ASSERT_FALSE(HasFailure());
  std::string out;
  ASSERT_TRUE(RunTool({driver, dir + "/golden.cubin", kernel_name}, &out, input)) << out;
  std::stringstream lines(out);
  for (const Size& size : sizes) {
    const std::string mnk = std::to_string(size.values.at("M")) + " " + std::to_string(size.values.at("N")) + " " +
                            std::to_string(size.values.at("K"));
    SCOPED_TRACE(mnk);
    std::string line;
    ASSERT_TRUE(std::getline(lines, line)) << out;
    std::stringstream fields(line);
    std::string ok;
    int64_t m = 0, n = 0, k = 0;
    int kernel = -1;
    double max_abs = 0, rel_l2 = 0;
    fields >> ok >> m >> n >> k >> kernel;
    max_abs = ReadNumber(fields);
    rel_l2 = ReadNumber(fields);
    const double c_nan = ReadNumber(fields), golden_nan = ReadNumber(fields);
    EXPECT_EQ(c_nan, 0) << "elements of C the library left unwritten: " << line;
    EXPECT_EQ(golden_nan, 0) << "elements the golden left unwritten: " << line;
    ASSERT_EQ(ok, "ok") << line;
    EXPECT_EQ(std::to_string(m) + " " + std::to_string(n) + " " + std::to_string(k), mnk);
    EXPECT_EQ(kernel, size.kernel) << "the dispatch rule picked another kernel: " << line;
    EXPECT_LE(max_abs, gemm.tolerance.max_abs) << line;
    EXPECT_LE(rel_l2, gemm.tolerance.rel_l2) << line;
    std::printf("  %s\n", line.c_str());
  }

  // The same export called from examples/cpp/gemm_main.cc, as docs/using-seals.md builds it: every
  // suite config and the two sizes outside it checked by the program (every element written, a
  // sample against the CPU), and a size no kernel takes reported with its status; exit 0.
  const std::string program = BuildCppExample(dir, "gemm_main", "forgek_gemm_bf16");
  std::vector<std::string> argv = {program};
  for (const Size& size : sizes)
    argv.push_back(std::to_string(size.values.at("M")) + "x" + std::to_string(size.values.at("N")) + "x" +
                   std::to_string(size.values.at("K")));
  argv.push_back("100x100x64");
  std::string example;
  ASSERT_TRUE(RunTool(argv, &example)) << example;
  std::stringstream example_lines(example);
  std::string line;
  ASSERT_TRUE(std::getline(example_lines, line));
  EXPECT_EQ(line.rfind("forgek_gemm_bf16 on ", 0), 0u) << line;
  for (const Size& size : sizes) {
    ASSERT_TRUE(std::getline(example_lines, line)) << example;
    SCOPED_TRACE(line);
    const std::string head = std::to_string(size.values.at("M")) + " x " + std::to_string(size.values.at("N")) +
                             " x " + std::to_string(size.values.at("K")) + ": kernel " + std::to_string(size.kernel) +
                             " (";
    EXPECT_EQ(line.rfind(head, 0), 0u);
    EXPECT_NE(line.find(", 0 unwritten, "), std::string::npos);
    EXPECT_TRUE(line.size() > 4 && line.compare(line.size() - 4, 4, ": ok") == 0);
    std::printf("  %s\n", line.c_str());
  }
  ASSERT_TRUE(std::getline(example_lines, line)) << example;
  EXPECT_EQ(line.rfind("100 x 100 x 64: UNSUPPORTED_SIZE ", 0), 0u) << line;
}

}  // namespace
}  // namespace forgek
