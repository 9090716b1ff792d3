// Tests of the builtin evolutionary agent's logic on hand-built families (no GPU, no compiler).
#include "forgek/agent/builtin_agent.h"
#include "forgek/knowledge/knowledge.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "forgek/agent/family_space.h"
#include "forgek/core/hash.h"

namespace forgek {
namespace {

OperatorSpec TwoConfigOperator() {
  OperatorSpec op;
  op.name = "toy";
  op.dir = "/ops/toy";
  op.params = {"N"};
  op.configs = {{"small", {{"N", 256}}}, {"large", {{"N", 4096}}}};
  return op;
}

Candidate Family(const std::string& file, std::vector<std::string> mechanisms,
                 std::vector<ParamSpec> params, std::vector<std::string> constraints) {
  Candidate c;
  c.path = "/ops/toy/families/" + file;
  c.source = "// family " + file;
  c.manifest.name = file;
  c.manifest.mechanisms = std::move(mechanisms);
  c.manifest.params = std::move(params);
  c.manifest.constraints = std::move(constraints);
  return c;
}

struct Fixture {
  OperatorSpec op = TwoConfigOperator();
  std::vector<Candidate> families = {
      Family("plain.cu", {"warp_shuffle_reduction"}, {{"BLOCK", {64, 128, 256, 512}}, {"VEC", {1, 2, 4}}},
             {"BLOCK*VEC <= 1024"}),
      Family("vector.cu", {"vector_16B"}, {{"ROWS", {1, 2, 4, 8, 16, 32}}, {"VEC", {1, 2, 4, 8}}},
             {"N % (32*VEC) == 0"}),
      Family("cluster.cu", {"cluster_dsmem"}, {{"CLUSTER", {2, 4, 8}}, {"BLOCK", {32, 64}}},
             {"N / CLUSTER >= BLOCK"}),
  };
  ProposalContext Context() {
    ProposalContext ctx;
    ctx.op = &op;
    ctx.arch = "sm90";
    ctx.families = families;
    ctx.max_candidates = 4;
    return ctx;
  }
};

AttemptSummary Attempt(int iteration, const Proposal& p, Outcome outcome, double speedup) {
  AttemptSummary a;
  a.iteration = iteration;
  a.candidate_hash = CandidateHash(p.candidate.source, p.params);
  a.family = p.family;
  a.params = p.params;
  a.outcome = outcome;
  a.geomean_speedup = speedup;
  return a;
}

TEST(BuiltinAgent, FirstGenerationCoversEveryFamilyWithValidInstances) {
  Fixture fx;
  ProposalContext ctx = fx.Context();
  BuiltinAgent agent;
  std::vector<Proposal> out;
  std::string err;
  ASSERT_TRUE(agent.Propose(ctx, &out, &err)) << err;
  ASSERT_EQ(out.size(), 4u);
  std::set<std::string> families;
  for (const Proposal& p : out) {
    families.insert(p.family);
    FamilySpace space(p.candidate, fx.op);
    std::string why;
    EXPECT_TRUE(space.Valid(p.params, &why)) << p.family << ": " << why;
    EXPECT_FALSE(p.rationale.empty());
  }
  EXPECT_EQ(families, (std::set<std::string>{"families/plain.cu", "families/vector.cu", "families/cluster.cu"}));
}

TEST(BuiltinAgent, NeverRepeatsAnAttemptOfTheRun) {
  Fixture fx;
  BuiltinAgent agent({.seed = 7});
  std::vector<AttemptSummary> history;
  std::set<std::string> hashes;
  for (int round = 0; round < 16; ++round) {
    ProposalContext ctx = fx.Context();
    ctx.history = history;
    std::vector<Proposal> out;
    std::string err;
    ASSERT_TRUE(agent.Propose(ctx, &out, &err)) << err;
    for (const Proposal& p : out) {
      std::string h = CandidateHash(p.candidate.source, p.params);
      EXPECT_TRUE(hashes.insert(h).second) << "repeated " << p.family << " in round " << round;
      history.push_back(Attempt(static_cast<int>(history.size()), p, Outcome::slower, 0.5 + 0.01 * history.size()));
    }
  }
  // The valid space holds 11 + 24 + 5 instances; the agent covers most of it without repeating.
  EXPECT_GE(hashes.size(), 30u);
}

TEST(BuiltinAgent, ExploitsTheBestFamilyOnceItIsKnown) {
  Fixture fx;
  BuiltinAgent agent({.seed = 3, .base_move_rate = 0.1});
  ProposalContext ctx = fx.Context();
  std::vector<Proposal> first;
  std::string err;
  ASSERT_TRUE(agent.Propose(ctx, &first, &err));
  for (size_t i = 0; i < first.size(); ++i) {
    double speedup = first[i].family == "families/vector.cu" ? 1.4 : 0.8;
    ctx.history.push_back(Attempt(static_cast<int>(i), first[i], Outcome::slower, speedup));
  }
  // Round 1: the best family is the favourite parent. Round 2 follows six attempts without
  // progress: the agent turns to architecture moves.
  std::map<std::string, int> round1;
  bool moved_after_stagnation = false;
  std::string why;
  for (int round = 0; round < 2; ++round) {
    ctx.max_candidates = 6;
    std::vector<Proposal> out;
    ASSERT_TRUE(agent.Propose(ctx, &out, &err));
    for (const Proposal& p : out) {
      if (round == 0) ++round1[p.family];
      if (round == 1 && p.rationale.find("without progress") != std::string::npos) moved_after_stagnation = true;
      why += p.family + ": " + p.rationale + "\n";
      ctx.history.push_back(Attempt(static_cast<int>(ctx.history.size()), p, Outcome::slower, 0.9));
    }
  }
  for (const auto& [family, n] : round1) {
    if (family != "families/vector.cu") {
      EXPECT_GT(round1["families/vector.cu"], n) << why;
    }
  }
  EXPECT_TRUE(moved_after_stagnation) << why;
}

// A setting refuted on one shape regime and its alternative refuted on the other forbid nothing:
// each may be the best where it was not refuted (this once left a search with no instance to draw).
TEST(BuiltinAgent, ASettingRefutedInOnlySomeRegimesOfTheRunIsStillDrawn) {
  Fixture fx;
  fx.op.configs = {{"small", {{"N", 256}}}, {"large", {{"N", 1 << 24}}}};
  fx.op.bytes = "8*N";  // small fits in L2, large streams: two regimes
  ASSERT_NE(ShapeRegime(fx.op, "small"), ShapeRegime(fx.op, "large"));
  ProposalContext ctx = fx.Context();
  ctx.max_candidates = 30;
  RetrievedDecision on_large{"warp_shuffle_reduction", R"({"BLOCK": 64})", DecisionVerdict::refuted, 0.7, 0.9, "", "block=64"};
  on_large.regime = ShapeRegime(fx.op, "large");
  RetrievedDecision on_small{"warp_shuffle_reduction", R"({"BLOCK": 128})", DecisionVerdict::refuted, 0.7, 0.9, "", "block=128"};
  on_small.regime = ShapeRegime(fx.op, "small");
  ctx.decisions = {on_large, on_small};
  BuiltinAgent agent({.seed = 11});
  std::vector<Proposal> out;
  std::string err;
  ASSERT_TRUE(agent.Propose(ctx, &out, &err)) << err;
  std::set<int64_t> blocks;
  for (const Proposal& p : out) {
    if (p.family == "families/plain.cu") blocks.insert(p.params.at("BLOCK"));
  }
  EXPECT_TRUE(blocks.count(64) && blocks.count(128)) << "both settings are still drawn";

  // Refuted in both regimes, a setting is avoided.
  RetrievedDecision also_small = on_large;
  also_small.regime = ShapeRegime(fx.op, "small");
  ctx.decisions = {on_large, also_small};
  BuiltinAgent again({.seed = 11});
  ASSERT_TRUE(again.Propose(ctx, &out, &err)) << err;
  for (const Proposal& p : out) {
    if (p.family == "families/plain.cu") {
      EXPECT_NE(p.params.at("BLOCK"), 64) << "refuted everywhere";
    }
  }
}

TEST(BuiltinAgent, ValidatedDecisionsSteerAndRefutedSettingsAreAvoided) {
  Fixture fx;
  ProposalContext ctx = fx.Context();
  ctx.max_candidates = 1;
  ctx.decisions.push_back({"cluster_dsmem", R"({"CLUSTER": 4})", DecisionVerdict::validated, 1.3, 0.9, "", "cluster=4"});
  ctx.decisions.push_back({"warp_shuffle_reduction", R"({"BLOCK": 64})", DecisionVerdict::refuted, 0.7, 0.9, "", "block=64"});
  BuiltinAgent agent({.seed = 11});
  std::vector<Proposal> out;
  std::string err;
  ASSERT_TRUE(agent.Propose(ctx, &out, &err));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].family, "families/cluster.cu") << "the validated mechanism's family goes first";
  EXPECT_EQ(out[0].params.at("CLUSTER"), 4) << "the validated setting is applied";

