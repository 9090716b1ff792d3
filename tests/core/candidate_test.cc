// Tests of candidate manifests: parsing with located errors, and validation against an operator.
#include "forgek/core/candidate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "forgek/core/operator_spec.h"
#include "test_util.h"

namespace forgek {
namespace {

// The documented example: a family with lets, constraints, a workspace and tensor maps.
const char* kGemmFamily = R"cu(/* forgek
{
  "name": "gemm_wgmma_ws",
  "mechanisms": ["tma", "wgmma", "warp_specialization"],
  "params": {"BM": [128, 256], "BN": [128, 256], "BK": 64, "STAGES": [3, 4, 5]},
  "let": {"stage_bytes": "(BM+BN)*BK*2", "smem_bytes": "STAGES*stage_bytes + 1024"},
  "constraints": ["smem_bytes <= 232448", "BM*BN <= 128*256"],
  "workspaces": [{"name": "counters", "bytes": "4*ceil_div(M,BM)*ceil_div(N,BN)", "zero": true}],
  "tensor_maps": [
    {"name": "tmA", "tensor": "A", "box": ["BM", "BK"], "swizzle": "128B"},
    {"name": "tmB", "tensor": "B", "box": ["BK", "BN"], "swizzle": "128B", "l2_promotion": "256B"}
  ],
  "launches": [
    {"kernel": "gemm_main",
     "grid": ["ceil_div(N, BN)", "ceil_div(M, BM)"], "block": [384], "cluster": [1, 2, 1],
     "smem": "smem_bytes",
     "args": ["tmA", "tmB", "C", "counters", "M", "N", "i64:M*N", "f32:0.5"]}
  ]
}
*/
#include <cuda.h>
extern "C" __global__ void __launch_bounds__(384)
gemm_main(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
          void* C, unsigned* counters, int M, int N, long long MN, float half) {}
)cu";

// A gemm-shaped operator built in memory (validation needs no files).
OperatorSpec GemmOperator() {
  OperatorSpec op;
  op.name = "gemm_bf16";
  op.params = {"M", "N", "K"};
  op.configs = {{"square", {{"M", 4096}, {"N", 4096}, {"K", 4096}}}, {"skinny", {{"M", 64}, {"N", 8192}, {"K", 8192}}}};
  op.tensors = {{"A", TensorRole::input, DType::bf16, {"M", "K"}, {}},
                {"B", TensorRole::input, DType::bf16, {"K", "N"}, {}},
                {"C", TensorRole::output, DType::bf16, {"M", "N"}, {}}};
  op.scalars = {{"alpha", DType::f32, 2.0}, {"count", DType::i64, 7}};
  return op;
}

struct Parsed {
  bool ok = false;
  Candidate c;
  Diagnostics diags;
  const Diagnostic* Find(const std::string& field) const {
    for (const Diagnostic& d : diags)
      if (d.field == field) return &d;
    return nullptr;
  }
  std::string Report() const { return FormatDiagnostics(diags); }
};

Parsed Parse(const std::string& source) {
  Parsed p;
  p.ok = ParseCandidate("cand.cu", source, &p.c, &p.diags);
  return p;
}

// A one-launch candidate around `manifest_body` (the JSON members after "launches").
std::string WithLaunch(const std::string& launch, const std::string& extra = "") {
  return "/* forgek\n{" + extra + "\"launches\": [" + launch + "]}\n*/\nextern \"C\" __global__ void k(int n) {}\n";
}

// The 1-based line and column of the first occurrence of `needle` in `text`, plus `shift` bytes.
std::pair<int, int> LineColumnOf(const std::string& text, const std::string& needle, size_t shift = 0) {
  size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  at += shift;
  int line = 1, column = 1;
  for (size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') ++line, column = 1;
    else ++column;
  }
  return {line, column};
}

void ExpectAt(const Parsed& p, const std::string& field, const std::string& says, std::pair<int, int> where) {
  EXPECT_FALSE(p.ok);
  const Diagnostic* d = p.Find(field);
  ASSERT_NE(d, nullptr) << "no diagnostic on '" << field << "'; got:\n" << p.Report();
  EXPECT_NE(d->message.find(says), std::string::npos) << d->str();
  EXPECT_EQ(d->file, "cand.cu");
  EXPECT_EQ(d->line, where.first) << d->str();
  EXPECT_EQ(d->column, where.second) << d->str();
}

// Some editors start a file with a UTF-8 byte order mark; NVRTC stops at it ("unrecognized
// token"). It is dropped when the candidate is parsed, so what is kept and compiled is the text.
TEST(Candidate, AByteOrderMarkIsDropped) {
  Parsed p = Parse(std::string("\xEF\xBB\xBF") + kGemmFamily);
  ASSERT_TRUE(p.ok) << p.Report();
  EXPECT_EQ(p.c.source, kGemmFamily);
  EXPECT_EQ(p.c.manifest.name, "gemm_wgmma_ws");
}

TEST(Candidate, ParsesTheDocumentedExample) {
  Parsed p = Parse(kGemmFamily);
  ASSERT_TRUE(p.ok) << p.Report();
  const CandidateManifest& m = p.c.manifest;
  EXPECT_EQ(p.c.path, "cand.cu");
  EXPECT_EQ(p.c.source, kGemmFamily);
  EXPECT_EQ(m.name, "gemm_wgmma_ws");
  EXPECT_EQ(m.mechanisms.size(), 3u);
  ASSERT_EQ(m.params.size(), 4u);  // in file order, not sorted
  EXPECT_EQ(m.params[0].name, "BM");
  EXPECT_EQ(m.params[2].name, "BK");
  EXPECT_EQ(m.params[2].values, (std::vector<int64_t>{64}));
  EXPECT_EQ(m.params[3].values, (std::vector<int64_t>{3, 4, 5}));
  ASSERT_EQ(m.lets.size(), 2u);
  EXPECT_EQ(m.lets[0].first, "stage_bytes");
  EXPECT_EQ(m.lets[1].second, "STAGES*stage_bytes + 1024");
  EXPECT_EQ(m.constraints.size(), 2u);
  ASSERT_EQ(m.workspaces.size(), 1u);
  EXPECT_TRUE(m.workspaces[0].zero);
  ASSERT_EQ(m.tensor_maps.size(), 2u);
  EXPECT_EQ(m.tensor_maps[1].l2_promotion, "256B");
  EXPECT_EQ(m.tensor_maps[0].oob_fill, "none");
  ASSERT_EQ(m.launches.size(), 1u);
  const LaunchSpec& l = m.launches[0];
  EXPECT_EQ(l.kernel, "gemm_main");
  EXPECT_EQ(l.grid, (std::vector<std::string>{"ceil_div(N, BN)", "ceil_div(M, BM)"}));
  EXPECT_EQ(l.block, (std::vector<std::string>{"384"}));  // integers become expressions
  EXPECT_EQ(l.cluster, (std::vector<std::string>{"1", "2", "1"}));
  EXPECT_EQ(l.smem, "smem_bytes");
  EXPECT_EQ(l.args.size(), 8u);
  EXPECT_EQ(l.line, LineColumnOf(kGemmFamily, "{\"kernel\"").first);
  EXPECT_TRUE(m.IsFamily());
}

TEST(Candidate, DefaultsAndFixedParams) {
  Parsed p = Parse(WithLaunch(R"j({"kernel": "k", "grid": [1], "block": [32], "args": ["N"]})j", R"j("params": {"X": 3},)j"));
  ASSERT_TRUE(p.ok) << p.Report();
  EXPECT_EQ(p.c.manifest.name, "cand");  // the file's stem
  EXPECT_EQ(p.c.manifest.launches[0].smem, "0");
  EXPECT_TRUE(p.c.manifest.launches[0].cluster.empty());
  EXPECT_FALSE(p.c.manifest.IsFamily());
}

TEST(Candidate, ParamDefinesInParamOrder) {
  EXPECT_EQ(ParamDefines({{"BN", 128}, {"BM", 64}, {"NEG", -1}}),
            (std::vector<std::string>{"-DBM=64", "-DBN=128", "-DNEG=-1"}));
  EXPECT_TRUE(ParamDefines({}).empty());
}

TEST(Candidate, MissingManifest) {
  Parsed p = Parse("extern \"C\" __global__ void k() {}\n/* not forgek */\n");
  EXPECT_FALSE(p.ok);
  ASSERT_EQ(p.diags.size(), 1u);
  EXPECT_NE(p.diags[0].message.find("no manifest"), std::string::npos);
  EXPECT_EQ(p.diags[0].file, "cand.cu");
  // "forgekish" is not the keyword.
  EXPECT_FALSE(Parse("/* forgekish {\"launches\": []} */").ok);
}

TEST(Candidate, UnterminatedManifestComment) {
  std::string src = "// header\n  /* forgek\n{\"launches\": []}\n";
  Parsed p = Parse(src);
  ASSERT_EQ(p.diags.size(), 1u);
  EXPECT_NE(p.diags[0].message.find("never closed"), std::string::npos);
  EXPECT_EQ(p.diags[0].line, 2);
  EXPECT_EQ(p.diags[0].column, 3);
}

TEST(Candidate, JsonErrorsAreLocatedInTheCuFile) {
  std::string src = "// a leading comment line\n/* forgek\n{\n  \"launches\": [\n    {\"kernel\": \"k\",, \"grid\": [1]}\n  ]\n}\n*/\n";
  Parsed p = Parse(src);
  EXPECT_FALSE(p.ok);
  ASSERT_EQ(p.diags.size(), 1u);
  auto [line, column] = LineColumnOf(src, ",,", 1);
  EXPECT_EQ(p.diags[0].line, line);
  EXPECT_EQ(p.diags[0].column, column);
  EXPECT_EQ(line, 5);
  EXPECT_NE(p.diags[0].message.find("invalid JSON"), std::string::npos) << p.diags[0].str();
}

TEST(Candidate, ManifestMustBeAnObject) {
  Parsed p = Parse("/* forgek [1, 2] */");
  ExpectAt(p, "", "must be a JSON object", {1, 11});
}

TEST(Candidate, FieldErrorsCarryPathLineAndColumn) {
  struct Case {
    const char* what;
    std::string source;
    const char* field;
    const char* says;
    const char* at;  // text whose first occurrence the error points at
    size_t shift;
  };
  const std::string ok_launch = R"j({"kernel": "k", "grid": [1], "block": [32], "args": []})j";
  const std::vector<Case> cases = {
      {"unknown top-level field", WithLaunch(ok_launch, R"j("constraint": ["1"],)j"), "constraint",
       "did you mean 'constraints'", "\"constraint\"", 0},
      {"launches missing", "/* forgek\n{\"name\": \"x\"}\n*/", "launches", "required field is missing", "{", 0},
      {"launches empty", "/* forgek\n{\"launches\": []}\n*/", "launches", "at least one launch", "[]", 0},
      {"four grid dims", WithLaunch(R"j({"kernel": "k", "grid": [1, 1, 1, 1], "block": [32], "args": []})j"),
       "launches[0].grid", "1 to 3", "[1, 1, 1, 1]", 0},
      {"four cluster dims", WithLaunch(R"j({"kernel": "k", "grid": [1], "block": [32], "cluster": [1,1,1,1], "args": []})j"),
       "launches[0].cluster", "1 to 3", "[1,1,1,1]", 0},
      {"block missing", WithLaunch(R"j({"kernel": "k", "grid": [1], "args": []})j"), "launches[0].block",
       "required", "{\"kernel\"", 0},
      {"grid wrong type", WithLaunch(R"j({"kernel": "k", "grid": "N", "block": [32], "args": []})j"),
       "launches[0].grid", "expected an array of expressions, got a string", "\"N\"", 0},
      {"bad expression", WithLaunch(R"j({"kernel": "k", "grid": ["ceil_div(N, )"], "block": [32], "args": []})j"),
       "launches[0].grid[0]", "expected a value before ')'", "ceil_div(N, )", 12},
      {"float as expression", WithLaunch(R"j({"kernel": "k", "grid": [1.5], "block": [32], "args": []})j"),
       "launches[0].grid[0]", "expected an expression", "1.5", 0},
      {"args not strings", WithLaunch(R"j({"kernel": "k", "grid": [1], "block": [32], "args": ["x", 3]})j"),
       "launches[0].args[1]", "expected a string", "3]", 0},
      {"kernel not an identifier", WithLaunch(R"j({"kernel": "my kernel", "grid": [1], "block": [32], "args": []})j"),
       "launches[0].kernel", "not a C identifier", "\"my kernel\"", 0},
      {"unknown launch field", WithLaunch(R"j({"kernel": "k", "grid": [1], "block": [32], "arg": []})j"),
       "launches[0].arg", "did you mean 'args'", "\"arg\"", 0},
      {"empty domain", WithLaunch(ok_launch, R"j("params": {"BM": []},)j"), "params.BM", "at least one value", "[]", 0},
      {"non-integer domain", WithLaunch(ok_launch, R"j("params": {"BM": [64, "128"]},)j"), "params.BM[1]",
       "expected an integer, got a string", "\"128\"", 0},
      {"float param", WithLaunch(ok_launch, R"j("params": {"BM": 1.5},)j"), "params.BM", "expected an integer",
       "1.5", 0},
      {"repeated domain value", WithLaunch(ok_launch, R"j("params": {"BM": [64, 64]},)j"), "params.BM[1]",
       "appears twice", "64]", 0},
      {"param not an identifier", WithLaunch(ok_launch, R"j("params": {"2BM": 1},)j"), "params.2BM",
       "not an identifier", "\"2BM\"", 0},
      {"param and let share a name", WithLaunch(ok_launch, R"j("params": {"T": 1}, "let": {"T": "2"},)j"), "let.T",
       "already the name of a param", "\"T\": \"2\"", 0},
      {"workspace and tensor map share a name",
       WithLaunch(ok_launch, R"j("workspaces": [{"name": "w", "bytes": 4}], "tensor_maps": [{"name": "w", "tensor": "A", "box": [1]}],)j"),
       "tensor_maps[0].name", "already the name of a workspace", "\"w\", \"tensor\"", 0},
      {"bad let expression", WithLaunch(ok_launch, R"j("let": {"x": "1 +* 2"},)j"), "let.x", "unexpected '*'",
       "\"1 +* 2\"", 4},
      {"constraint not expression", WithLaunch(ok_launch, R"j("constraints": [true],)j"), "constraints[0]",
       "expected an expression", "true", 0},
      {"bad swizzle", WithLaunch(ok_launch, R"j("tensor_maps": [{"name": "t", "tensor": "A", "box": [1], "swizzle": "256B"}],)j"),
       "tensor_maps[0].swizzle", "one of none, 32B, 64B, 128B", "\"256B\"", 0},
      {"bad interleave", WithLaunch(ok_launch, R"j("tensor_maps": [{"name": "t", "tensor": "A", "box": [1], "interleave": "16B"}],)j"),
       "tensor_maps[0].interleave", "one of none", "\"16B\"", 0},
      {"box and view disagree",
       WithLaunch(ok_launch, R"j("tensor_maps": [{"name": "t", "tensor": "A", "box": [1, 2], "shape": ["M"]}],)j"),
       "tensor_maps[0].box", "2 dimensions but shape has 1", "[1, 2]", 0},
      {"workspace without bytes", WithLaunch(ok_launch, R"j("workspaces": [{"name": "w"}],)j"), "workspaces[0].bytes",
       "required", "{\"name\": \"w\"}", 0},
      {"zero not a bool", WithLaunch(ok_launch, R"j("workspaces": [{"name": "w", "bytes": 4, "zero": 1}],)j"),
       "workspaces[0].zero", "true or false", "1}", 0},
      {"mechanisms not strings", WithLaunch(ok_launch, R"j("mechanisms": "tma",)j"), "mechanisms",
       "expected an array of strings", "\"tma\"", 0},
      {"duplicate key", WithLaunch(ok_launch, R"j("name": "a", "name": "b",)j"), "name", "appears twice",
       "\"name\": \"b\"", 0},
      {"controls not an object", WithLaunch(ok_launch, R"j("params": {"S": [2, 4]}, "controls": ["S"],)j"), "controls",
       "expected an object", "[\"S\"]", 0},
      {"controls names no param", WithLaunch(ok_launch, R"j("params": {"S": [2, 4]}, "controls": {"pipe": ["STAGES"]},)j"),
       "controls.pipe[0]", "'STAGES' is not a param of this manifest", "\"STAGES\"", 0},
      {"controls list empty", WithLaunch(ok_launch, R"j("params": {"S": [2, 4]}, "controls": {"pipe": []},)j"),
       "controls.pipe", "non-empty array of param names", "[]", 0},
      {"controls param not a string", WithLaunch(ok_launch, R"j("params": {"S": [2, 4]}, "controls": {"pipe": [7]},)j"),
       "controls.pipe[0]", "expected a param name, got an integer", "7]", 0},
      {"param controls two mechanisms",
       WithLaunch(ok_launch, R"j("params": {"S": [2, 4]}, "controls": {"pipe": ["S"], "tile": ["S"]},)j"),
       "controls.tile[0]", "already controls 'pipe'", "\"S\"]}", 0},
      {"controls key not an id", WithLaunch(ok_launch, R"j("params": {"S": [2, 4]}, "controls": {"my pipe": ["S"]},)j"),
       "controls.my pipe", "not a mechanism id", "\"my pipe\"", 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    ExpectAt(Parse(c.source), c.field, c.says, LineColumnOf(c.source, c.at, c.shift));
  }
}

TEST(Candidate, ControlsMapMechanismsToParamsInManifestOrder) {
  const std::string ok_launch = R"j({"kernel": "k", "grid": [1], "block": [32], "args": []})j";
  Parsed p = Parse(WithLaunch(ok_launch, R"j("mechanisms": ["mbarrier_pipeline"],
    "params": {"BM": [64, 128], "BN": [128, 256], "STAGES": [2, 4], "GROUP_M": [8]},
    "controls": {"tile": ["BN", "BM"], "mbarrier_pipeline": ["STAGES"]},)j"));
  ASSERT_TRUE(p.ok) << p.Report();
  ASSERT_EQ(p.c.manifest.controls.size(), 2u);
  EXPECT_EQ(p.c.manifest.controls[0].mechanism, "tile");
  EXPECT_EQ(p.c.manifest.controls[0].params, (std::vector<std::string>{"BM", "BN"}));
  ASSERT_NE(p.c.manifest.ControlOf("STAGES"), nullptr);
  EXPECT_EQ(p.c.manifest.ControlOf("STAGES")->mechanism, "mbarrier_pipeline");
  EXPECT_EQ(p.c.manifest.ControlOf("GROUP_M"), nullptr);
}

// Every family file under operators/*/families/ is listed by its operator.json (a file that is not
// is never searched) and controls every param that has a domain, so that any two of its instances
// differing in one param isolate one mechanism. (That a search can draw an instance of each:
// tests/agent/shipped_families_test.cc.)
TEST(Candidate, ShippedFamiliesDeclareValidControls) {
  namespace fs = std::filesystem;
  int families = 0;
  for (const fs::directory_entry& op_dir : fs::directory_iterator(SourceDir() + "/operators")) {
    if (!fs::is_directory(op_dir.path() / "families")) continue;
    OperatorSpec op;
    Diagnostics op_diags;
    ASSERT_TRUE(LoadOperator(op_dir.path().string(), &op, &op_diags)) << FormatDiagnostics(op_diags);
    for (const fs::directory_entry& f : fs::directory_iterator(op_dir.path() / "families")) {
      if (f.path().extension() != ".cu") continue;
      const std::string rel = "families/" + f.path().filename().string();
      const std::string where = op.name + "/" + rel;
      EXPECT_NE(std::find(op.families.begin(), op.families.end(), rel), op.families.end())
          << where << " is not listed in " << op.name << "/operator.json \"families\": no run would search it";
      Candidate c;
      Diagnostics diags;
      ASSERT_TRUE(LoadCandidateFile(f.path().string(), &c, &diags)) << where << FormatDiagnostics(diags);
      EXPECT_FALSE(c.manifest.controls.empty()) << where;
      for (const ParamSpec& ps : c.manifest.params)
        if (ps.values.size() > 1) {
          EXPECT_NE(c.manifest.ControlOf(ps.name), nullptr) << where << ": " << ps.name;
        }
      ++families;
    }
  }
  EXPECT_GE(families, 9) << "the shipped families were not found under " << SourceDir() << "/operators";
}

TEST(Candidate, ReportsEveryProblemAtOnce) {
  Parsed p = Parse(WithLaunch(R"j({"kernel": 1, "grid": [], "block": ["("], "args": "x"})j", R"j("params": {"A": []}, "lett": {},)j"));
  EXPECT_FALSE(p.ok);
  for (const char* f : {"params.A", "lett", "launches[0].kernel", "launches[0].grid", "launches[0].block[0]",
                        "launches[0].args"})
    EXPECT_NE(p.Find(f), nullptr) << f << " not reported:\n" << p.Report();
}

TEST(Candidate, LoadsFilesAndReportsMissingOnes) {
  TempDir tmp;
  WriteFile(tmp.file("seed.cu"), kGemmFamily);
  Candidate c;
  Diagnostics diags;
  ASSERT_TRUE(LoadCandidateFile(tmp.file("seed.cu"), &c, &diags)) << FormatDiagnostics(diags);
  EXPECT_EQ(c.path, tmp.file("seed.cu"));
  EXPECT_FALSE(LoadCandidateFile(tmp.file("nope.cu"), &c, &diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].file, tmp.file("nope.cu"));
}

// --- validation against an operator ---

Diagnostics Validate(const std::string& source, bool expect_ok) {
  Parsed p = Parse(source);
  EXPECT_TRUE(p.ok) << p.Report();
  Diagnostics diags;
  EXPECT_EQ(ValidateCandidate(p.c, GemmOperator(), &diags), expect_ok) << FormatDiagnostics(diags);
  return diags;
}

const Diagnostic* FindField(const Diagnostics& diags, const std::string& field) {
  for (const Diagnostic& d : diags)
    if (d.field == field) return &d;
  return nullptr;
}

TEST(CandidateValidate, TheDocumentedExampleIsValid) { Validate(kGemmFamily, true); }

TEST(CandidateValidate, NamesMustBeInScope) {
  struct Case {
    const char* what;
    std::string source;
    const char* field;
    const char* says;
    const char* at;
    size_t shift;
  };
  auto launch = [](const std::string& grid, const std::string& args = "[]") {
    return std::string(R"j({"kernel": "k", "grid": [")j") + grid + R"j("], "block": [32], "args": )j" + args + "}";
  };
  const std::vector<Case> cases = {
      {"unknown name in grid", WithLaunch(launch("ceil_div(M, BX)")), "launches[0].grid[0]", "unknown name 'BX'",
       "BX", 0},
      {"unknown name in when",
       WithLaunch(R"j({"kernel": "k", "grid": [1], "block": [32], "when": "N < QQ", "args": []})j"),
       "launches[0].when", "unknown name 'QQ'", "QQ", 0},
      {"let uses a later let", WithLaunch(launch("1"), R"j("let": {"a": "b + 1", "b": "2"},)j"), "let.a",
       "unknown name 'b'", "b + 1", 0},
      {"constraint names a tensor", WithLaunch(launch("1"), R"j("constraints": ["A > 0"],)j"), "constraints[0]",
       "unknown name 'A'", "A > 0", 0},
      {"unknown argument", WithLaunch(launch("1", R"j(["A", "Cc"])j")), "launches[0].args[1]",
       "unknown argument 'Cc'", "\"Cc\"", 1},
      {"bad i64 argument", WithLaunch(launch("1", R"j(["i64:M*Q"])j")), "launches[0].args[0]", "unknown name 'Q'",
       "i64:M*Q", 6},
      {"bad f32 argument", WithLaunch(launch("1", R"j(["f32:zz"])j")), "launches[0].args[0]", "unknown name 'zz'",
       "f32:zz", 4},
      {"param hides an operator param", WithLaunch(launch("1"), R"j("params": {"M": 1},)j"), "params.M",
       "already the name of a param of the operator", "\"M\": 1", 0},
      {"workspace hides a tensor", WithLaunch(launch("1"), R"j("workspaces": [{"name": "C", "bytes": 4}],)j"),
       "workspaces[0].name", "already the name of a tensor", "\"C\", \"bytes\"", 0},
      {"tensor map of an unknown tensor", WithLaunch(launch("1"), R"j("tensor_maps": [{"name": "t", "tensor": "D", "box": [1, 1]}],)j"),
       "tensor_maps[0].tensor", "neither a tensor", "\"D\"", 0},
      {"box rank", WithLaunch(launch("1"), R"j("tensor_maps": [{"name": "t", "tensor": "A", "box": [64]}],)j"),
       "tensor_maps[0].box", "box has 1 dimensions but 'A' has 2", "[64]", 0},
      {"workspace map needs a shape",
       WithLaunch(launch("1"), R"j("workspaces": [{"name": "w", "bytes": 64}], "tensor_maps": [{"name": "t", "tensor": "w", "box": [8]}],)j"),
       "tensor_maps[0]", "needs a \"shape\"", "{\"name\": \"t\"", 0},
      {"kernel not in source", "/* forgek\n{\"launches\": [{\"kernel\": \"missing\", \"grid\": [1], \"block\": [1], \"args\": []}]}\n*/\n"
                               "__global__ void missing() {}\nextern \"C\" __device__ void missing2() {}\n",
       "launches[0].kernel", "no 'extern \"C\" __global__' function named 'missing'", "\"missing\"", 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Diagnostics diags = Validate(c.source, false);
    const Diagnostic* d = FindField(diags, c.field);
    ASSERT_NE(d, nullptr) << "no diagnostic on " << c.field << ":\n" << FormatDiagnostics(diags);
    EXPECT_NE(d->message.find(c.says), std::string::npos) << d->str();
    auto [line, column] = LineColumnOf(c.source, c.at, c.shift);
    EXPECT_EQ(d->line, line) << d->str();
    EXPECT_EQ(d->column, column) << d->str();
    EXPECT_EQ(d->file, "cand.cu");
  }
}

TEST(CandidateValidate, ArgumentsResolveAsDocumented) {
  std::string src = WithLaunch(
      R"j({"kernel": "k", "grid": ["ceil_div(M, 128)"], "block": [32],
          "args": ["A", "alpha", "count", "w", "t", "M*N", "i64:M*N*K", "f32:0.25", "f32:M", "T2"]})j",
      R"j("params": {"T": [1, 2]}, "let": {"T2": "T*2"}, "workspaces": [{"name": "w", "bytes": "M"}],
         "tensor_maps": [{"name": "t", "tensor": "w", "shape": ["M", 4], "box": [8, 4]}],)j");
  Validate(src, true);
}

TEST(CandidateValidate, KernelDeclarationForms) {
  const std::string manifest = "/* forgek\n{\"launches\": [{\"kernel\": \"k\", \"grid\": [1], \"block\": [1], \"args\": []}]}\n*/\n";
  Validate(manifest + "extern \"C\"\n__global__ void\n__launch_bounds__(128, 1)\nk (int n) {}\n", true);
  Validate(manifest + "extern \"C\" __global__ void other(int n) {}\nvoid k(int n);\n", false);
  // A kernel named only inside the manifest does not count.
  Validate("/* forgek\n{\"name\": \"extern \\\"C\\\" __global__ void k(\",\n"
           "\"launches\": [{\"kernel\": \"k\", \"grid\": [1], \"block\": [1], \"args\": []}]}\n*/\n", false);
}

TEST(CandidateValidate, ValidatesTheFixtureCandidates) {
  std::string dir = SourceDir() + "/tests/core/data/operators/tiny_scale/";
  OperatorSpec op;
  Diagnostics diags;
  ASSERT_TRUE(LoadOperator(dir, &op, &diags)) << FormatDiagnostics(diags);
  for (const char* file : {"golden.cu", "reference.cu", "seed.cu", "families/vectorised.cu"}) {
    Candidate c;
    ASSERT_TRUE(LoadCandidateFile(dir + file, &c, &diags)) << FormatDiagnostics(diags);
    EXPECT_TRUE(ValidateCandidate(c, op, &diags)) << file << ": " << FormatDiagnostics(diags);
  }
}

}  // namespace
}  // namespace forgek
