// The record of a new seal, built from the confirmation that sealed it (docs/seal-format.md).
#include <nlohmann/json.hpp>

#include "forgek/core/hash.h"
#include "forgek/core/params.h"
#include "forgek/seal/seal.h"
#include "forgek/core/json_parse.h"

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
    nlohmann::json row = {{"config", c.config},
                          {"median_us", c.candidate.median_us},
                          {"rel_noise", c.candidate.rel_noise},
                          {"incumbent_us", c.incumbent.median_us},
                          {"rel_l2", c.correctness.rel_l2},
                          {"max_abs", c.correctness.max_abs},
                          {"sol_pct", c.sol_pct}};
    auto k = origin.kernel_of_config.find(c.config);
    if (k != origin.kernel_of_config.end()) row["kernel"] = k->second;
    configs.push_back(std::move(row));
  }
  // The verdict's geomean: the same number the sealing rule judged.
  seal.geomean_speedup = verdict.comparison.speedup;
  nlohmann::json metadata = {{"family", origin.family},
                             {"mechanisms", origin.mechanisms},
                             {"rationale", origin.rationale},
                             {"incumbent", origin.incumbent_label},
                             {"verdict", verdict.reason},
                             {"configs", configs}};
  if (!origin.dispatch_json.empty()) metadata["dispatch"] = ParseJsonLenient(origin.dispatch_json);
  seal.metadata_json = metadata.dump();
  // A dispatch's table is part of what is sealed: two tables with the same primary kernel differ.
  seal.id = Sha256Hex(seal.operator_name + "\n" + seal.arch + "\n" + seal.candidate_hash + "\n" + seal.params_json +
                      "\n" + seal.cubin_sha256 + "\n" + seal.device + "\n" + seal.run_id + "\n" + NowIso8601() +
                      (origin.dispatch_json.empty() ? "" : "\n" + origin.dispatch_json));
  return seal;
}

}  // namespace forgek
