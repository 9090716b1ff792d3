// Runs that seal a dispatch (per config the fastest candidate, the incumbent elsewhere), next runs
// measured against it, seeds that are search spaces, and runs whose agent has nothing new.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "forgek/agent/builtin_agent.h"
#include "forgek/run/run.h"
#include "forgek/core/hash.h"
#include "forgek/seal/seal.h"
#include "forgek/knowledge/store.h"
#include "loop_fixture.h"
#include "forgek/seal/incumbent.h"
#include "scripted_evaluator.h"

namespace forgek {
namespace {

// Every tiled instance wins on one config and loses on the other: TILE >= 4 is fast on "small",
// TILE <= 2 on "large". No single kernel beats the reference (100 us) on both.
double SplitModel(const KernelUnderTest& k, const std::string& config) {
  if (!k.library.empty()) return 100.0;
  const bool big_tile = k.params.at("TILE") >= 4;
  return (config == "small") == big_tile ? 70.0 : 110.0;
}

TEST(DispatchSeal, PerConfigWinnersAreSealedAsADispatchAndTheNextRunMeasuresAgainstIt) {
  LoopFixture fx;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
  Compiler compiler(TestCompilerOptions(fx.dir));
  ScriptedEvaluator evaluator(SplitModel);
  BuiltinAgent agent({.seed = 4});
  RunServices services{&agent, &compiler, &evaluator, &store};
  RunOptions opts;
  opts.iterations = 10;
  RunSummary first;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &first, &err)) << err;
  EXPECT_EQ(first.outcomes["faster"], 0) << "no single kernel wins";
  ASSERT_FALSE(first.seal_id.empty()) << first.seal_reason;
  EXPECT_EQ(first.seal_reason.rfind("sealed a dispatch of 2 kernels", 0), 0u) << first.seal_reason;
  ASSERT_EQ(first.dispatch.size(), 3u) << "two configs and the fallback";
  EXPECT_EQ(first.dispatch[0].config, "small");
  EXPECT_NE(first.dispatch[0].reason.find("1.429x, faster beyond noise"), std::string::npos) << first.dispatch[0].reason;
  EXPECT_NE(first.dispatch[2].kernel.find("incumbent"), std::string::npos) << "every candidate is slower somewhere";

  // The confirmation measured each config with the kernel serving it, on one more seed.
  std::set<std::string> confirmed;
  for (const EvalRequest& r : evaluator.requests)
    if (r.seeds == 3) {
      ASSERT_EQ(r.configs.size(), 1u);
      EXPECT_EQ(r.candidate.params.at("TILE") >= 4, r.configs[0] == "small");
      confirmed.insert(r.configs[0]);
    }
  EXPECT_EQ(confirmed, (std::set<std::string>{"small", "large"}));

  SealRecord seal;
  bool found = false;
  ASSERT_TRUE(store.GetSeal(first.seal_id, &seal, &found, &err)) << err;
  ASSERT_TRUE(found);
  nlohmann::json meta = nlohmann::json::parse(seal.metadata_json);
  const nlohmann::json& d = meta.at("dispatch");
  ASSERT_EQ(d.at("kernels").size(), 3u) << "two candidates and the reference (the fallback)";
  ASSERT_EQ(d.at("table").size(), 2u);
  const nlohmann::json& fallback = d.at("kernels").at(d.at("fallback").get<size_t>());
  EXPECT_TRUE(fallback.contains("reference")) << fallback.dump();
  for (const nlohmann::json& row : d.at("table")) {
    const nlohmann::json& k = d.at("kernels").at(row.at("kernel").get<size_t>());
    EXPECT_EQ(k.at("params").at("TILE").get<int>() >= 4, row.at("config") == "small") << k.dump();
  }
  EXPECT_NEAR(seal.config_us.at("small"), 70, 1e-9);
  EXPECT_NEAR(seal.config_us.at("large"), 70, 1e-9);
  // The seal keeps its binaries: its own cubin and every cubin of its table, as measured.
  std::vector<std::string> shas = {seal.cubin_sha256};
  for (const nlohmann::json& k : d.at("kernels"))
    if (!k.contains("reference")) shas.push_back(k.at("cubin_sha256").get<std::string>());
  for (const std::string& sha : shas) {
    std::string bytes;
    bool kept = false, rebuilt = true;
    ASSERT_TRUE(store.GetCubin(sha, &bytes, &kept, &rebuilt, &err)) << err;
    EXPECT_TRUE(kept) << sha;
    EXPECT_FALSE(rebuilt) << "kept at sealing";
    EXPECT_EQ(Sha256Hex(bytes), sha);
  }

