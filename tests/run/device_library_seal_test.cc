// A family written on the device library: what the store keeps of it, and so what a seal holds,
// is the self-contained source with the library code it was measured with.
#include <gtest/gtest.h>

#include "forgek/agent/builtin_agent.h"
#include "forgek/core/device_library.h"
#include "forgek/core/hash.h"
#include "forgek/core/params.h"
#include "forgek/run/run.h"
#include "forgek/knowledge/store.h"
#include "loop_fixture.h"
#include "scripted_evaluator.h"
#include "test_util.h"

namespace forgek {
namespace {

constexpr const char* kLibraryFamily = R"CU(/* forgek
{ "name": "on_library", "params": {"TILE": [1, 2, 4, 8], "UNROLL": [1, 2]},
  "controls": {"tile": ["TILE", "UNROLL"]},
  "launches": [{"kernel": "scale", "grid": ["ceil_div(N, 256)"], "block": [256], "args": ["x", "y", "N"]}] }
*/
#include <forgek/reduce.cuh>
extern "C" __global__ void scale(const float* x, float* y, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < N ? x[i] : 0.f;
  float lane0 = fk::warp_max(threadIdx.x % 32 == 0 ? 1.f : 0.f);  // 1 in every lane
  if (i < N) y[i] = v * TILE * UNROLL * lane0;
}
)CU";

TEST(DeviceLibraryRun, TheStoreAndTheSealHoldTheSelfContainedSourceUnderTheSameIdentity) {
  LoopFixture fx;
  WriteFile(fx.dir.file("toy/families/on_library.cu"), kLibraryFamily);
  fx.op.families = {"families/on_library.cu"};
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
  Compiler compiler(TestCompilerOptions(fx.dir));
  ScriptedEvaluator evaluator(Model);
  BuiltinAgent agent({.seed = 3});
  RunServices services{&agent, &compiler, &evaluator, &store};
  RunOptions opts;
  opts.iterations = 4;
  RunSummary summary;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &summary, &err)) << err;
  ASSERT_FALSE(summary.seal_id.empty()) << summary.seal_reason;

  std::vector<AttemptRecord> attempts;
  ASSERT_TRUE(store.ListAttempts(summary.run_id, &attempts, &err)) << err;
  ASSERT_FALSE(attempts.empty());
  for (const AttemptRecord& a : attempts) {
    CandidateRecord c;
    bool found = false;
    ASSERT_TRUE(store.GetCandidate(a.candidate_hash, &c, &found, &err) && found) << err;
    EXPECT_EQ(c.source.find("#include <forgek/"), std::string::npos) << "stored with its include:\n" << c.source;
    EXPECT_NE(c.source.find("// forgek device library: begin <forgek/reduce.cuh>"), std::string::npos);
    ParamAssignment params;
    ASSERT_TRUE(ParseParamsJson(c.params_json, &params, &err)) << err;
    EXPECT_EQ(CandidateHash(c.source, params), a.candidate_hash) << "the stored text is the same candidate";
  }

  // Whatever becomes of the library, the sealed text compiles alone: no library is given to it here.
  SealRecord seal;
  bool found = false;
  ASSERT_TRUE(store.GetSeal(summary.seal_id, &seal, &found, &err) && found) << err;
  CandidateRecord sealed;
  ASSERT_TRUE(store.GetCandidate(seal.candidate_hash, &sealed, &found, &err) && found) << err;
  std::string expanded;
  ExpandError expand_error;
  ASSERT_TRUE(ExpandDeviceLibrary(sealed.source, &expanded, &expand_error, DeviceLibrary{})) << expand_error.message;
  EXPECT_EQ(expanded, sealed.source);
  ParamAssignment params;
  ASSERT_TRUE(ParseParamsJson(seal.params_json, &params, &err)) << err;
  CompileRequest req{"sealed.cu", sealed.source, "sm90", ParamDefines(params)};
  CompileResult r = compiler.CompileNow(req);
  EXPECT_TRUE(r.ok) << r.Summary();
}

}  // namespace
}  // namespace forgek
