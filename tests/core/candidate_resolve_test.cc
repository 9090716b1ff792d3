// Tests of evaluating a candidate for one config and param assignment: constraints, launches, args.
#include <gtest/gtest.h>

#include "forgek/core/candidate.h"
#include "forgek/core/operator_spec.h"

namespace forgek {
namespace {

OperatorSpec Gemm() {
  OperatorSpec op;
  op.name = "gemm_bf16";
  op.params = {"M", "N", "K"};
  op.tensors = {{"A", TensorRole::input, DType::bf16, {"M", "K"}, {}},
                {"B", TensorRole::input, DType::bf16, {"K", "N"}, {}},
                {"C", TensorRole::output, DType::bf16, {"M", "N"}, {}}};
  op.scalars = {{"alpha", DType::f32, 0.5}, {"count", DType::i64, 7}, {"small", DType::i32, -3}};
  return op;
}

const Bindings kSquare = {{"M", 4096}, {"N", 4096}, {"K", 4096}};

Candidate Parse(const std::string& manifest_json) {
  Candidate c;
  Diagnostics diags;
  std::string source = "/* forgek\n" + manifest_json + "\n*/\nextern \"C\" __global__ void k() {}\n";
  EXPECT_TRUE(ParseCandidate("c.cu", source, &c, &diags)) << FormatDiagnostics(diags);
  return c;
}

const char* kFamily = R"j({
  "params": {"BM": [64, 128], "BN": [128], "STAGES": [2, 4]},
  "let": {"stage": "(BM + BN) * 64 * 2", "smem": "STAGES * stage"},
  "constraints": ["smem <= 100000", "M % BM == 0"],
  "workspaces": [{"name": "flags", "bytes": "4 * ceil_div(M, BM)", "zero": true}, {"name": "tmp", "bytes": 0}],
  "tensor_maps": [{"name": "tmA", "tensor": "A", "box": ["BM", 64], "swizzle": "128B"},
                  {"name": "tmW", "tensor": "flags", "shape": ["ceil_div(M, BM)"], "box": [8]}],
  "launches": [{"kernel": "k", "grid": ["ceil_div(N, BN)", "ceil_div(M, BM)"], "block": [128, 2], "cluster": [1, 2],
                "smem": "smem",
                "args": ["tmA", "C", "flags", "alpha", "count", "small", "M", "i64:M*N*K", "f32:0.125", "f32:BM", "BM - 1"]}]
})j";

TEST(CandidateResolve, EvaluatesEverything) {
  Candidate c = Parse(kFamily);
  ResolvedCandidate r;
  Diagnostics diags;
  ASSERT_TRUE(ResolveCandidate(c.manifest, Gemm(), {{"BM", 128}, {"BN", 128}, {"STAGES", 2}}, kSquare, 132, &r, &diags))
      << FormatDiagnostics(diags);
  ASSERT_EQ(r.workspaces.size(), 2u);
  EXPECT_EQ(r.workspaces[0], (std::pair<std::string, int64_t>{"flags", 128}));
  EXPECT_EQ(r.workspace_zero, (std::vector<bool>{true, false}));
  ASSERT_EQ(r.tensor_maps.size(), 2u);
  EXPECT_EQ(r.tensor_maps[0].shape, (std::vector<int64_t>{4096, 4096}));
  EXPECT_EQ(r.tensor_maps[0].box, (std::vector<int64_t>{128, 64}));
  EXPECT_EQ(r.tensor_maps[0].swizzle, "128B");
  EXPECT_EQ(r.tensor_maps[1].shape, (std::vector<int64_t>{32}));
  ASSERT_EQ(r.launches.size(), 1u);
  const ResolvedLaunch& l = r.launches[0];
  EXPECT_EQ(l.kernel, "k");
  EXPECT_EQ(std::vector<int64_t>(l.grid, l.grid + 3), (std::vector<int64_t>{32, 32, 1}));
  EXPECT_EQ(std::vector<int64_t>(l.block, l.block + 3), (std::vector<int64_t>{128, 2, 1}));
  EXPECT_EQ(std::vector<int64_t>(l.cluster, l.cluster + 3), (std::vector<int64_t>{1, 2, 1}));
  EXPECT_EQ(l.smem, 2 * 256 * 64 * 2);
  using Kind = ResolvedArg::Kind;
  ASSERT_EQ(l.args.size(), 11u);
  EXPECT_EQ(l.args[0].kind, Kind::tensor_map);
  EXPECT_EQ(l.args[1].kind, Kind::tensor);
  EXPECT_EQ(l.args[1].name, "C");
  EXPECT_EQ(l.args[2].kind, Kind::workspace);
  EXPECT_EQ(l.args[3].kind, Kind::f32);
  EXPECT_EQ(l.args[3].f, 0.5f);
  EXPECT_EQ(l.args[4].kind, Kind::i64);
  EXPECT_EQ(l.args[4].i, 7);
  EXPECT_EQ(l.args[5].kind, Kind::i32);
  EXPECT_EQ(l.args[5].i, -3);
  EXPECT_EQ(l.args[6].kind, Kind::i32);
  EXPECT_EQ(l.args[6].i, 4096);
  EXPECT_EQ(l.args[7].kind, Kind::i64);
  EXPECT_EQ(l.args[7].i, int64_t{1} << 36);
  EXPECT_EQ(l.args[8].kind, Kind::f32);
  EXPECT_EQ(l.args[8].f, 0.125f);
  EXPECT_EQ(l.args[9].f, 128.0f);
  EXPECT_EQ(l.args[10].i, 127);
  EXPECT_EQ(l.args[10].name, "BM - 1");
}