  // Export: the seal's own kernel at the top, each kernel of the table under kernels/K, the table
  // in dispatch.json with each config's values.
  const std::string dir = fx.dir.file("export");
  ASSERT_TRUE(ExportSeal(store, seal, fx.op, compiler, dir, false, &err)) << err;
  nlohmann::json exported = nlohmann::json::parse(ReadFile(dir + "/dispatch.json"));
  EXPECT_EQ(exported.at("format"), "forgek-seal-dispatch/1");
  ASSERT_EQ(exported.at("table").size(), 2u);
  for (const nlohmann::json& row : exported.at("table")) {
    const nlohmann::json& k = exported.at("kernels").at(row.at("kernel").get<size_t>());
    ASSERT_TRUE(k.contains("dir")) << k.dump();
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + k.at("dir").get<std::string>() + "/kernel.cubin"));
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + k.at("dir").get<std::string>() + "/launch.json"));
    EXPECT_EQ(row.at("values").at("N").get<int64_t>(), row.at("config") == "small" ? 1 << 12 : 1 << 20);
  }
  EXPECT_TRUE(exported.at("kernels").at(exported.at("fallback").get<size_t>()).contains("reference"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/kernel.cubin"));
  EXPECT_EQ(Sha256Hex(ReadFile(dir + "/kernel.cubin")), seal.cubin_sha256);
  EXPECT_EQ(nlohmann::json::parse(ReadFile(dir + "/seal.json")).at("exported_with"), "the sealed cubins kept in the store");
  EXPECT_NE(ReadFile(dir + "/README.md").find("## A dispatch"), std::string::npos);
  EXPECT_NE(SealDiffText(store, seal, seal).find("kernel small"), std::string::npos);

  // Verification measures each config with the kernel its table names, against the reference.
  evaluator.requests.clear();
  SealVerification verified = VerifySeal(evaluator, store, compiler, fx.op, seal);
  EXPECT_EQ(verified.status, SealVerification::Status::holds) << verified.text;
  ASSERT_EQ(evaluator.requests.size(), 2u);
  for (const EvalRequest& r : evaluator.requests) {
    ASSERT_EQ(r.configs.size(), 1u);
    EXPECT_EQ(r.candidate.params.at("TILE") >= 4, r.configs[0] == "small") << r.configs[0];
    EXPECT_EQ(r.incumbent.library, "scripted.reference");
  }

  // The next run's incumbent is the dispatch: each config is timed against the kernel serving it.
  evaluator.requests.clear();
  BuiltinAgent agent2({.seed = 5});
  services.agent = &agent2;
  opts.iterations = 4;
  RunSummary second;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &second, &err)) << err;
  EXPECT_NE(second.incumbent.find("(dispatch)"), std::string::npos) << second.incumbent;
  int split = 0;
  for (const EvalRequest& r : evaluator.requests) {
    if (r.configs.size() != 1 || r.incumbent.params.empty()) continue;
    EXPECT_EQ(r.incumbent.params.at("TILE") >= 4, r.configs[0] == "small") << r.configs[0];
    ++split;
  }
  EXPECT_GE(split, 2) << "a candidate is measured per config against the dispatch";
  EXPECT_TRUE(second.seal_id.empty()) << "nothing beats 70 us on both configs";
  for (const ConfigComparison& c : second.configs) EXPECT_NEAR(c.incumbent_us, 70, 1e-9) << c.config;
}