  ctx.max_candidates = 30;
  ASSERT_TRUE(agent.Propose(ctx, &out, &err));
  for (const Proposal& p : out) {
    if (p.family == "families/plain.cu") {
      EXPECT_NE(p.params.at("BLOCK"), 64) << "refuted setting proposed";
    }
  }
}

// One family whose every BLOCK was refuted (a run's own ablations can refute a setting of each
// region of a space, one comparison each): the refutations steer the draws but do not end the
// search. With nothing left that has no refuted setting, instances with one are proposed, and say
// so; the run is `exhausted` only when every valid instance has been measured.
TEST(BuiltinAgent, RefutedSettingsDoNotExhaustASpaceWithUntriedInstances) {
  Fixture fx;
  ProposalContext ctx = fx.Context();
  ctx.families = {fx.families[0]};  // plain.cu: BLOCK x VEC, 11 valid instances
  for (int block : {64, 128, 256, 512})
    ctx.decisions.push_back({"warp_shuffle_reduction", "{\"BLOCK\": " + std::to_string(block) + "}",
                             DecisionVerdict::refuted, 0.9, 0.9, "", "block=" + std::to_string(block)});
  BuiltinAgent agent({.seed = 3});
  std::vector<Proposal> out;
  std::string err;
  std::set<std::string> drawn;
  for (int round = 0; round < 20; ++round) {
    ASSERT_TRUE(agent.Propose(ctx, &out, &err)) << err;
    if (out.empty()) break;
    for (const Proposal& p : out) {
      EXPECT_NE(p.rationale.find("refuted setting"), std::string::npos) << p.rationale;
      EXPECT_TRUE(drawn.insert(CandidateHash(p.candidate.source, p.params)).second) << "proposed twice";
      ctx.history.push_back(Attempt(static_cast<int>(ctx.history.size()), p, Outcome::slower, 0.9));
    }
  }
  EXPECT_TRUE(out.empty()) << "every valid instance measured: now the space is exhausted";
  EXPECT_EQ(drawn.size(), 11u) << "BLOCK*VEC <= 1024 leaves 11 of the 12";
}