TEST(CandidateResolve, ConstraintsDecideValidity) {
  Candidate c = Parse(kFamily);
  std::string why;
  EXPECT_TRUE(ConstraintsHold(c.manifest, {{"BM", 64}, {"BN", 128}, {"STAGES", 2}}, kSquare, 132, &why)) << why;
  EXPECT_FALSE(ConstraintsHold(c.manifest, {{"BM", 128}, {"BN", 128}, {"STAGES", 4}}, kSquare, 132, &why));
  EXPECT_NE(why.find("smem <= 100000"), std::string::npos) << why;
  EXPECT_FALSE(ConstraintsHold(c.manifest, {{"BM", 128}, {"BN", 128}, {"STAGES", 2}}, {{"M", 100}, {"N", 1}, {"K", 1}},
                               132, &why));
  EXPECT_NE(why.find("M % BM == 0"), std::string::npos) << why;
  // An assignment that leaves out a param cannot be judged.
  EXPECT_FALSE(ConstraintsHold(c.manifest, {{"BN", 128}, {"STAGES", 2}}, kSquare, 132, &why));
  EXPECT_NE(why.find("unknown name 'BM'"), std::string::npos) << why;

  ResolvedCandidate r;
  r.launches.resize(5);
  Diagnostics diags;
  EXPECT_FALSE(ResolveCandidate(c.manifest, Gemm(), {{"BM", 128}, {"BN", 128}, {"STAGES", 4}}, kSquare, 132, &r, &diags));
  EXPECT_EQ(r.launches.size(), 5u) << "a failed resolve leaves the output alone";
  ASSERT_FALSE(diags.empty());
  EXPECT_EQ(diags[0].field, "constraints");
}

TEST(CandidateResolve, ParamAssignmentMustMatchTheManifest) {
  Candidate c = Parse(kFamily);
  ResolvedCandidate r;
  Diagnostics diags;
  EXPECT_FALSE(ResolveCandidate(c.manifest, Gemm(), {{"BM", 96}, {"BN", 128}, {"STAGES", 2}, {"XX", 1}}, kSquare, 132, &r,
                                &diags));
  std::string all = FormatDiagnostics(diags);
  EXPECT_NE(all.find("value 96 is not in the domain of 'BM'"), std::string::npos) << all;
  EXPECT_NE(all.find("'XX' is not a param"), std::string::npos) << all;
  diags.clear();
  EXPECT_FALSE(ResolveCandidate(c.manifest, Gemm(), {{"BM", 64}}, kSquare, 132, &r, &diags));
  EXPECT_NE(FormatDiagnostics(diags).find("no value given for param 'BN'"), std::string::npos);
}

// Resolves a one-launch fixed candidate and returns the diagnostics (empty on success).
std::string ResolveError(const std::string& launch, const std::string& extra = "") {
  Candidate c = Parse("{" + extra + "\"launches\": [" + launch + "]}");
  ResolvedCandidate r;
  Diagnostics diags;
  bool ok = ResolveCandidate(c.manifest, Gemm(), {}, kSquare, 132, &r, &diags);
  EXPECT_EQ(ok, diags.empty());
  return FormatDiagnostics(diags);
}