// A seal that the expert reference beats on one config (here the machine changed under it: the
// seal's large config went from the same as the expert to 10 % slower) and that no candidate of
// the next run beats: the expert is a dispatch candidate like any attempt, so the run seals a
// dispatch that hands that config back to it, says so, and the run after is timed against the
// expert there.
TEST(DispatchSeal, TheExpertReferenceTakesBackAConfigWhereItBeatsTheSeal) {
  LoopFixture fx;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
  Compiler compiler(TestCompilerOptions(fx.dir));
  // First machine: TILE >= 4 is 1.25x on small and the same as the expert on large.
  ScriptedEvaluator first_machine([](const KernelUnderTest& k, const std::string& config) {
    if (!k.library.empty()) return 100.0;
    if (k.params.at("TILE") < 4) return 120.0;
    return config == "small" ? 80.0 : 99.8;
  });
  BuiltinAgent agent({.seed = 4});
  RunServices services{&agent, &compiler, &first_machine, &store};
  RunOptions opts;
  opts.iterations = 10;
  RunSummary first;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &first, &err)) << err;
  ASSERT_FALSE(first.seal_id.empty()) << first.seal_reason;
  ASSERT_TRUE(first.dispatch.empty()) << "one kernel serves both configs";

  // Second machine: that kernel is now 10 % slower than the expert on large; nothing is faster.
  ScriptedEvaluator second_machine([](const KernelUnderTest& k, const std::string& config) {
    if (!k.library.empty()) return 100.0;
    if (k.params.at("TILE") < 4) return 130.0;
    return config == "small" ? 80.0 : 110.0;
  });
  services.evaluator = &second_machine;
  BuiltinAgent agent2({.seed = 5});
  services.agent = &agent2;
  opts.iterations = 4;
  RunSummary second;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &second, &err)) << err;
  ASSERT_FALSE(second.seal_id.empty()) << second.seal_reason;
  EXPECT_NE(second.seal_reason.find("the expert reference serves 1 config"), std::string::npos) << second.seal_reason;
  ASSERT_EQ(second.dispatch.size(), 3u) << "two configs and the fallback";
  EXPECT_EQ(second.dispatch[0].kernel, "incumbent (" + second.incumbent + ")") << "the seal keeps small";
  EXPECT_EQ(second.dispatch[1].config, "large");
  EXPECT_EQ(second.dispatch[1].kernel.rfind("expert reference (", 0), 0u) << second.dispatch[1].kernel;
  EXPECT_NE(second.dispatch[1].reason.find("1.100x, faster beyond noise"), std::string::npos)
      << second.dispatch[1].reason;

  SealRecord seal, earlier;
  bool found = false;
  ASSERT_TRUE(store.GetSeal(second.seal_id, &seal, &found, &err) && found) << err;
  ASSERT_TRUE(store.GetSeal(first.seal_id, &earlier, &found, &err) && found) << err;
  EXPECT_EQ(seal.candidate_hash, earlier.candidate_hash) << "its own kernel is the earlier seal's";
  nlohmann::json d = nlohmann::json::parse(seal.metadata_json).at("dispatch");
  for (const nlohmann::json& row : d.at("table")) {
    const nlohmann::json& k = d.at("kernels").at(row.at("kernel").get<size_t>());
    if (row.at("config") == "large") {
      EXPECT_TRUE(k.contains("reference")) << k.dump();
    } else {
      EXPECT_EQ(k.value("candidate", std::string()), earlier.candidate_hash) << k.dump();
    }
  }
  EXPECT_NEAR(seal.config_us.at("small"), 80, 1e-9);
  EXPECT_NEAR(seal.config_us.at("large"), 100, 1e-9) << "the time of the kernel that serves it: the expert's";

  // The run after measures its candidates against the expert on large.
  BuiltinAgent agent3({.seed = 6});
  services.agent = &agent3;
  RunSummary third;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &third, &err)) << err;
  for (const ConfigComparison& c : third.configs)
    EXPECT_NEAR(c.incumbent_us, c.config == "small" ? 80 : 100, 1e-9) << c.config;
}

// TILE 8 is a little faster than the reference everywhere (a single winner, 1.053x); TILE 1 owns
// small and TILE 2 owns large by far. The dispatch's search geomean (1.83x) beats the winner's.
double SpecialistsModel(const KernelUnderTest& k, const std::string& config) {
  if (!k.library.empty()) return 100.0;
  switch (k.params.at("TILE")) {
    case 8: return 95.0;
    case 1: return config == "small" ? 50.0 : 150.0;
    case 2: return config == "small" ? 150.0 : 60.0;
    default: return 120.0;
  }
}

