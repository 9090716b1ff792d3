// Exporting a seal as a self-contained folder that a program can load with the CUDA driver API alone.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "forgek/core/atomic_file.h"
#include "forgek/core/json_parse.h"
#include "forgek/core/params.h"
#include "forgek/core/candidate.h"
#include "forgek/core/device_library.h"
#include "forgek/core/hash.h"
#include "forgek/seal/seal.h"
#include "forgek/seal/incumbent.h"
#include "export_folder.h"

namespace forgek {
namespace fs = std::filesystem;
namespace {

bool WriteText(const fs::path& path, const std::string& text, std::string* err) {
  return WriteFileAtomic(path.string(), text, err);
}

// Whether any launch of `m` depends on the device's SM count: a grid, block, cluster, shared memory,
// `when` or argument reads num_sms, directly or through a let.
bool ReadsNumSms(const CandidateManifest& m) {
  std::set<std::string> reading = {kNumSmsName};
  auto reads = [&reading](const std::string& text) {
    Diagnostic d;
    std::unique_ptr<Expr> e = Expr::Parse(text.rfind("i64:", 0) == 0 || text.rfind("f32:", 0) == 0 ? text.substr(4) : text, &d);
    if (!e) return false;
    for (const std::string& name : e->Names())
      if (reading.count(name)) return true;
    return false;
  };
  for (const auto& [name, text] : m.lets)
    if (reads(text)) reading.insert(name);
  for (const WorkspaceSpec& w : m.workspaces)
    if (reads(w.bytes)) return true;
  for (const TensorMapSpec& t : m.tensor_maps)
    for (const std::vector<std::string>* list : {&t.box, &t.shape})
      for (const std::string& text : *list)
        if (reads(text)) return true;
  for (const LaunchSpec& l : m.launches) {
    for (const std::vector<std::string>* list : {&l.grid, &l.block, &l.cluster, &l.args})
      for (const std::string& text : *list)
        if (reads(text)) return true;
    if (reads(l.smem) || (!l.when.empty() && reads(l.when))) return true;
  }
  return false;
}

// Every config's launches with every expression evaluated, plus the tensors a caller must allocate.
// A kernel of a dispatch seal serves only some configs (`every_config` false): those its manifest
// refuses (a constraint, a launch bound) go to "refused" with the reason, where a single-kernel seal
// must take every config and the export fails instead. The launches are for a device of `num_sms` SMs
// (no device is at hand at export): the file says so, and which kernels read the count.
bool LaunchJson(const OperatorSpec& op, const Candidate& cand, const ParamAssignment& params, bool every_config,
                int64_t num_sms, nlohmann::json* out, std::string* err) {
  nlohmann::json configs = nlohmann::json::array();
  nlohmann::json refused = nlohmann::json::array();
  for (const ConfigSpec& config : op.configs) {
    ResolvedCandidate rc;
    Diagnostics diags;
    if (!ResolveCandidate(cand.manifest, op, params, config.values, num_sms, &rc, &diags)) {
      if (!every_config) {
        refused.push_back({{"config", config.name}, {"values", config.values}, {"why", FormatDiagnostics(diags)}});
        continue;
      }
      *err = "config " + config.name + ": " + FormatDiagnostics(diags);
      return false;
    }
    nlohmann::json tensors = nlohmann::json::array();
    for (const TensorSpec& t : op.tensors) {
      std::vector<int64_t> shape;
      Diagnostic d;
      if (!op.TensorShape(t, config.values, &shape, &d)) {
        *err = "config " + config.name + ": " + d.str();
        return false;
      }
      tensors.push_back({{"name", t.name}, {"role", TensorRoleName(t.role)}, {"dtype", DTypeName(t.dtype)}, {"shape", shape}});
    }
    nlohmann::json workspaces = nlohmann::json::array();
    for (size_t i = 0; i < rc.workspaces.size(); ++i)
      workspaces.push_back({{"name", rc.workspaces[i].first},
                            {"bytes", rc.workspaces[i].second},
                            {"zero", i < rc.workspace_zero.size() && rc.workspace_zero[i]}});
    nlohmann::json maps = nlohmann::json::array();
    for (const ResolvedTensorMap& m : rc.tensor_maps)
      maps.push_back({{"name", m.name}, {"tensor", m.tensor}, {"shape", m.shape}, {"box", m.box},
                      {"swizzle", m.swizzle}, {"l2_promotion", m.l2_promotion}, {"oob_fill", m.oob_fill}});
    nlohmann::json launches = nlohmann::json::array();
    for (const ResolvedLaunch& l : rc.launches) {
      nlohmann::json args = nlohmann::json::array();
      for (const ResolvedArg& a : l.args) {
        nlohmann::json arg = {{"kind", ResolvedArgKindName(a.kind)}, {"name", a.name}};
        if (a.kind == ResolvedArg::Kind::i32 || a.kind == ResolvedArg::Kind::i64) arg["value"] = a.i;
        if (a.kind == ResolvedArg::Kind::f32) arg["value"] = a.f;
        args.push_back(arg);
      }
      launches.push_back({{"kernel", l.kernel},
                          {"grid", {l.grid[0], l.grid[1], l.grid[2]}},
                          {"block", {l.block[0], l.block[1], l.block[2]}},
                          {"cluster", {l.cluster[0], l.cluster[1], l.cluster[2]}},
                          {"dynamic_smem_bytes", l.smem},
                          {"args", args}});
    }
    nlohmann::json scalars = nlohmann::json::array();
    for (const ScalarSpec& s : op.scalars)
      scalars.push_back({{"name", s.name}, {"dtype", DTypeName(s.dtype)}, {"value", s.value}});
    configs.push_back({{"config", config.name},
                       {"values", config.values},
                       {"tensors", tensors},
                       {"scalars", scalars},
                       {"workspaces", workspaces},
                       {"tensor_maps", maps},
                       {"launches", launches}});
  }
  *out = {{"format", "forgek-seal-launch/1"}, {"operator", op.name}, {"params", params}, {"num_sms", num_sms},
          {"reads_num_sms", ReadsNumSms(cand.manifest)}, {"configs", configs}};
  if (!refused.empty()) (*out)["refused"] = refused;
  return true;
}

const char* kReadme = R"(# Sealed kernel

Produced by `forgek seal export`. Everything needed to run this kernel without forgek:

- `kernel.cubin` — load with `cuModuleLoadData`, get each kernel with `cuModuleGetFunction`.
- `launch.json` — per config: the tensors to allocate (dtype, row-major shape), workspaces,
  TMA tensor maps to encode with `cuTensorMapEncodeTiled` (shapes and boxes outermost first:
  reverse them for the driver API), and the launches in order with grid, block, cluster,
  dynamic shared memory and arguments. Raise `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`
  to the dynamic size for any launch that asks for dynamic shared memory (the default allowance
  is 48 KiB minus the kernel's static shared memory); pass the cluster with `cuLaunchKernelEx`.
- `kernel.cu` — the source (manifest comment at the top), compiled with the params in `seal.json`.
- `seal.json` — identity, lineage, toolchain, driver, GPU and the sealed per-config times.

The format is described in forgek's docs/seal-format.md.
)";

}  // namespace

namespace {

// One kernel of a seal in `folder`: kernel.cu, kernel.cubin, launch.json. The cubin is the store's
// sealed one when it keeps it (nothing is compiled); else it is rebuilt, and must hash to
// `sealed_sha` unless `allow_rebuilt` (a rebuild that matches is kept in the store, flagged, where
// the store takes writes). *sha gets the exported cubin's SHA-256, *rebuilt whether it was compiled.
// `every_config`: the kernel must take every config of the suite (LaunchJson).
bool ExportKernel(Store& store, const std::string& what, const std::string& candidate_hash,
                  const std::string& params_json, const std::string& sealed_sha, const std::string& toolchain,
                  const std::string& arch, const OperatorSpec& op, Compiler& compiler, bool allow_rebuilt,
                  bool every_config, const fs::path& folder, std::string* sha, bool* rebuilt, std::string* err) {
  CandidateRecord cand;
  bool found = false;
  if (!store.GetCandidate(candidate_hash, &cand, &found, err)) return false;
  if (!found) {
    *err = what + " names candidate " + candidate_hash + " which the store does not hold";
    return false;
  }
  Candidate parsed;
  Diagnostics diags;
  if (!ParseCandidate("kernel.cu", cand.source, &parsed, &diags)) {
    *err = what + ": sealed source does not parse: " + FormatDiagnostics(diags);
    return false;
  }
  ParamAssignment params;
  std::string why;
  if (!ParseParamsJson(params_json, &params, &why)) {
    *err = what + ": " + why;
    return false;
  }
  // kernel.cu stands alone: the device library code the seal was measured with is in it.
  const std::string source = ExpandedSource(cand.source);
  std::string cubin;
  bool stored = false;
  if (!sealed_sha.empty() && !store.GetCubin(sealed_sha, &cubin, &stored, nullptr, err)) return false;
  *rebuilt = !stored;
  if (stored) {
    *sha = sealed_sha;
  } else {
    CompileRequest req{"kernel.cu", source, arch, ParamDefines(params)};
    CompileResult compiled = compiler.CompileNow(req);
    if (!compiled.ok) {
      *err = what + ": the store keeps no cubin of it and its source no longer compiles: " + compiled.Summary();
      return false;
    }
    *sha = Sha256Hex(compiled.cubin);
    if (!sealed_sha.empty() && *sha != sealed_sha && !allow_rebuilt) {
      *err = what + ": the store keeps no cubin of it and the rebuilt one (nvrtc " + Compiler::NvrtcVersion() +
             ") differs from the sealed one (" + toolchain + "); pass --allow-rebuilt to export it anyway";
      return false;
    }
    if (!sealed_sha.empty()) KeepRebuiltCubin(store, sealed_sha, compiled.cubin, what);
    cubin = std::move(compiled.cubin);
  }
  nlohmann::json launch;
  if (!LaunchJson(op, parsed, params, every_config, NominalSmCount(arch), &launch, err)) {
    *err = what + ": " + *err;
    return false;
  }
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) {
    *err = "cannot create " + folder.string() + ": " + ec.message();
    return false;
  }
  return WriteText(folder / "kernel.cu", source, err) && WriteText(folder / "kernel.cubin", cubin, err) &&
         WriteText(folder / "launch.json", launch.dump(2) + "\n", err);
}

// A dispatch seal's kernels under kernels/K/ and its table in dispatch.json (docs/seal-format.md).
bool ExportDispatch(Store& store, const SealRecord& seal, const nlohmann::json& d, const OperatorSpec& op,
                    Compiler& compiler, bool allow_rebuilt, const fs::path& tmp, bool* rebuilt, std::string* err) {
  const std::string where = "seal " + seal.id + " metadata dispatch";
  if (!d.is_object() || !d.contains("kernels") || !d["kernels"].is_array() || !d.contains("table") ||
      !d["table"].is_array()) {
    *err = where + ": expected an object with arrays \"kernels\" and \"table\"";
    return false;
  }
  nlohmann::json kernels = nlohmann::json::array();
  for (size_t i = 0; i < d["kernels"].size(); ++i) {
    const nlohmann::json& k = d["kernels"][i];
    const std::string at = where + ".kernels[" + std::to_string(i) + "]";
    if (k.is_object() && k.contains("reference")) {
      kernels.push_back({{"kernel", i}, {"reference", k["reference"]}});
      continue;
    }
    if (!k.is_object() || !k.contains("candidate") || !k["candidate"].is_string() || !k.contains("params")) {
      *err = at + ": needs \"candidate\" and \"params\", or \"reference\"";
      return false;
    }
    const std::string sub = "kernels/" + std::to_string(i);
    std::string sha;
    bool compiled = false;
    if (!ExportKernel(store, at, k["candidate"].get<std::string>(), k["params"].dump(), k.value("cubin_sha256", ""),
                      seal.toolchain, seal.arch, op, compiler, allow_rebuilt, false, tmp / sub, &sha, &compiled, err))
      return false;
    *rebuilt = *rebuilt || compiled;
    kernels.push_back({{"kernel", i}, {"dir", sub}, {"params", k["params"]}, {"family", k.value("family", "")},
                       {"label", k.value("label", "")}, {"cubin_sha256", sha}});
  }
  nlohmann::json table = nlohmann::json::array();
  for (const nlohmann::json& row : d["table"]) {
    const std::string config = row.value("config", std::string());
    const ConfigSpec* spec = nullptr;
    for (const ConfigSpec& c : op.configs)
      if (c.name == config) spec = &c;
    table.push_back({{"config", config},
                     {"values", spec ? nlohmann::json(spec->values) : nlohmann::json(nullptr)},
                     {"kernel", row.value("kernel", -1)},
                     {"why", row.value("why", "")}});
  }
  nlohmann::json out = {{"format", "forgek-seal-dispatch/1"},
                        {"operator", op.name},
                        {"kernels", kernels},
                        {"table", table},
                        {"fallback", d.value("fallback", -1)},
                        {"rule", "a shape is served by the table row whose values equal it; else by the fallback "
                                 "where that kernel accepts the shape (every `constraints` expression of its "
                                 "kernel.cu manifest holds with the sealed params); else by the expert reference"}};
  return WriteText(tmp / "dispatch.json", out.dump(2) + "\n", err);
}

const char* kDispatchReadme = R"(
## A dispatch

This seal is a dispatch: `dispatch.json` names, per config (its `values`), the kernel that serves
it: `kernels/K/` (its own `kernel.cubin`, `launch.json`, `kernel.cu`), or `"reference"` (the
operator's expert reference: call the library or kernel you compared against). Shapes outside the
table go to `fallback` where that kernel accepts them (the `constraints` of its `kernel.cu`
manifest hold for the shape with the sealed params), else to the reference: the same rule forgek
and `forgek seal verify` follow (`rule` in dispatch.json). Before sealing, forgek checks each
kernel for correctness on shapes outside the suite drawn within the operator's `ranges`, where it
declares them and the kernel accepts such shapes (the run summary lists each check); `forgek seal
verify` repeats it on fresh shapes. The top-level `kernel.cubin` is the seal's own kernel (the
fallback when it is a kernel, else the one serving the most configs), for readers that know no
dispatch.

```cpp
// Pick the kernel for a shape: the table row whose values match, else the fallback where it
// accepts the shape, else the reference.
int k = -1;
for (auto& row : dispatch["table"]) if (row["values"] == shape_values) k = row["kernel"];
if (k < 0 && accepts(dispatch["kernels"][dispatch["fallback"]], shape_values)) k = dispatch["fallback"];
if (k < 0) return call_reference(...);
auto& entry = dispatch["kernels"][k];
if (entry.contains("reference")) return call_reference(...);
CUmodule mod;  cuModuleLoadData(&mod, read(entry["dir"] + "/kernel.cubin"));
// then launch as launch.json of that folder says for this config (see above)
```
)";

}  // namespace

