// The fixture of the seal tests: a fresh store, the shipped softmax_fp32 operator, and seals of
// candidates of its seed (params THREADS=256, the seal's kernel in a scripted evaluator).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "forgek/core/operator_spec.h"
#include "forgek/core/params.h"
#include "forgek/knowledge/store.h"
#include "test_util.h"

namespace forgek {

class SoftmaxSealFixture : public ::testing::Test {
 protected:
  static std::string OperatorDir() { return SourceDir() + "/operators/softmax_fp32"; }
  static std::string SeedSource() { return ReadFile(OperatorDir() + "/seed.cu"); }

  void SetUp() override {
    std::string err;
    ASSERT_TRUE(store_.Open(tmp_.file("store.db"), &err)) << err;
    Diagnostics diags;
    ASSERT_TRUE(LoadOperator(OperatorDir(), &op_, &diags)) << FormatDiagnostics(diags);
  }

  // Stores candidate `hash` of softmax_fp32 with `source` and params_.
  CandidateRecord AddCandidate(const std::string& hash, const std::string& source) {
    CandidateRecord c;
    c.hash = hash;
    c.operator_name = op_.name;
    c.source = source;
    c.params_json = ParamsJson(params_);
    bool inserted = false;
    std::string err;
    EXPECT_TRUE(store_.PutCandidate(c, &inserted, &err)) << err;
    return c;
  }

  // A seal record of candidate `candidate_hash` on sm90, timed on an H200, every config `config_us`
  // (not yet in the store).
  SealRecord NewSeal(const std::string& id, const std::string& candidate_hash, double config_us = 9) const {
    SealRecord s;
    s.id = id;
    s.operator_name = op_.name;
    s.arch = "sm90";
    s.candidate_hash = candidate_hash;
    s.params_json = ParamsJson(params_);
    s.toolchain = "nvrtc 13.0";
    s.driver = "580.1";
    s.device = "NVIDIA H200";
    for (const ConfigSpec& c : op_.configs) s.config_us[c.name] = config_us;
    s.geomean_speedup = 1.1;
    s.created_at = NowIso8601();
    return s;
  }

  SealRecord StoreSeal(const SealRecord& s) {
    std::string err;
    EXPECT_TRUE(store_.AddSeal(s, &err)) << err;
    return s;
  }

  TempDir tmp_;
  Store store_;
  OperatorSpec op_;
  ParamAssignment params_{{"THREADS", 256}};
};

}  // namespace forgek