TEST(DispatchSeal, ADispatchFasterThanTheBestSingleWinnerIsConfirmedFirstAndSealed) {
  LoopFixture fx;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
  Compiler compiler(TestCompilerOptions(fx.dir));
  ScriptedEvaluator evaluator(SpecialistsModel);
  BuiltinAgent agent({.seed = 4});
  RunServices services{&agent, &compiler, &evaluator, &store};
  RunOptions opts;
  opts.iterations = 10;
  RunSummary s;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &s, &err)) << err;
  EXPECT_GE(s.outcomes["faster"], 1) << "TILE 8 is a single winner";
  ASSERT_FALSE(s.seal_id.empty()) << s.seal_reason;
  EXPECT_EQ(s.seal_reason.rfind("sealed a dispatch of 2 kernels", 0), 0u) << s.seal_reason;
  SealRecord seal;
  bool found = false;
  ASSERT_TRUE(store.GetSeal(s.seal_id, &seal, &found, &err) && found) << err;
  EXPECT_NEAR(seal.config_us.at("small"), 50, 1e-9);
  EXPECT_NEAR(seal.config_us.at("large"), 60, 1e-9);
}

TEST(DispatchSeal, AMalformedDispatchTableIsAnErrorNamingTheSealAndTheEntry) {
  LoopFixture fx;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(fx.dir.file("store.db"), &err)) << err;
  Compiler compiler(TestCompilerOptions(fx.dir));
  SealRecord seal;
  seal.id = "abc";
  Incumbent inc;
  seal.metadata_json = R"({"dispatch": {"kernels": [{"candidate": "nohash", "params": {}}], "table": []}})";
  EXPECT_FALSE(LoadDispatchKernels(seal, "sm90", store, compiler, &inc, &err));
  EXPECT_EQ(err, "seal abc metadata dispatch.kernels[0]: candidate nohash is not in the store");
  seal.metadata_json = R"({"dispatch": {"kernels": [{"reference": "r"}], "table": [{"config": "small", "kernel": 3}]}})";
  EXPECT_FALSE(LoadDispatchKernels(seal, "sm90", store, compiler, &inc, &err));
  EXPECT_NE(err.find("seal abc metadata dispatch.table[0]: needs"), std::string::npos) << err;
  seal.metadata_json =
      R"({"dispatch": {"kernels": [{"reference": "r"}], "table": [{"config": "small", "kernel": 0}], "fallback": 1}})";
  EXPECT_FALSE(LoadDispatchKernels(seal, "sm90", store, compiler, &inc, &err));
  EXPECT_EQ(err, "seal abc metadata dispatch.fallback: needs an index into kernels");
  seal.metadata_json =
      R"({"dispatch": {"kernels": [{"reference": "r"}], "table": [{"config": "small", "kernel": 0}], "fallback": 0}})";
  ASSERT_TRUE(LoadDispatchKernels(seal, "sm90", store, compiler, &inc, &err)) << err;
  EXPECT_EQ(inc.reference_configs, (std::set<std::string>{"small"}));
  EXPECT_TRUE(inc.dispatch && inc.fallback_reference);
  // The one rule: "large" is outside the table and the fallback is the reference, so the expert
  // serves it (before, the seal's own kernel did while dispatch.json named the reference).
  KernelUnderTest expert;
  expert.library = "scripted.reference";
  inc.kernel.label = "own kernel";
  ServeOutsideTable(fx.op, expert, 132, &inc);
  EXPECT_EQ(inc.For("large").library, "scripted.reference");
  EXPECT_EQ(inc.reference_configs, (std::set<std::string>{"small", "large"}));
  seal.metadata_json = R"({"family": "x"})";
  ASSERT_TRUE(LoadDispatchKernels(seal, "sm90", store, compiler, &inc, &err)) << err;
  EXPECT_TRUE(inc.per_config.empty() && inc.reference_configs.empty() && !inc.dispatch)
      << "a seal of one kernel has no table";
}

TEST(DispatchSeal, ARunWithoutAWinnerSaysPerConfigWhy) {
  LoopFixture fx;
  Compiler compiler(TestCompilerOptions(fx.dir));
  // Faster on small, slower beyond noise on large, for every instance.
  ScriptedEvaluator evaluator([](const KernelUnderTest& k, const std::string& config) {
    if (!k.library.empty()) return 100.0;
    return config == "small" ? 80.0 : 101.2;
  });
  BuiltinAgent agent({.seed = 4});
  RunServices services{&agent, &compiler, &evaluator, nullptr};
  RunOptions opts;
  opts.iterations = 3;
  opts.allow_seal = false;
  RunSummary s;
  std::string err;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &s, &err)) << err;
  EXPECT_TRUE(s.seal_id.empty());
  EXPECT_NE(s.seal_reason.find("large: incumbent: best 0.988x (attempt "), std::string::npos) << s.seal_reason;
  EXPECT_NE(s.seal_reason.find("slower beyond noise"), std::string::npos) << s.seal_reason;
  ASSERT_EQ(s.configs.size(), 2u);
  EXPECT_EQ(s.configs[1].verdict, "best 0.988x, slower beyond noise");
  EXPECT_NE(RunSummaryText(s).find("best 0.988x, slower beyond noise"), std::string::npos);
}