TEST(CandidateResolve, LaunchLimitsAreChecked) {
  EXPECT_EQ(ResolveError(R"j({"kernel": "k", "grid": [1], "block": [1024], "args": []})j"), "");
  EXPECT_NE(ResolveError(R"j({"kernel": "k", "grid": [1], "block": [64, 32], "args": []})j").find("2048 threads exceeds 1024"),
            std::string::npos);
  EXPECT_NE(ResolveError(R"j({"kernel": "k", "grid": ["M - 4096"], "block": [1], "args": []})j")
                .find("launches[0].grid[0]: 'M - 4096' is 0; must be in [1, "),
            std::string::npos);
  EXPECT_NE(ResolveError(R"j({"kernel": "k", "grid": [1, 70000], "block": [1], "args": []})j").find("grid[1]"),
            std::string::npos);
  EXPECT_NE(ResolveError(R"j({"kernel": "k", "grid": [1], "block": [1, 1, 65], "args": []})j").find("block[2]"),
            std::string::npos);
  EXPECT_NE(ResolveError(R"j({"kernel": "k", "grid": [32], "block": [1], "cluster": [4, 4, 2], "args": []})j")
                .find("cluster of 32 blocks exceeds 16"),
            std::string::npos);
  EXPECT_NE(ResolveError(R"j({"kernel": "k", "grid": [3], "block": [1], "cluster": [2], "args": []})j")
                .find("not a multiple of the cluster"),
            std::string::npos);
  EXPECT_NE(ResolveError(R"j({"kernel": "k", "grid": [1], "block": [1], "smem": "0 - 1", "args": []})j").find("smem"),
            std::string::npos);
  EXPECT_NE(ResolveError(R"j({"kernel": "k", "grid": [1], "block": [1], "smem": "M / (N - 4096)", "args": []})j")
                .find("division by zero"),
            std::string::npos);
}

// A family can pick a kernel per shape: a launch runs only where its `when` is non-zero, and its
// other fields are not evaluated elsewhere (here the second grid would be 0 for small N).
TEST(CandidateResolve, LaunchesRunWhereTheirWhenHolds) {
  Candidate c = Parse(R"j({"launches": [
    {"kernel": "k", "grid": ["M"], "block": [32], "when": "N <= 1024", "args": []},
    {"kernel": "k", "grid": ["N / 2048"], "block": [64], "when": "N > 1024", "args": []}]})j");
  for (int64_t n : {512, 4096}) {
    ResolvedCandidate r;
    Diagnostics diags;
    ASSERT_TRUE(ResolveCandidate(c.manifest, Gemm(), {}, {{"M", 8}, {"N", n}, {"K", 64}}, 132, &r, &diags))
        << FormatDiagnostics(diags);
    ASSERT_EQ(r.launches.size(), 1u) << "N = " << n;
    EXPECT_EQ(r.launches[0].block[0], n <= 1024 ? 32 : 64);
    EXPECT_EQ(r.launches[0].grid[0], n <= 1024 ? 8 : n / 2048);
  }
  std::string none = ResolveError(R"j({"kernel": "k", "grid": [1], "block": [1], "when": "N < 64", "args": []})j");
  EXPECT_NE(none.find("no launch runs"), std::string::npos) << none;
  std::string bad = ResolveError(R"j({"kernel": "k", "grid": [1], "block": [1], "when": "M / (N - 4096)", "args": []})j");
  EXPECT_NE(bad.find("launches[0].when"), std::string::npos) << bad;
  EXPECT_NE(bad.find("division by zero"), std::string::npos) << bad;
  EXPECT_EQ(ResolveError(R"j({"kernel": "k", "grid": [1], "block": [1], "when": "N == 4096", "args": []})j"), "");
}

TEST(CandidateResolve, Int32ArgumentsMustFit) {
  EXPECT_EQ(ResolveError(R"j({"kernel": "k", "grid": [1], "block": [1], "args": ["2147483647", "0 - 2147483648"]})j"), "");
  std::string err = ResolveError(R"j({"kernel": "k", "grid": [1], "block": [1], "args": ["M * N * K"]})j");
  EXPECT_NE(err.find("launches[0].args[0]"), std::string::npos) << err;
  EXPECT_NE(err.find("must be in [-2147483648, 2147483647]"), std::string::npos) << err;
  EXPECT_EQ(ResolveError(R"j({"kernel": "k", "grid": [1], "block": [1], "args": ["i64:M * N * K"]})j"), "");
  EXPECT_NE(ResolveError(R"j({"kernel": "k", "grid": [1], "block": [1], "args": ["f32:1e60"]})j").find("finite"),
            std::string::npos);
}

TEST(CandidateResolve, TensorMapLimits) {
  std::string err = ResolveError(R"j({"kernel": "k", "grid": [1], "block": [1], "args": ["t"]})j",
                                 R"j("tensor_maps": [{"name": "t", "tensor": "A", "box": [512, 64]}],)j");
  EXPECT_NE(err.find("tensor_maps[0].box[0]"), std::string::npos) << err;
  EXPECT_NE(err.find("[1, 256]"), std::string::npos) << err;
}

