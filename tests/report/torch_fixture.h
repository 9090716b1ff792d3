// A store whose seals scripts/compare_torch.py compared in tests/report/compare_torch_results.json
// (the script's output for its own fixture): rmsnorm_bf16's newest seal is the one it compared (the
// file holds its 12-character id) and has a config the file lacks; gemm_bf16's newest seal is
// another one; histogram_u8 is in the file only.
#pragma once

#include <map>
#include <string>

#include "forgek/knowledge/store.h"
#include "test_util.h"

namespace forgek::torch_fixture {

inline constexpr char kRmsnorm[] = "rmsnorm_bf16";
inline constexpr char kGemm[] = "gemm_bf16";
// The seals the file names: rmsnorm's as its full id starts, gemm's is not in the store.
inline constexpr char kComparedRmsnormSeal[] = "5ea1c0ffee00";
inline constexpr char kComparedGemmSeal[] = "d15pa7c40000";

// tests/report/compare_torch_results.json: what `scripts/compare_torch.py --out` writes for
// tests/fixtures/compare_torch/results.json (compare_torch_test.fixture_report(), dumped).
inline std::string ResultsPath() { return SourceDir() + "/tests/report/compare_torch_results.json"; }

inline std::string RmsnormSeal() { return std::string(kComparedRmsnormSeal) + std::string(52, '0'); }
inline std::string GemmSeal() { return "9e3a" + std::string(60, '1'); }

inline bool Seal(Store& store, const std::string& id, const std::string& op, std::map<std::string, double> us,
                 std::string* err) {
  CandidateRecord c;
  c.hash = op + "-candidate";
  c.operator_name = op;
  c.source = "// kernel";
  c.family = "families/" + op + ".cu";
  bool inserted = false;
  if (!store.PutCandidate(c, &inserted, err)) return false;
  SealRecord s;
  s.id = id;
  s.operator_name = op;
  s.arch = "sm90";
  s.device = "NVIDIA H200";
  s.candidate_hash = c.hash;
  s.config_us = std::move(us);
  s.geomean_speedup = 1.2;
  s.created_at = "2026-11-29T12:00:00Z";
  return store.AddSeal(s, err);
}

inline bool MakeStore(const std::string& path, std::string* err) {
  Store store;
  return store.Open(path, err) &&
         Seal(store, RmsnormSeal(), kRmsnorm, {{"16384x4096", 81.5}, {"128x8192", 4.1}, {"1x4096", 2.0}}, err) &&
         Seal(store, GemmSeal(), kGemm, {{"4096^3", 900.0}, {"8192^3", 7000.0}}, err);
}

}  // namespace forgek::torch_fixture
