// The record of a new seal, built from the confirmation that sealed it (docs/seal-format.md).
#include <nlohmann/json.hpp>

#include "forgek/hash.h"
#include "forgek/params.h"
#include "forgek/seal.h"

namespace forgek {

SealRecord BuildSealRecord(const SealOrigin& origin, const EvalResult& confirmation, const SealVerdict& verdict) {
  SealRecord seal;
  seal.operator_name = origin.operator_name;
  seal.arch = origin.arch;
  seal.candidate_hash = origin.candidate_hash;
  seal.params_json = ParamsJson(origin.params);
  seal.parent = origin.parent;
  seal.run_id = origin.run_id;
  seal.cubin_sha256 = origin.cubin_sha256;
  seal.toolchain = origin.toolchain;
  seal.driver = origin.driver;
  seal.device = origin.device;
  nlohmann::json configs = nlohmann::json::array();
  for (const ConfigResult& c : confirmation.configs) {
    seal.config_us[c.config] = c.candidate.median_us;
    configs.push_back({{"config", c.config},
                       {"median_us", c.candidate.median_us},
                       {"rel_noise", c.candidate.rel_noise},
                       {"incumbent_us", c.incumbent.median_us},
                       {"rel_l2", c.correctness.rel_l2},
                       {"max_abs", c.correctness.max_abs},
                       {"sol_pct", c.sol_pct}});
  }
  // The verdict's geomean: the same number the sealing rule judged.
  seal.geomean_speedup = verdict.comparison.speedup;
  seal.metadata_json = nlohmann::json{{"family", origin.family},
                                      {"mechanisms", origin.mechanisms},
                                      {"rationale", origin.rationale},
                                      {"incumbent", origin.incumbent_label},
                                      {"verdict", verdict.reason},
                                      {"configs", configs}}
                           .dump();
  seal.id = Sha256Hex(seal.operator_name + "\n" + seal.arch + "\n" + seal.candidate_hash + "\n" + seal.params_json +
                      "\n" + seal.cubin_sha256 + "\n" + seal.device + "\n" + seal.run_id + "\n" + NowIso8601());
  return seal;
}

}  // namespace forgek