bool WriteFolderAtomically(const std::string& dir, const std::function<bool(const fs::path& tmp, std::string* err)>& fill,
                           std::string* err) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec))) {
    *err = dir + " exists and is not an empty folder; choose another folder";
    return false;
  }
  // A symbolic link names the folder it points to: the export goes there and the link stays. (The
  // rename below would otherwise replace the link itself with a new folder.)
  fs::path target = fs::absolute(dir).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();  // "out/" names the folder "out"
  if (fs::is_symlink(fs::symlink_status(target, ec))) {
    if (!fs::exists(target, ec)) {
      *err = dir + " is a symbolic link to " + fs::read_symlink(target, ec).string() +
             ", which does not exist; create that folder or choose another";
      return false;
    }
    target = fs::canonical(target, ec);
    if (ec) {
      *err = "cannot resolve the symbolic link " + dir + ": " + ec.message();
      return false;
    }
  }
  fs::path tmp = target.parent_path() / (".forgek-export-" + std::to_string(getpid()) + "-" +
                                         std::to_string(std::random_device{}()));
  fs::create_directories(tmp, ec);
  if (ec) {
    *err = "cannot create " + tmp.string() + ": " + ec.message();
    return false;
  }
  bool ok = fill(tmp, err);
  if (ok) {
    if (fs::exists(target, ec)) fs::remove(target, ec);  // an empty folder, checked above
    fs::rename(tmp, target, ec);
    if (ec) {
      *err = "cannot move the export into " + target.string() + ": " + ec.message();
      ok = false;
    }
  }
  if (!ok) fs::remove_all(tmp, ec);
  return ok;
}