// A seed whose params are domains: with no families, the run searches the seed's instances.
const char* kSeedSpace = R"CU(/* forgek
{ "name": "seed", "mechanisms": ["vector_16B"],
  "params": {"BLOCK": [64, 128, 256], "ITEMS": [1, 2]},
  "launches": [{"kernel": "scale", "grid": ["ceil_div(N, BLOCK * ITEMS)"], "block": ["BLOCK"], "args": ["x", "y", "N"]}] }
*/
extern "C" __global__ void scale(const float* x, float* y, int N) {
  for (int j = 0; j < ITEMS; ++j) {
    int i = (blockIdx.x * ITEMS + j) * BLOCK + threadIdx.x;
    if (i < N) y[i] = x[i];
  }
}
)CU";

TEST(SeedSpace, ASeedWithDomainsIsSearchedUntilExhaustedAndTheRunEndsWell) {
  LoopFixture fx;
  WriteFile(fx.dir.file("toy/seed.cu"), kSeedSpace);
  fx.op.families.clear();
  fx.op.seed = "seed.cu";
  Compiler compiler(TestCompilerOptions(fx.dir));
  ScriptedEvaluator evaluator([](const KernelUnderTest& k, const std::string&) {
    if (!k.library.empty()) return 100.0;
    return 100.0 - 0.1 * static_cast<double>(k.params.at("BLOCK") * k.params.at("ITEMS"));
  });
  BuiltinAgent agent({.seed = 3});
  RunServices services{&agent, &compiler, &evaluator, nullptr};
  RunOptions opts;
  opts.iterations = 20;  // more than the 6 instances of the seed's space
  opts.allow_seal = false;
  RunSummary s;
  std::string err;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &s, &err)) << err;
  EXPECT_EQ(s.attempts, 6) << "every instance once";
  std::set<std::pair<int64_t, int64_t>> instances;
  for (const EvalRequest& r : evaluator.requests)
    instances.insert({r.candidate.params.at("BLOCK"), r.candidate.params.at("ITEMS")});
  EXPECT_EQ(instances.size(), 6u) << "distinct instances proposed";
  EXPECT_EQ(s.best_params.at("BLOCK"), 256);
  EXPECT_EQ(s.best_params.at("ITEMS"), 2);
  EXPECT_EQ(s.stop_reason, StopReason::exhausted);
  EXPECT_EQ(RunExitCode(s), 0);
  EXPECT_NE(RunSummaryText(s).find("exhausted (the agent had nothing new to offer)"), std::string::npos);
}

// An agent that proposes nothing new from the start, and one that fails.
class FixedAgent : public Agent {
 public:
  explicit FixedAgent(std::string error) : error_(std::move(error)) {}
  std::string Name() const override { return "fixed"; }
  bool Propose(const ProposalContext&, std::vector<Proposal>* out, std::string* err) override {
    out->clear();
    if (error_.empty()) return true;
    *err = error_;
    return false;
  }

 private:
  std::string error_;
};

TEST(SeedSpace, AnAgentWithNothingNewEndsExhaustedWithExitZeroAndAFailureWithExitOne) {
  LoopFixture fx;
  Compiler compiler(TestCompilerOptions(fx.dir));
  ScriptedEvaluator evaluator(Model);
  FixedAgent nothing("");
  RunServices services{&nothing, &compiler, &evaluator, nullptr};
  RunOptions opts;
  RunSummary s;
  std::string err;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &s, &err)) << err;
  EXPECT_EQ(s.stop_reason, StopReason::exhausted);
  EXPECT_EQ(RunExitCode(s), 0);

  FixedAgent failing("HTTP 401: authentication failed");
  services.agent = &failing;
  ASSERT_TRUE(RunOptimisation(fx.op, opts, services, &s, &err)) << err;
  EXPECT_EQ(StopReasonText(s), "agent: HTTP 401: authentication failed");
  EXPECT_EQ(RunExitCode(s), 1);
}

}  // namespace
}  // namespace forgek
