// Preparing the incumbent and the expert reference of a run.
#include "seal/incumbent.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "forgek/hash.h"
#include "forgek/params.h"
#include "forgek/store.h"
#include "core/json_parse.h"

namespace forgek {

bool CompileKernel(Compiler& compiler, const std::string& arch, const Candidate& c, const ParamAssignment& params,
                   const std::string& label, KernelUnderTest* out, CompileResult* result, std::string* feedback) {
  CompileRequest req;
  req.name = c.path.empty() ? "candidate.cu" : std::filesystem::path(c.path).filename().string();
  req.source = c.source;
  req.arch = arch;
  req.options = ParamDefines(params);
  *result = compiler.CompileNow(req);
  if (!result->ok) {
    *feedback = result->Summary();
    return false;
  }
  out->label = label;
  out->library.clear();
  out->cubin = result->cubin;
  out->manifest = c.manifest;
  out->params = params;
  return true;
}

bool PrepareExpertReference(const OperatorSpec& op, const std::string& arch, Compiler& compiler, Incumbent* out,
                            std::string* err) {
  *out = Incumbent{};
  if (!op.reference.library.empty()) {
    out->kernel.label = "reference";
    out->kernel.library = op.reference.library;
    out->label = "reference (" + op.reference.library + ")";
    return true;
  }
  std::string path = (std::filesystem::path(op.dir) / op.reference.kernel).string();
  Diagnostics diags;
  if (!LoadCandidateFile(path, &out->source, &diags)) {
    *err = "expert reference of " + op.name + ": " + FormatDiagnostics(diags);
    return false;
  }
  ParamAssignment params;
  for (const ParamSpec& p : out->source.manifest.params) params[p.name] = p.values.front();
  CompileResult result;
  std::string feedback;
  if (!CompileKernel(compiler, arch, out->source, params, "reference", &out->kernel, &result, &feedback)) {
    *err = "expert reference " + path + " does not compile: " + feedback;
    return false;
  }
  out->has_source = true;
  out->label = "reference (" + op.reference.kernel + ")";
  return true;
}

bool PrepareGolden(const OperatorSpec& op, const std::string& arch, Compiler& compiler, KernelUnderTest* out,
                   std::string* err) {
  std::string path = (std::filesystem::path(op.dir) / op.golden).string();
  Candidate golden;
  Diagnostics diags;
  if (!LoadCandidateFile(path, &golden, &diags)) {
    *err = "golden of " + op.name + ": " + FormatDiagnostics(diags);
    return false;
  }
  ParamAssignment params;
  for (const ParamSpec& p : golden.manifest.params) params[p.name] = p.values.front();
  CompileResult result;
  std::string feedback;
  if (!CompileKernel(compiler, arch, golden, params, "golden", out, &result, &feedback)) {
    *err = "golden " + path + " does not compile: " + feedback;
    return false;
  }
  return true;
}

bool LoadDispatchKernels(const SealRecord& seal, const std::string& arch, Store& store, Compiler& compiler,
                         std::map<std::string, DispatchKernel>* per_config, std::set<std::string>* reference_configs,
                         std::string* err) {
  per_config->clear();
  reference_configs->clear();
  nlohmann::json meta = ParseJsonLenient(seal.metadata_json.empty() ? "{}" : seal.metadata_json);
  if (!meta.is_object() || !meta.contains("dispatch")) return true;
  const std::string where = "seal " + seal.id + " metadata dispatch";
  const nlohmann::json& d = meta["dispatch"];
  if (!d.is_object() || !d.contains("kernels") || !d["kernels"].is_array() || !d.contains("table") ||
      !d["table"].is_array()) {
    *err = where + ": expected an object with arrays \"kernels\" and \"table\"";
    return false;
  }
  const nlohmann::json& kernels = d["kernels"];
  std::vector<DispatchKernel> compiled(kernels.size());
  std::vector<bool> is_reference(kernels.size(), false);
  for (size_t i = 0; i < kernels.size(); ++i) {
    const nlohmann::json& k = kernels[i];
    const std::string at = where + ".kernels[" + std::to_string(i) + "]";
    if (!k.is_object()) {
      *err = at + ": not an object";
      return false;
    }
    if (k.contains("reference")) {
      is_reference[i] = true;
      continue;
    }
    if (!k.contains("candidate") || !k["candidate"].is_string() || !k.contains("params") || !k["params"].is_object()) {
      *err = at + ": needs \"candidate\" (a hash) and \"params\" (an object), or \"reference\"";
      return false;
    }
    DispatchKernel& dk = compiled[i];
    dk.candidate_hash = k["candidate"].get<std::string>();
    dk.params_json = k["params"].dump();
    dk.cubin_sha256 = k.value("cubin_sha256", "");
    dk.family = k.value("family", "");
    CandidateRecord cand;
    bool have = false;
    if (!store.GetCandidate(dk.candidate_hash, &cand, &have, err)) return false;
    if (!have) {
      *err = at + ": candidate " + dk.candidate_hash + " is not in the store";
      return false;
    }
    Candidate source;
    Diagnostics diags;
    if (!ParseCandidate("seal-" + seal.id.substr(0, 12) + "-" + std::to_string(i) + ".cu", cand.source, &source,
                        &diags)) {
      *err = at + ": stored source no longer parses: " + FormatDiagnostics(diags);
      return false;
    }
    ParamAssignment params;
    if (!ParseParamsJson(dk.params_json, &params, err)) return false;
    CompileResult result;
    std::string feedback;
    if (!CompileKernel(compiler, arch, source, params,
                       "seal " + seal.id.substr(0, 12) + " kernel " + std::to_string(i), &dk.kernel, &result,
                       &feedback)) {
      *err = at + " no longer compiles with this toolchain: " + feedback;
      return false;
    }
  }
  for (size_t i = 0; i < d["table"].size(); ++i) {
    const nlohmann::json& row = d["table"][i];
    const std::string at = where + ".table[" + std::to_string(i) + "]";
    if (!row.is_object() || !row.contains("config") || !row["config"].is_string() || !row.contains("kernel") ||
        !row["kernel"].is_number_unsigned() || row["kernel"].get<size_t>() >= kernels.size()) {
      *err = at + ": needs \"config\" (a name) and \"kernel\" (an index into kernels)";
      return false;
    }
    size_t k = row["kernel"].get<size_t>();
    std::string config = row["config"].get<std::string>();
    if (is_reference[k])
      reference_configs->insert(config);
    else
      (*per_config)[config] = compiled[k];
  }
  return true;
}

bool PickIncumbent(const OperatorSpec& op, const std::string& arch, Store* store, Compiler& compiler,
                   Incumbent* out, std::string* err) {
  std::vector<std::string> skipped;
  if (store) {
    // The latest seal first (the newest leaf of the lineage), then the others, newest first.
    SealRecord latest;
    bool found = false;
    std::vector<SealRecord> seals;
    if (!store->LatestSeal(op.name, arch, &latest, &found, err)) return false;
    if (found && !store->ListSeals(op.name, arch, &seals, err)) return false;
    seals.erase(std::remove_if(seals.begin(), seals.end(), [&](const SealRecord& s) { return s.id == latest.id; }),
                seals.end());
    if (found) seals.insert(seals.begin(), latest);
    for (const SealRecord& seal : seals) {
      // A seal whose candidate the store lacks (an import from elsewhere) cannot be rebuilt: the
      // run goes on with the next seal, saying so, rather than failing every run of the operator.
      CandidateRecord cand;
      bool have = false;
      if (!store->GetCandidate(seal.candidate_hash, &cand, &have, err)) return false;
      if (!have) {
        skipped.push_back("seal " + seal.id + " skipped: it names candidate " + seal.candidate_hash +
                          " which the store does not hold (remove it with `forgek knowledge forget --seal " +
                          seal.id + "`)");
        continue;
      }
      Incumbent inc;
      Diagnostics diags;
      if (!ParseCandidate("seal-" + seal.id.substr(0, 12) + ".cu", cand.source, &inc.source, &diags)) {
        *err = "seal " + seal.id + ": stored source no longer parses: " + FormatDiagnostics(diags);
        return false;
      }
      ParamAssignment params;
      if (!ParseParamsJson(seal.params_json, &params, err)) return false;
      CompileResult result;
      std::string feedback;
      if (!CompileKernel(compiler, arch, inc.source, params, "seal " + seal.id.substr(0, 12), &inc.kernel, &result,
                         &feedback)) {
        *err = "seal " + seal.id + " no longer compiles with this toolchain: " + feedback;
        return false;
      }
      if (!seal.cubin_sha256.empty() && Sha256Hex(result.cubin) != seal.cubin_sha256)
        spdlog::warn("seal {}: the recompiled cubin differs from the sealed one (toolchain changed since {})",
                     seal.id.substr(0, 12), seal.toolchain);
      if (!LoadDispatchKernels(seal, arch, *store, compiler, &inc.per_config, &inc.reference_configs, err))
        return false;
      inc.has_source = true;
      inc.candidate_hash = seal.candidate_hash;
      inc.params_json = seal.params_json;
      inc.cubin_sha256 = seal.cubin_sha256;
      inc.seal_id = seal.id;
      inc.label = "seal " + seal.id.substr(0, 12);
      if (!inc.per_config.empty() || !inc.reference_configs.empty()) inc.label += " (dispatch)";
      inc.skipped_seals = std::move(skipped);
      *out = std::move(inc);
      return true;
    }
  }
  if (!PrepareExpertReference(op, arch, compiler, out, err)) return false;
  out->skipped_seals = std::move(skipped);
  return true;
}

}  // namespace forgek