bool ExportSeal(Store& store, const SealRecord& seal, const OperatorSpec& op, Compiler& compiler,
                const std::string& dir, bool allow_rebuilt, std::string* err) {
  std::vector<SealRecord> lineage;
  if (!store.SealLineage(seal.id, &lineage, err)) return false;
  nlohmann::json meta = ParseJsonLenient(SealJson(seal, lineage));
  nlohmann::json metadata = ParseJsonLenient(seal.metadata_json.empty() ? "{}" : seal.metadata_json);
  const bool dispatch = metadata.is_object() && metadata.contains("dispatch");
  return WriteFolderAtomically(
      dir,
      [&](const fs::path& tmp, std::string* fill_err) {
        std::string sha;
        bool rebuilt = false, rebuilt_dispatch = false;
        if (!ExportKernel(store, "seal " + seal.id, seal.candidate_hash, seal.params_json, seal.cubin_sha256,
                          seal.toolchain, seal.arch, op, compiler, allow_rebuilt, !dispatch, tmp, &sha, &rebuilt,
                          fill_err) ||
            (dispatch && !ExportDispatch(store, seal, metadata["dispatch"], op, compiler, allow_rebuilt, tmp,
                                         &rebuilt_dispatch, fill_err)))
          return false;
        meta["exported_cubin_sha256"] = sha;
        // The sealed binaries from the store, or (a seal the store keeps none of) rebuilt by this toolchain.
        meta["exported_with"] = rebuilt || rebuilt_dispatch ? "rebuilt by nvrtc " + Compiler::NvrtcVersion()
                                                            : "the sealed cubins kept in the store";
        return WriteText(tmp / "seal.json", meta.dump(2) + "\n", fill_err) &&
               WriteText(tmp / "README.md", std::string(kReadme) + (dispatch ? kDispatchReadme : ""), fill_err);
      },
      err);
}