PriorResult Prior(const std::string& family, ParamAssignment params, double sol) {
  PriorResult r;
  r.family = family;
  r.params = std::move(params);
  r.sol_pct = sol;
  r.source = "attempt 3 of run abcd on large";
  return r;
}

TEST(BuiltinAgent, WarmStartsFromTheBestResultsOfEarlierRuns) {
  Fixture fx;
  BuiltinAgent agent({.seed = 2});  // prior_count 4
  ProposalContext ctx = fx.Context();
  ctx.prior_results = {
      Prior("families/vector.cu", {{"ROWS", 8}, {"VEC", 4}, {"GONE", 9}}, 90),  // GONE: a gene since removed
      Prior("families/cluster.cu", {{"CLUSTER", 3}, {"BLOCK", 64}}, 85),       // invalid: 3 is outside CLUSTER's domain
      Prior("families/removed.cu", {{"X", 1}}, 84),                            // family no longer shipped
      Prior("families/plain.cu", {{"BLOCK", 128}, {"VEC", 2}}, 80),
      Prior("families/vector.cu", {{"ROWS", 2}, {"VEC", 2}}, 70),
      Prior("families/plain.cu", {{"BLOCK", 64}, {"VEC", 1}}, 60),             // beyond prior_count
  };
  std::vector<Proposal> out;
  std::string err;
  ASSERT_TRUE(agent.Propose(ctx, &out, &err)) << err;
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].family, "families/vector.cu");
  EXPECT_EQ(out[0].params, (ParamAssignment{{"ROWS", 8}, {"VEC", 4}}));
  EXPECT_EQ(out[0].rationale, "warm start from attempt 3 of run abcd on large");
  EXPECT_EQ(out[1].family, "families/plain.cu");
  EXPECT_EQ(out[1].params, (ParamAssignment{{"BLOCK", 128}, {"VEC", 2}}));
  EXPECT_EQ(out[2].params, (ParamAssignment{{"ROWS", 2}, {"VEC", 2}}));
  EXPECT_EQ(out[3].rationale.find("warm start"), std::string::npos) << "the fourth prior is the invalid one";

  // Once tried, the warm start is over: the next batch is search, and nothing is proposed twice.
  std::set<std::string> tried;
  for (const Proposal& p : out) {
    ctx.history.push_back(Attempt(static_cast<int>(ctx.history.size()), p, Outcome::slower, 0.9));
    tried.insert(CandidateHash(p.candidate.source, p.params));
  }
  ASSERT_TRUE(agent.Propose(ctx, &out, &err)) << err;
  ASSERT_FALSE(out.empty());
  for (const Proposal& p : out) {
    EXPECT_EQ(p.rationale.find("warm start"), std::string::npos) << p.rationale;
    EXPECT_FALSE(tried.count(CandidateHash(p.candidate.source, p.params)));
  }
}

