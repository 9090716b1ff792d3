// Loading a seal for its C export: every kernel it can serve, its sealed cubin, a dispatch seal's table.
#include <algorithm>
#include <cctype>
#include <set>

#include <nlohmann/json.hpp>

#include "forgek/core/device_library.h"
#include "forgek/core/hash.h"
#include "forgek/core/json_parse.h"
#include "forgek/core/params.h"
#include "forgek/seal/incumbent.h"
#include "forgek/seal/seal.h"
#include "c_seal.h"
#include "c_text.h"

namespace forgek {
namespace {

// Where one kernel of the seal lies in the store.
struct SealedKernel {
  std::string what;  // how errors name it: "seal ID", "seal ID metadata dispatch.kernels[2]"
  std::string candidate_hash, params_json, cubin_sha256;
};

// Adds kernel `k` with `bytes` to the export, its cubin shared with any kernel of the same bytes.
void AddKernel(CSeal* s, CKernel k, const std::string& bytes) {
  const std::string sha = Sha256Hex(bytes);
  auto it = std::find(s->cubin_shas.begin(), s->cubin_shas.end(), sha);
  if (it == s->cubin_shas.end()) {
    s->cubin_shas.push_back(sha);
    s->cubins.push_back(bytes);
    it = s->cubin_shas.end() - 1;
  }
  k.cubin = static_cast<size_t>(it - s->cubin_shas.begin());
  s->kernels.push_back(std::move(k));
}

// Adds kernel `k` (its entry and label set) of the seal to the export, as `from` names it: its stored
// candidate, checked against the operator, and its sealed cubin (the store's; else rebuilt, which must
// hash to the sealed one unless `allow_rebuilt`, as ExportSeal requires).
bool LoadKernel(Store& store, Compiler& compiler, bool allow_rebuilt, const SealedKernel& from, CKernel k, CSeal* s,
                std::string* err) {
  const SealRecord& seal = *s->seal;
  const std::string& what = from.what;
  CandidateRecord record;
  bool found = false;
  if (!store.GetCandidate(from.candidate_hash, &record, &found, err)) return false;
  if (!found) {
    *err = what + " names candidate " + from.candidate_hash + " which the store does not hold";
    return false;
  }
  Diagnostics diags;
  if (!ParseCandidate("kernel.cu", record.source, &k.candidate, &diags)) {
    *err = what + ": the sealed source does not parse: " + FormatDiagnostics(diags);
    return false;
  }
  if (!ValidateCandidate(k.candidate, *s->op, &diags)) {
    *err = what + ": its manifest does not fit operator " + s->op->name + " as it is now: " + FormatDiagnostics(diags);
    return false;
  }
  std::string why;
  if (!ParseParamsJson(from.params_json, &k.params, &why)) {
    *err = what + ": params: " + why;
    return false;
  }
  k.candidate_hash = from.candidate_hash;
  const std::string& sealed_sha = from.cubin_sha256;
  std::string cubin;
  bool stored = false;
  if (!sealed_sha.empty() && !store.GetCubin(sealed_sha, &cubin, &stored, nullptr, err)) return false;
  if (!stored) {
    CompileResult compiled = compiler.CompileNow(
        {"kernel.cu", ExpandedSource(record.source), seal.arch, ParamDefines(k.params)});
    if (!compiled.ok) {
      *err = what + ": the store keeps no cubin of it and its source no longer compiles: " + compiled.Summary();
      return false;
    }
    if (!sealed_sha.empty() && Sha256Hex(compiled.cubin) != sealed_sha && !allow_rebuilt) {
      *err = what + ": the store keeps no cubin of it and the rebuilt one (nvrtc " + Compiler::NvrtcVersion() +
             ") differs from the sealed one (" + seal.toolchain + "); pass --allow-rebuilt to export it anyway";
      return false;
    }
    if (!sealed_sha.empty()) KeepRebuiltCubin(store, sealed_sha, compiled.cubin, what);
    cubin = std::move(compiled.cubin);
    s->rebuilt = true;
  }
  AddKernel(s, std::move(k), cubin);
  return true;
}

// The seal's own kernel, as SealRecord names it.
SealedKernel OwnKernel(const SealRecord& seal) {
  return {"seal " + seal.id, seal.candidate_hash, seal.params_json, seal.cubin_sha256};
}

// A dispatch seal's table (metadata.dispatch, docs/seal-format.md) into the export: each kernel
// entry loaded, each row's config given its values, the fallback (when the table names none: the
// seal's own kernel, as ServeOutsideTable serves it).
bool LoadDispatch(Store& store, Compiler& compiler, const nlohmann::json& d, bool allow_rebuilt, CSeal* s,
                  std::string* err) {
  const SealRecord& seal = *s->seal;
  const std::string where = "seal " + seal.id + " metadata dispatch";
  if (!d.is_object() || !d.contains("kernels") || !d["kernels"].is_array() || !d.contains("table") ||
      !d["table"].is_array()) {
    *err = where + ": expected an object with arrays \"kernels\" and \"table\"";
    return false;
  }
  const nlohmann::json& entries = d["kernels"];
  std::vector<int> kernel_of(entries.size(), -1);
  std::vector<std::string> reference_of(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const nlohmann::json& e = entries[i];
    const std::string at = where + ".kernels[" + std::to_string(i) + "]";
    if (e.is_object() && e.contains("reference")) {
      reference_of[i] = e["reference"].is_string() ? e["reference"].get<std::string>() : "the expert reference";
      s->reference = reference_of[i];
      continue;
    }
    if (!e.is_object() || !e.contains("candidate") || !e["candidate"].is_string() || !e.contains("params") ||
        !e["params"].is_object()) {
      *err = at + ": needs \"candidate\" (a hash) and \"params\" (an object), or \"reference\"";
      return false;
    }
    auto text = [&](const char* field) {
      auto it = e.find(field);
      return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    CKernel k;
    k.entry = static_cast<int>(i);
    k.label = text("label").empty() ? "kernel " + std::to_string(i) : text("label");
    kernel_of[i] = static_cast<int>(s->kernels.size());
    if (!LoadKernel(store, compiler, allow_rebuilt,
                    {at, e["candidate"].get<std::string>(), e["params"].dump(), text("cubin_sha256")}, std::move(k), s,
                    err))
      return false;
  }
  for (size_t i = 0; i < d["table"].size(); ++i) {
    const nlohmann::json& row = d["table"][i];
    const std::string at = where + ".table[" + std::to_string(i) + "]";
    if (!row.is_object() || !row.contains("config") || !row["config"].is_string() || !row.contains("kernel") ||
        !row["kernel"].is_number_unsigned() || row["kernel"].get<size_t>() >= entries.size()) {
      *err = at + ": needs \"config\" (a name) and \"kernel\" (an index into kernels)";
      return false;
    }
    CRow r;
    r.config = row["config"].get<std::string>();
    r.why = row.contains("why") && row["why"].is_string() ? row["why"].get<std::string>() : "";
    const ConfigSpec* config = s->op->FindConfig(r.config);
    if (!config) {
      *err = at + ".config: '" + r.config + "' is not a config of operator " + s->op->name +
             " as it is now; a C export needs its values";
      return false;
    }
    r.values = config->values;
    const size_t entry = row["kernel"].get<size_t>();
    r.kernel = kernel_of[entry];
    r.reference = reference_of[entry];
    s->rows.push_back(std::move(r));
  }
  if (d.contains("fallback")) {
    const nlohmann::json& f = d["fallback"];
    if (!f.is_number_unsigned() || f.get<size_t>() >= entries.size()) {
      *err = where + ".fallback: needs an index into kernels";
      return false;
    }
    s->fallback = kernel_of[f.get<size_t>()];
    if (s->fallback < 0) s->reference = reference_of[f.get<size_t>()];
    return true;
  }
  // A table written before fallbacks were recorded: the seal's own kernel is the fallback.
  CKernel own;
  own.entry = static_cast<int>(entries.size());
  own.label = "seal " + seal.id.substr(0, 12) + " (its own kernel: the table names no fallback)";
  s->fallback = static_cast<int>(s->kernels.size());
  return LoadKernel(store, compiler, allow_rebuilt, OwnKernel(seal), std::move(own), s, err);
}

bool IsIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// Every name the generated functions take (tensors, scalars, sizes) must be a distinct C identifier.
bool CheckNames(const OperatorSpec& op, std::string* err) {
  std::set<std::string> seen;
  auto add = [&](const std::string& what, const std::string& name) {
    if (!IsIdentifier(name)) {
      *err = "operator " + op.name + ": " + what + " '" + name + "' is not a C identifier";
      return false;
    }
    if (!seen.insert(CParamName(name)).second) {
      *err = "operator " + op.name + ": " + what + " '" + name + "' has the C name of another parameter";
      return false;
    }
    return true;
  };
  for (const TensorSpec& t : op.tensors)
    if (!add("tensor", t.name)) return false;
  for (const ScalarSpec& sc : op.scalars)
    if (!add("scalar", sc.name)) return false;
  for (const std::string& p : op.params)
    if (!add("param", p)) return false;
  if (op.params.empty()) {
    *err = "operator " + op.name + " has no params: nothing to plan";
    return false;
  }
  return true;
}

std::string Upper(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

bool LoadCSeal(Store& store, Compiler& compiler, const SealRecord& seal, const OperatorSpec& op, bool allow_rebuilt,
               CSeal* s, std::string* err) {
  s->seal = &seal;
  s->op = &op;
  s->prefix = CExportName(op.name);
  s->upper = Upper(s->prefix);
  s->reference = op.reference.library.empty() ? op.reference.kernel : op.reference.library;
  if (!CheckNames(op, err)) return false;
  nlohmann::json metadata = ParseJsonLenient(seal.metadata_json.empty() ? "{}" : seal.metadata_json);
  s->dispatch = metadata.is_object() && metadata.contains("dispatch");
  if (s->dispatch) return LoadDispatch(store, compiler, metadata["dispatch"], allow_rebuilt, s, err);
  CKernel k;
  k.label = "seal " + seal.id.substr(0, 12);
  return LoadKernel(store, compiler, allow_rebuilt, OwnKernel(seal), std::move(k), s, err);
}

}  // namespace forgek
