// Exporting a seal as a self-contained folder that a program can load with the CUDA driver API alone.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/json_parse.h"
#include "forgek/candidate.h"
#include "forgek/hash.h"
#include "forgek/seal.h"

namespace forgek {
namespace fs = std::filesystem;
namespace {

bool WriteText(const fs::path& path, const std::string& text, std::string* err) {
  return WriteFileAtomic(path.string(), text, err);
}

// Every config's launches with every expression evaluated, plus the tensors a caller must allocate.
bool LaunchJson(const OperatorSpec& op, const Candidate& cand, const ParamAssignment& params, nlohmann::json* out,
                std::string* err) {
  nlohmann::json configs = nlohmann::json::array();
  for (const ConfigSpec& config : op.configs) {
    ResolvedCandidate rc;
    Diagnostics diags;
    if (!ResolveCandidate(cand.manifest, op, params, config.values, &rc, &diags)) {
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
  *out = {{"format", "forgek-seal-launch/1"}, {"operator", op.name}, {"params", params}, {"configs", configs}};
  return true;
}

const char* kReadme = R"(# Sealed kernel

Produced by `forgek seal export`. Everything needed to run this kernel without forgek:

- `kernel.cubin` — load with `cuModuleLoadData`, get each kernel with `cuModuleGetFunction`.
- `launch.json` — per config: the tensors to allocate (dtype, row-major shape), workspaces,
  TMA tensor maps to encode with `cuTensorMapEncodeTiled` (shapes and boxes outermost first:
  reverse them for the driver API), and the launches in order with grid, block, cluster,
  dynamic shared memory and arguments. Raise `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`
  when dynamic shared memory exceeds 48 KiB; pass the cluster with `cuLaunchKernelEx`.
- `kernel.cu` — the source (manifest comment at the top), compiled with the params in `seal.json`.
- `seal.json` — identity, lineage, toolchain, driver, GPU and the sealed per-config times.

The format is described in forgek's docs/seal-format.md.
)";

}  // namespace

bool ExportSeal(Store& store, const SealRecord& seal, const OperatorSpec& op, Compiler& compiler,
                const std::string& dir, bool allow_rebuilt, std::string* err) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec))) {
    *err = dir + " exists and is not an empty folder; choose another folder";
    return false;
  }
  CandidateRecord cand;
  bool found = false;
  if (!store.GetCandidate(seal.candidate_hash, &cand, &found, err)) return false;
  if (!found) {
    *err = "seal " + seal.id + " names candidate " + seal.candidate_hash + " which the store does not hold";
    return false;
  }
  Candidate parsed;
  Diagnostics diags;
  if (!ParseCandidate("kernel.cu", cand.source, &parsed, &diags)) {
    *err = "sealed source does not parse: " + FormatDiagnostics(diags);
    return false;
  }
  ParamAssignment params;
  nlohmann::json pj = ParseJsonLenient(seal.params_json);
  if (!pj.is_object()) {
    *err = "seal " + seal.id + " has malformed params: " + seal.params_json;
    return false;
  }
  for (auto it = pj.begin(); it != pj.end(); ++it) {
    if (!it.value().is_number_integer()) {
      *err = "seal " + seal.id + " has malformed params: " + it.key() + " is not an integer";
      return false;
    }
    params[it.key()] = it.value().get<int64_t>();
  }

  CompileRequest req{"kernel.cu", cand.source, seal.arch, ParamDefines(params)};
  CompileResult compiled = compiler.CompileNow(req);
  if (!compiled.ok) {
    *err = "sealed source no longer compiles: " + compiled.Summary();
    return false;
  }
  std::string sha = Sha256Hex(compiled.cubin);
  if (!seal.cubin_sha256.empty() && sha != seal.cubin_sha256 && !allow_rebuilt) {
    *err = "the rebuilt cubin (nvrtc " + Compiler::NvrtcVersion() + ") differs from the sealed one (" +
           seal.toolchain + "); pass --allow-rebuilt to export it anyway";
    return false;
  }
  nlohmann::json launch;
  if (!LaunchJson(op, parsed, params, &launch, err)) return false;
  std::vector<SealRecord> lineage;
  if (!store.SealLineage(seal.id, &lineage, err)) return false;
  nlohmann::json meta = ParseJsonLenient(SealJson(seal, lineage));
  meta["exported_cubin_sha256"] = sha;
  meta["exported_with"] = "nvrtc " + Compiler::NvrtcVersion();

  fs::path target = fs::absolute(dir);
  fs::path tmp = target.parent_path() / (".forgek-export-" + std::to_string(getpid()) + "-" +
                                         std::to_string(std::random_device{}()));
  fs::create_directories(tmp, ec);
  if (ec) {
    *err = "cannot create " + tmp.string() + ": " + ec.message();
    return false;
  }
  bool ok = WriteText(tmp / "kernel.cu", cand.source, err) && WriteText(tmp / "kernel.cubin", compiled.cubin, err) &&
            WriteText(tmp / "launch.json", launch.dump(2) + "\n", err) &&
            WriteText(tmp / "seal.json", meta.dump(2) + "\n", err) && WriteText(tmp / "README.md", kReadme, err);
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