// A refuted setting steers fresh draws away, but never hides an earlier run's measured winner, and
// a refutation transferred from another operator forbids nothing.
TEST(BuiltinAgent, ARefutedSettingNeverDropsAWarmStart) {
  Fixture fx;
  BuiltinAgent agent({.seed = 3});
  ProposalContext ctx = fx.Context();
  ctx.max_candidates = 1;
  ctx.prior_results = {Prior("families/plain.cu", {{"BLOCK", 64}, {"VEC", 1}}, 90)};
  ctx.decisions.push_back({"warp_shuffle_reduction", R"({"BLOCK": 64})", DecisionVerdict::refuted, 0.8, 0.9, "", "block=64"});
  std::vector<Proposal> out;
  std::string err;
  ASSERT_TRUE(agent.Propose(ctx, &out, &err)) << err;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].family, "families/plain.cu");
  EXPECT_EQ(out[0].params, (ParamAssignment{{"BLOCK", 64}, {"VEC", 1}}));
  EXPECT_EQ(out[0].rationale.rfind("warm start", 0), 0u) << out[0].rationale;
  EXPECT_NE(out[0].rationale.find("refuted"), std::string::npos) << "the agent says why it kept it";

  // Transferred refutations are priors to confirm: BLOCK=64 stays drawable.
  ctx.prior_results.clear();
  ctx.decisions.back().transferred = true;
  ctx.max_candidates = 40;
  bool drew64 = false;
  for (int round = 0; round < 3 && !drew64; ++round) {
    ASSERT_TRUE(agent.Propose(ctx, &out, &err)) << err;
    for (const Proposal& p : out) drew64 |= p.family == "families/plain.cu" && p.params.at("BLOCK") == 64;
  }
  EXPECT_TRUE(drew64);
}

TEST(BuiltinAgent, SameSeedSameProposals) {
  Fixture fx;
  BuiltinAgent a({.seed = 5}), b({.seed = 5});
  std::vector<Proposal> pa, pb;
  std::string err;
  ASSERT_TRUE(a.Propose(fx.Context(), &pa, &err));
  ASSERT_TRUE(b.Propose(fx.Context(), &pb, &err));
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_EQ(pa[i].params, pb[i].params);
}

