// A store without a GPU for the report tests: two operators, three runs (one sealing, one against
// that seal with LLM spend, one unsealed), a seal with its nightly checks, decisions from two runs,
// and a device with peaks. Names and mechanisms hold markup, as user files may.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "forgek/core/operator_spec.h"
#include "forgek/knowledge/store.h"

namespace forgek::report_fixture {

inline constexpr char kDevice[] = "NVIDIA H200";
inline constexpr char kSoftmax[] = "softmax_t";
inline constexpr char kGemm[] = "gemm_t";
// A mechanism that would open a tag, and a kernel family with a comma, quote and pipe.
inline constexpr char kHostileMechanism[] = "<script>alert(1)</script>";
inline constexpr char kHostileFamily[] = "families/v\"e,c|x.cu";

struct Ids {
  std::string run1, run2, run3, seal;
};

inline OperatorSpec Softmax() {
  OperatorSpec op;
  op.name = kSoftmax;
  op.category = "softmax";
  op.params = {"N"};
  op.configs = {{"small", {{"N", 1024}}}, {"large", {{"N", 65536}}}};
  TensorSpec x;
  x.name = "x";
  x.dtype = DType::f32;
  op.tensors = {x};
  op.flops = "5*N";
  op.bytes = "8*N";
  return op;
}

inline AttemptMeasurement Measure(const std::string& config, double cand, double inc, double noise, double sol) {
  AttemptMeasurement m;
  m.config = config;
  m.correct = true;
  m.candidate_us = cand;
  m.incumbent_us = inc;
  m.rel_noise = noise;
  m.speedup = inc / cand;
  m.sol_pct = sol;
  return m;
}

inline bool Attempt(Store& store, const std::string& run, int iteration, const std::string& op, Outcome outcome,
                    std::vector<AttemptMeasurement> ms, std::string* err) {
  CandidateRecord c;
  c.hash = op + "-cand-" + run.substr(0, 6) + "-" + std::to_string(iteration);
  c.operator_name = op;
  c.source = "// kernel " + std::to_string(iteration);
  c.family = kHostileFamily;
  c.mechanisms = {"vector_16B"};
  bool inserted = false;
  if (!store.PutCandidate(c, &inserted, err)) return false;
  AttemptRecord a;
  a.run_id = run;
  a.iteration = iteration;
  a.candidate_hash = c.hash;
  a.outcome = outcome;
  a.measurements = std::move(ms);
  return store.AddAttempt(&a, err);
}

// Runs start a day apart: the store orders them by their start, to the second.
inline bool Run(Store& store, const std::string& op, const std::string& incumbent, const std::string& agent,
                const std::string& created_at, std::string* id, std::string* err) {
  RunRecord r;
  r.created_at = created_at;
  r.operator_name = op;
  r.arch = "sm90";
  r.device = kDevice;
  r.agent = agent;
  r.incumbent = incumbent;
  if (!store.AddRun(&r, err)) return false;
  *id = r.id;
  return true;
}

inline bool Evidence(Store& store, const std::string& mechanism, const std::string& source, double speedup,
                     std::string* err) {
  EvidenceRecord e;
  e.kind = "comparison";
  e.source = source;
  e.operator_name = kSoftmax;
  e.speedup = speedup;
  e.noise = 0.01;
  e.supports = speedup >= 1;
  return store.AddEvidence({"sm90", "softmax", "large", mechanism, mechanism + "=on"}, e, nullptr, err);
}

// The whole store at `path`.
inline bool MakeStore(const std::string& path, Ids* ids, std::string* err) {
  Store store;
  if (!store.Open(path, err)) return false;
  DeviceRecord dev;
  dev.name = kDevice;
  dev.arch = "sm90";
  dev.peaks.dram_gbps = 4800;
  dev.peaks.tf32_tflops = 494;
  dev.peaks.bf16_tflops = 989;
  dev.peaks.launch_floor_us = 2.5;
  dev.calibrated = true;
  if (!store.UpsertDevice(dev, err)) return false;

  // Run 1: softmax against the expert reference; attempts 1, 2 and 4 timed, 3 did not compile.
  if (!Run(store, kSoftmax, "reference", "builtin", "2026-03-01T10:00:00Z", &ids->run1, err)) return false;
  if (!Attempt(store, ids->run1, 0, kSoftmax, Outcome::faster,
               {Measure("small", 8, 10, 0.02, 35), Measure("large", 40, 50, 0.01, 60)}, err) ||
      !Attempt(store, ids->run1, 1, kSoftmax, Outcome::slower,
               {Measure("small", 12, 10, 0.02, 23), Measure("large", 55, 50, 0.01, 44)}, err) ||
      !Attempt(store, ids->run1, 2, kSoftmax, Outcome::compile_error, {}, err) ||
      !Attempt(store, ids->run1, 3, kSoftmax, Outcome::faster,
               {Measure("small", 7, 10, 0.03, 40), Measure("large", 38, 50, 0.01, 63)}, err))
    return false;
  SealRecord seal;
  seal.id = "5ea1000000000000000000000000000000000000000000000000000000000001";
  seal.operator_name = kSoftmax;
  seal.arch = "sm90";
  seal.candidate_hash = std::string(kSoftmax) + "-cand-" + ids->run1.substr(0, 6) + "-3";
  seal.params_json = R"({"VEC":4})";
  seal.run_id = ids->run1;
  seal.device = kDevice;
  seal.config_us = {{"small", 7.1}, {"large", 38.5}};
  seal.geomean_speedup = 1.35;
  seal.created_at = "2026-03-01T12:00:00Z";
  nlohmann::json meta = {
      {"family", kHostileFamily},
      {"mechanisms", {"vector_16B", kHostileMechanism}},
      {"configs",
       {{{"config", "small"}, {"median_us", 7.1}, {"rel_noise", 0.015}, {"incumbent_us", 10.0}, {"sol_pct", 39.5}},
        {{"config", "large"}, {"median_us", 38.5}, {"rel_noise", 0.01}, {"incumbent_us", 50.0}, {"sol_pct", 62.0}}}}};
  seal.metadata_json = meta.dump();
  if (!store.AddSeal(seal, err)) return false;
  ids->seal = seal.id;
  if (!store.FinishRun(ids->run1, "finished", nlohmann::json{{"seal", seal.id}, {"seal_reason", "sealed"}}.dump(), err))
    return false;

  // Run 2: softmax against the seal, an LLM agent that spent money; nothing beat the seal.
  if (!Run(store, kSoftmax, seal.id, "llm", "2026-03-02T10:00:00Z", &ids->run2, err)) return false;
  if (!Attempt(store, ids->run2, 0, kSoftmax, Outcome::slower,
               {Measure("small", 7.5, 7.1, 0.02, 37), Measure("large", 39, 38.5, 0.01, 62)}, err))
    return false;
  ExchangeRecord ex;
  ex.run_id = ids->run2;
  ex.provider = "openai";
  ex.model = "m";
  ex.prompt_tokens = 1000;
  ex.completion_tokens = 200;
  ex.cost_usd = 0.25;
  if (!store.AddExchange(&ex, err)) return false;
  if (!store.FinishRun(ids->run2, "finished",
                       nlohmann::json{{"seal", ""},
                                      {"seal_reason",
                                       "not sealed: no candidate beat the incumbent on every config (best geomean "
                                       "0.980x); per config: small: attempt 1: 0.947x"}}
                           .dump(),
                       err))
    return false;

  // Run 3: gemm against the expert, one config timed, nothing sealed.
  if (!Run(store, kGemm, "reference", "builtin", "2026-03-03T10:00:00Z", &ids->run3, err)) return false;
  AttemptMeasurement wrong = Measure("1024^3", 1, 120, 0.01, 900);  // impossible: judged wrong, never counted
  wrong.correct = true;
  if (!Attempt(store, ids->run3, 0, kGemm, Outcome::faster, {Measure("1024^3", 100, 120, 0.02, 70)}, err) ||
      !Attempt(store, ids->run3, 1, kGemm, Outcome::wrong, {wrong}, err))
    return false;
  if (!store.FinishRun(ids->run3, "finished",
                       nlohmann::json{{"seal", ""}, {"seal_reason", "not sealed: --no-seal"}}.dump(), err))
    return false;

  // The nightly history: two checks of the seal, the newest measurements of the expert, and a row
  // about the whole seal.
  std::vector<SealCheckRecord> rows;
  for (const auto& [day, small, large] : {std::tuple<const char*, double, double>{"2026-03-05T02:00:00Z", 7.2, 38.0},
                                          {"2026-03-06T02:00:00Z", 7.3, 38.2}}) {
    for (const auto& [config, now, expert] :
         {std::tuple<std::string, double, double>{"small", small, 10.1}, {"large", large, 50.2}}) {
      SealCheckRecord r;
      r.check_id = std::string("check-") + day;
      r.seal_id = seal.id;
      r.operator_name = kSoftmax;
      r.arch = "sm90";
      r.device = kDevice;
      r.config = config;
      r.result = "faster";
      r.now_us = now;
      r.expert_us = expert;
      r.sealed_us = seal.config_us[config];
      r.speedup = expert / now;
      r.noise = 0.02;
      r.checked_at = day;
      rows.push_back(r);
    }
  }
  SealCheckRecord whole;
  whole.check_id = "check-3";
  whole.seal_id = seal.id;
  whole.operator_name = kSoftmax;
  whole.arch = "sm90";
  whole.result = "skipped";
  whole.message = "another driver";
  whole.checked_at = "2026-03-07T02:00:00Z";
  rows.push_back(whole);
  if (!store.AddSealChecks(rows, err)) return false;

  // Knowledge: a validated decision from run 1, a refuted one from run 2, and one that names no run.
  return Evidence(store, "vec", "comparison in run " + ids->run1 + " on softmax_t [small]: vec=on vs vec=off", 1.2,
                  err) &&
         Evidence(store, "unroll", "ablation in run " + ids->run2, 0.8, err) &&
         Evidence(store, "shuffle", "comparison in run elsewhere on softmax_t [large]: shuffle=on vs off", 1.1, err);
}

// The operator specs a CLI would load: softmax only (gemm's folder is "gone").
inline std::map<std::string, OperatorSpec> Specs() { return {{kSoftmax, Softmax()}}; }

}  // namespace forgek::report_fixture