std::string SealJson(const SealRecord& seal, const std::vector<SealRecord>& lineage) {
  nlohmann::json chain = nlohmann::json::array();
  for (const SealRecord& s : lineage)
    chain.push_back({{"id", s.id}, {"created_at", s.created_at}, {"geomean_speedup", s.geomean_speedup}});
  nlohmann::json meta = ParseJsonLenient(seal.metadata_json);
  nlohmann::json params = ParseJsonLenient(seal.params_json);
  return nlohmann::json{{"format", "forgek-seal/1"},
                        {"id", seal.id},
                        {"operator", seal.operator_name},
                        {"arch", seal.arch},
                        {"candidate", seal.candidate_hash},
                        {"params", params.is_discarded() ? nlohmann::json::object() : params},
                        {"parent", seal.parent.empty() ? nlohmann::json(nullptr) : nlohmann::json(seal.parent)},
                        {"lineage", chain},
                        {"run", seal.run_id},
                        {"cubin_sha256", seal.cubin_sha256},
                        {"toolchain", seal.toolchain},
                        {"driver", seal.driver},
                        {"device", seal.device},
                        {"config_us", seal.config_us},
                        {"geomean_speedup_vs_parent", seal.geomean_speedup},
                        {"metadata", meta.is_discarded() ? nlohmann::json::object() : meta},
                        {"created_at", seal.created_at}}
      .dump(2);
}

}  // namespace forgek