// A view may not address more than the buffer under it: TMA would read and write beyond it (issue 29,
// item 5: a 2^31 x 2^31 fp32 view of a 16-byte workspace passed).
TEST(CandidateResolve, ATensorMapViewLargerThanItsWorkspaceIsRefused) {
  const std::string launch = R"j({"kernel": "k", "grid": [1], "block": [1], "args": ["tm"]})j";
  std::string err = ResolveError(launch, R"j("workspaces": [{"name": "ws", "bytes": 16}],
      "tensor_maps": [{"name": "tm", "tensor": "ws", "shape": ["pow2(31)", "pow2(31)"], "box": [1, 1]}],)j");
  EXPECT_NE(err.find("tensor_maps[0].shape"), std::string::npos) << err;
  EXPECT_NE(err.find("tensor map 'tm' views 2147483648 x 2147483648 elements of 4 bytes"), std::string::npos) << err;
  EXPECT_NE(err.find("workspace 'ws' holds 16 bytes"), std::string::npos) << err;
  EXPECT_NE(err.find("config K=4096,M=4096,N=4096"), std::string::npos) << err;
  // One element too many is refused too; an exact fit passes.
  err = ResolveError(launch, R"j("workspaces": [{"name": "ws", "bytes": 16}],
      "tensor_maps": [{"name": "tm", "tensor": "ws", "shape": [5], "box": [1]}],)j");
  EXPECT_NE(err.find("(20 bytes), but workspace 'ws' holds 16 bytes"), std::string::npos) << err;
  EXPECT_EQ(ResolveError(launch, R"j("workspaces": [{"name": "ws", "bytes": 16}],
      "tensor_maps": [{"name": "tm", "tensor": "ws", "shape": [2, 2], "box": [1, 1]}],)j"),
            "");
}

TEST(CandidateResolve, ATensorMapViewLargerThanItsTensorIsRefused) {
  const std::string launch = R"j({"kernel": "k", "grid": [1], "block": [1], "args": ["tm"]})j";
  // A is M x K bf16 (32 MiB under kSquare); a view of twice its rows reaches past it.
  std::string err = ResolveError(launch, R"j("tensor_maps": [{"name": "tm", "tensor": "A", "shape": ["2*M", "K"],
      "box": [64, 64]}],)j");
  EXPECT_NE(err.find("tensor_maps[0].shape"), std::string::npos) << err;
  EXPECT_NE(err.find("tensor map 'tm' views 8192 x 4096 elements of 2 bytes (67108864 bytes), but tensor 'A' holds "
                     "33554432 bytes"),
            std::string::npos)
      << err;
  // A view that reshapes A within its bytes, and A's own shape, pass.
  EXPECT_EQ(ResolveError(launch, R"j("tensor_maps": [{"name": "tm", "tensor": "A", "shape": ["M*K/64", 64],
      "box": [64, 64]}],)j"),
            "");
  EXPECT_EQ(ResolveError(launch, R"j("tensor_maps": [{"name": "tm", "tensor": "A", "box": [64, 64]}],)j"), "");
}

// pow2(62) bytes passed validation; no GPU holds a workspace beyond 2^40 bytes.
TEST(CandidateResolve, WorkspaceBytesAreBounded) {
  const std::string launch = R"j({"kernel": "k", "grid": [1], "block": [1], "args": ["ws"]})j";
  std::string err = ResolveError(launch, R"j("workspaces": [{"name": "ws", "bytes": "pow2(62)"}],)j");
  EXPECT_NE(err.find("workspaces[0].bytes: workspace 'ws': 'pow2(62)' is 4611686018427387904 bytes; a workspace may "
                     "hold at most 1099511627776"),
            std::string::npos)
      << err;
  EXPECT_EQ(ResolveError(launch, R"j("workspaces": [{"name": "ws", "bytes": "pow2(40)"}],)j"), "");
  // A map over a refused workspace gets no second error about its size.
  err = ResolveError(R"j({"kernel": "k", "grid": [1], "block": [1], "args": ["ws", "tm"]})j",
                     R"j("workspaces": [{"name": "ws", "bytes": "pow2(41)"}],
      "tensor_maps": [{"name": "tm", "tensor": "ws", "shape": [4], "box": [1]}],)j");
  EXPECT_NE(err.find("workspaces[0].bytes"), std::string::npos) << err;
  EXPECT_EQ(err.find("tensor_maps[0]"), std::string::npos) << err;
}

}  // namespace
}  // namespace forgek
