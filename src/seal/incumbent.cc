// Preparing the incumbent and the expert reference of a run.
#include "forgek/seal/incumbent.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "forgek/seal/outside_shapes.h"
#include "forgek/core/hash.h"
#include "forgek/core/params.h"
#include "forgek/knowledge/store.h"
#include "forgek/core/json_parse.h"
#include "forgek/core/torch_helper.h"

namespace forgek {

CompileRequest CandidateCompileRequest(const Candidate& c, const ParamAssignment& params, const std::string& arch) {
  CompileRequest req;
  req.name = c.path.empty() ? "candidate.cu" : std::filesystem::path(c.path).filename().string();
  req.source = c.source;
  req.arch = arch;
  req.options = ParamDefines(params);
  return req;
}

KernelUnderTest CandidateKernel(const std::string& label, std::string cubin, const Candidate& c,
                                const ParamAssignment& params) {
  KernelUnderTest k;
  k.label = label;
  k.cubin = std::move(cubin);
  k.manifest = c.manifest;
  k.params = params;
  return k;
}

bool CompileKernel(Compiler& compiler, const std::string& arch, const Candidate& c, const ParamAssignment& params,
                   const std::string& label, KernelUnderTest* out, CompileResult* result, std::string* feedback) {
  *result = compiler.CompileNow(CandidateCompileRequest(c, params, arch));
  if (!result->ok) {
    *feedback = result->Summary();
    return false;
  }
  *out = CandidateKernel(label, result->cubin, c, params);
  return true;
}

bool LoadSealedKernel(Store& store, Compiler& compiler, const std::string& arch, const Candidate& c,
                      const ParamAssignment& params, const std::string& sealed_sha, const std::string& sealed_toolchain,
                      const std::string& label, KernelUnderTest* out, std::string* feedback) {
  std::string bytes, err;
  bool found = false;
  if (!sealed_sha.empty() && !store.GetCubin(sealed_sha, &bytes, &found, nullptr, &err))
    spdlog::warn("{}: the store's cubin cannot be read ({}): compiling the sealed source", label, err);
  if (found) {
    *out = CandidateKernel(label, std::move(bytes), c, params);
    return true;
  }
  CompileResult result;
  if (!CompileKernel(compiler, arch, c, params, label, out, &result, feedback)) return false;
  if (!sealed_sha.empty() && !KeepRebuiltCubin(store, sealed_sha, result.cubin, label))
    spdlog::warn("{}: the store keeps no cubin of it and the rebuilt one (nvrtc {}) differs from the sealed one ({})",
                 label, Compiler::NvrtcVersion(), sealed_toolchain);
  return true;
}

bool KeepRebuiltCubin(Store& store, const std::string& sealed_sha, const std::string& cubin, const std::string& label) {
  if (Sha256Hex(cubin) != sealed_sha) return false;
  std::string err;
  if (!store.PutCubin(sealed_sha, cubin, "nvrtc " + Compiler::NvrtcVersion(), true, &err))
    spdlog::debug("{}: the rebuilt cubin is not kept: {}", label, err);
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
  if (!LoadReferenceKernel(op, &out->source, &diags)) {
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
  out->label = "reference (" + InstanceText(op.reference.kernel, op.reference.params) + ")";
  return true;
}

bool PrepareGolden(const OperatorSpec& op, const std::string& arch, Compiler& compiler, KernelUnderTest* out,
                   std::string* err) {
  if (IsTorchGolden(op.golden)) {
    // No kernel to compile: the worker's torch helper computes it. Without python3 and torch the
    // run stops here, before any GPU work.
    TorchHelperPaths paths;
    if (!CheckTorchGoldenRuns(op.name, op.golden, &paths, err)) return false;
    *out = KernelUnderTest{};
    out->label = "golden";
    out->torch_file = std::filesystem::absolute(std::filesystem::path(op.dir) / op.golden).string();
    return true;
  }
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

namespace {

// One kernel of a dispatch seal's table as its metadata names it, before it is looked up or compiled.
struct DispatchEntry {
  bool reference = false;
  std::string candidate_hash, params_json, cubin_sha256, family;
};

// A seal's dispatch table (metadata.dispatch, docs/seal-format.md), read but not yet loaded.
struct DispatchTable {
  bool present = false;  // the seal has a table
  std::vector<DispatchEntry> kernels;
  std::vector<std::pair<std::string, size_t>> rows;  // config -> index into kernels
  int fallback = -1;  // index into kernels; -1: none named (a table written before fallbacks were read)
};

std::string DispatchWhere(const SealRecord& seal) { return "seal " + seal.id + " metadata dispatch"; }

// False with `err` naming the entry when the table is not of the documented shape; a seal without
// one leaves `table` empty.
bool ReadDispatchTable(const SealRecord& seal, DispatchTable* table, std::string* err) {
  *table = DispatchTable{};
  nlohmann::json meta = ParseJsonLenient(seal.metadata_json.empty() ? "{}" : seal.metadata_json);
  if (!meta.is_object() || !meta.contains("dispatch")) return true;
  const std::string where = DispatchWhere(seal);
  const nlohmann::json& d = meta["dispatch"];
  table->present = true;
  if (!d.is_object() || !d.contains("kernels") || !d["kernels"].is_array() || !d.contains("table") ||
      !d["table"].is_array()) {
    *err = where + ": expected an object with arrays \"kernels\" and \"table\"";
    return false;
  }
  const nlohmann::json& kernels = d["kernels"];
  for (size_t i = 0; i < kernels.size(); ++i) {
    const nlohmann::json& k = kernels[i];
    const std::string at = where + ".kernels[" + std::to_string(i) + "]";
    if (!k.is_object()) {
      *err = at + ": not an object";
      return false;
    }
    DispatchEntry entry;
    if (k.contains("reference")) {
      entry.reference = true;
      table->kernels.push_back(entry);
      continue;
    }
    if (!k.contains("candidate") || !k["candidate"].is_string() || !k.contains("params") || !k["params"].is_object()) {
      *err = at + ": needs \"candidate\" (a hash) and \"params\" (an object), or \"reference\"";
      return false;
    }
    entry.candidate_hash = k["candidate"].get<std::string>();
    entry.params_json = k["params"].dump();
    // Optional text fields; json::value would throw on another type.
    auto text = [&](const char* field) {
      auto it = k.find(field);
      return it != k.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    entry.cubin_sha256 = text("cubin_sha256");
    entry.family = text("family");
    table->kernels.push_back(std::move(entry));
  }
  for (size_t i = 0; i < d["table"].size(); ++i) {
    const nlohmann::json& row = d["table"][i];
    const std::string at = where + ".table[" + std::to_string(i) + "]";
    if (!row.is_object() || !row.contains("config") || !row["config"].is_string() || !row.contains("kernel") ||
        !row["kernel"].is_number_unsigned() || row["kernel"].get<size_t>() >= kernels.size()) {
      *err = at + ": needs \"config\" (a name) and \"kernel\" (an index into kernels)";
      return false;
    }
    table->rows.emplace_back(row["config"].get<std::string>(), row["kernel"].get<size_t>());
  }
  if (d.contains("fallback")) {
    const nlohmann::json& f = d["fallback"];
    if (!f.is_number_unsigned() || f.get<size_t>() >= kernels.size()) {
      *err = where + ".fallback: needs an index into kernels";
      return false;
    }
    table->fallback = static_cast<int>(f.get<size_t>());
  }
  return true;
}

// The first kernel of `table` whose candidate the store does not hold: its index in *missing, or
// table.kernels.size() when the store holds them all.
bool FindMissingCandidate(const DispatchTable& table, Store& store, size_t* missing, std::string* err) {
  for (*missing = 0; *missing < table.kernels.size(); ++*missing) {
    const DispatchEntry& e = table.kernels[*missing];
    if (e.reference) continue;
    CandidateRecord cand;
    bool have = false;
    if (!store.GetCandidate(e.candidate_hash, &cand, &have, err)) return false;
    if (!have) return true;
  }
  return true;
}

// Compiles the kernels of a table whose candidates the store holds.
bool CompileDispatchTable(const SealRecord& seal, const DispatchTable& table, const std::string& arch, Store& store,
                          Compiler& compiler, Incumbent* inc, std::string* err) {
  inc->per_config.clear();
  inc->reference_configs.clear();
  inc->fallback.reset();
  inc->fallback_reference = false;
  inc->dispatch = table.present;
  std::vector<DispatchKernel> compiled(table.kernels.size());
  for (size_t i = 0; i < table.kernels.size(); ++i) {
    const DispatchEntry& e = table.kernels[i];
    if (e.reference) continue;
    const std::string at = DispatchWhere(seal) + ".kernels[" + std::to_string(i) + "]";
    DispatchKernel& dk = compiled[i];
    dk.candidate_hash = e.candidate_hash;
    dk.params_json = e.params_json;
    dk.cubin_sha256 = e.cubin_sha256;
    dk.family = e.family;
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
    std::string feedback;
    if (!LoadSealedKernel(store, compiler, arch, source, params, dk.cubin_sha256, seal.toolchain,
                          "seal " + seal.id.substr(0, 12) + " kernel " + std::to_string(i), &dk.kernel, &feedback)) {
      *err = at + " no longer compiles with this toolchain: " + feedback;
      return false;
    }
  }
  for (const auto& [config, k] : table.rows) {
    if (table.kernels[k].reference)
      inc->reference_configs.insert(config);
    else
      inc->per_config[config] = compiled[k];
  }
  if (table.fallback >= 0) {
    if (table.kernels[table.fallback].reference)
      inc->fallback_reference = true;
    else
      inc->fallback = compiled[table.fallback];
  }
  return true;
}

std::string ForgetHint(const SealRecord& seal) {
  return "(remove it with `forgek knowledge forget --seal " + seal.id + "`)";
}

}  // namespace

bool SealCubins(const SealRecord& seal, std::vector<std::string>* shas, std::string* err) {
  DispatchTable table;
  if (!ReadDispatchTable(seal, &table, err)) return false;
  shas->clear();
  if (!seal.cubin_sha256.empty()) shas->push_back(seal.cubin_sha256);
  for (const DispatchEntry& e : table.kernels)
    if (!e.reference && !e.cubin_sha256.empty()) shas->push_back(e.cubin_sha256);
  return true;
}

bool LoadDispatchKernels(const SealRecord& seal, const std::string& arch, Store& store, Compiler& compiler,
                         Incumbent* inc, std::string* err) {
  DispatchTable table;
  return ReadDispatchTable(seal, &table, err) && CompileDispatchTable(seal, table, arch, store, compiler, inc, err);
}

void ServeOutsideTable(const OperatorSpec& op, const KernelUnderTest& expert, int64_t num_sms, Incumbent* inc) {
  if (!inc->dispatch) return;
  for (const std::string& config : inc->reference_configs) inc->per_config[config].kernel = expert;
  for (const ConfigSpec& c : op.configs) {
    if (inc->per_config.count(c.name)) continue;
    const KernelUnderTest* fallback = inc->FallbackKernel();
    if (fallback && KernelAcceptsShape(op, *fallback, c.values, num_sms)) {
      DispatchKernel k = inc->fallback ? *inc->fallback : DispatchKernel{};
      if (!inc->fallback) {
        k.kernel = inc->kernel;
        k.candidate_hash = inc->candidate_hash;
        k.params_json = inc->params_json;
        k.cubin_sha256 = inc->cubin_sha256;
      }
      inc->per_config[c.name] = std::move(k);
    } else {
      inc->per_config[c.name].kernel = expert;
      inc->reference_configs.insert(c.name);
    }
  }
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
                          " which the store does not hold " + ForgetHint(seal));
        continue;
      }
      // The same holds for the kernels of its dispatch table, and for a table that cannot be read
      // (both can come from a store or an import written before imports checked them).
      DispatchTable table;
      std::string unreadable;
      if (!ReadDispatchTable(seal, &table, &unreadable)) {
        skipped.push_back("seal " + seal.id + " skipped: its dispatch table cannot be read (" + unreadable + ") " +
                          ForgetHint(seal));
        continue;
      }
      size_t missing = 0;
      if (!FindMissingCandidate(table, *store, &missing, err)) return false;
      if (missing < table.kernels.size()) {
        skipped.push_back("seal " + seal.id + " skipped: its dispatch table (kernels[" + std::to_string(missing) +
                          "]) names candidate " + table.kernels[missing].candidate_hash +
                          " which the store does not hold " + ForgetHint(seal));
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
      std::string feedback;
      if (!LoadSealedKernel(*store, compiler, arch, inc.source, params, seal.cubin_sha256, seal.toolchain,
                            "seal " + seal.id.substr(0, 12), &inc.kernel, &feedback)) {
        *err = "seal " + seal.id + " no longer compiles with this toolchain: " + feedback;
        return false;
      }
      if (!CompileDispatchTable(seal, table, arch, *store, compiler, &inc, err)) return false;
      inc.has_source = true;
      inc.candidate_hash = seal.candidate_hash;
      inc.params_json = seal.params_json;
      inc.cubin_sha256 = seal.cubin_sha256;
      inc.seal_id = seal.id;
      inc.label = "seal " + seal.id.substr(0, 12);
      if (inc.dispatch) inc.label += " (dispatch)";
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