TEST(BuiltinAgent, NoFamiliesIsAClearError) {
  OperatorSpec op = TwoConfigOperator();
  ProposalContext ctx;
  ctx.op = &op;
  BuiltinAgent agent;
  std::vector<Proposal> out;
  std::string err;
  EXPECT_FALSE(agent.Propose(ctx, &out, &err));
  EXPECT_NE(err.find("families"), std::string::npos) << err;
}

TEST(FamilySpace, MutationStaysValidAndMoves) {
  Fixture fx;
  FamilySpace space(fx.families[0], fx.op);
  Rng rng(1);
  ParamAssignment parent{{"BLOCK", 128}, {"VEC", 2}};
  ASSERT_TRUE(space.Valid(parent));
  for (int i = 0; i < 50; ++i) {
    ParamAssignment child;
    ASSERT_TRUE(space.Mutate(parent, rng, &child));
    EXPECT_NE(child, parent);
    EXPECT_TRUE(space.Valid(child));
  }
  EXPECT_FALSE(space.Valid({{"BLOCK", 512}, {"VEC", 4}})) << "BLOCK*VEC <= 1024 must be enforced";
  EXPECT_FALSE(space.Valid({{"BLOCK", 100}, {"VEC", 1}})) << "values outside the domain are invalid";
}

// A basin that single-gene steps cannot leave: from (PATH 0, ITEMS 4) the better instance is
// (PATH 1, ITEMS 8), and either change alone is worse. Mutation must take such two-gene steps
// now and then, while most steps stay small.
TEST(FamilySpace, MutationSometimesMovesSeveralGenes) {
  OperatorSpec op = TwoConfigOperator();
  Candidate fam = Family("paths.cu", {}, {{"PATH", {0, 1}}, {"ITEMS", {4, 8}}, {"ROWS", {2, 4, 8, 16}},
                                          {"STAGES", {2, 3, 4, 6}}, {"STORE", {0, 1}}}, {});
  FamilySpace space(fam, op);
  Rng rng(7);
  const ParamAssignment parent{{"PATH", 0}, {"ITEMS", 4}, {"ROWS", 4}, {"STAGES", 3}, {"STORE", 0}};
  int both = 0, single = 0, three_or_more = 0;
  constexpr int kDraws = 3000;
  for (int i = 0; i < kDraws; ++i) {
    ParamAssignment child;
    ASSERT_TRUE(space.Mutate(parent, rng, &child));
    int changed = 0;
    for (const auto& [name, value] : parent) changed += child.at(name) != value;
    ASSERT_GE(changed, 1);
    single += changed == 1;
    three_or_more += changed >= 3;
    both += child.at("PATH") == 1 && child.at("ITEMS") == 8;
  }
  // Two given genes out of five change together in about 2/9 * 1/10 + (3+ gene steps) of draws.
  EXPECT_GT(both, kDraws / 100) << "two-gene steps across the basin: " << both << " of " << kDraws;
  EXPECT_GT(single, kDraws / 2) << "most steps change one gene: " << single;
  EXPECT_GT(three_or_more, 0);
}

TEST(FamilySpace, SampleFindsRareValidCornerByEnumeration) {
  OperatorSpec op = TwoConfigOperator();
  Candidate fam = Family("rare.cu", {}, {{"A", {1, 2, 3, 4, 5, 6, 7, 8}}, {"B", {1, 2, 3, 4, 5, 6, 7, 8}}},
                         {"A == 7 && B == 3"});
  FamilySpace space(fam, op);
  Rng rng(2);
  ParamAssignment p;
  ASSERT_TRUE(space.Sample(rng, &p));
  EXPECT_EQ(p.at("A"), 7);
  EXPECT_EQ(p.at("B"), 3);
  Candidate impossible = Family("none.cu", {}, {{"A", {1, 2}}}, {"A > 5"});
  FamilySpace none(impossible, op);
  EXPECT_FALSE(none.Sample(rng, &p));
}

}  // namespace
}  // namespace forgek
