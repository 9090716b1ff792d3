// Preparing the incumbent and the expert reference of a run.
#include "seal/incumbent.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "forgek/hash.h"
#include "forgek/params.h"
#include "forgek/store.h"

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

bool PickIncumbent(const OperatorSpec& op, const std::string& arch, Store* store, Compiler& compiler,
                   Incumbent* out, std::string* err) {
  if (store) {
    SealRecord seal;
    bool found = false;
    if (!store->LatestSeal(op.name, arch, &seal, &found, err)) return false;
    if (found) {
      CandidateRecord cand;
      bool have = false;
      if (!store->GetCandidate(seal.candidate_hash, &cand, &have, err)) return false;
      if (!have) {
        *err = "seal " + seal.id + " names candidate " + seal.candidate_hash + " which the store does not hold";
        return false;
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
      inc.has_source = true;
      inc.seal_id = seal.id;
      inc.label = "seal " + seal.id.substr(0, 12);
      *out = std::move(inc);
      return true;
    }
  }
  return PrepareExpertReference(op, arch, compiler, out, err);
}

}  // namespace forgek
