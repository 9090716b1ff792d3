// Profiling and analysing the incumbent, with profiles cached in the store.
#include "incumbent_analysis.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "forgek/compile/compile.h"
#include "forgek/core/hash.h"
#include "forgek/core/params.h"

namespace forgek {
namespace {

// Bump when what a profile holds changes (new metrics, another SASS form): older entries are
// then never found again.
constexpr int kProfileFormat = 1;

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += s + ",";
  return out;
}

// What decides how `k` runs besides its binary: its launches, tensor maps, workspaces and params.
std::string LaunchText(const KernelUnderTest& k) {
  const CandidateManifest& m = k.manifest;
  std::string out = "params " + ParamsJson(k.params) + "\n";
  for (const auto& [name, expr] : m.lets) out += "let " + name + "=" + expr + "\n";
  for (const WorkspaceSpec& w : m.workspaces) out += "workspace " + w.name + " " + w.bytes + (w.zero ? " zero" : "") + "\n";
  for (const TensorMapSpec& t : m.tensor_maps)
    out += "tensor_map " + t.name + " " + t.tensor + " [" + Joined(t.box) + "] [" + Joined(t.shape) + "] " + t.swizzle +
           " " + t.l2_promotion + " " + t.oob_fill + "\n";
  for (const LaunchSpec& l : m.launches)
    out += "launch " + l.kernel + " grid [" + Joined(l.grid) + "] block [" + Joined(l.block) + "] cluster [" +
           Joined(l.cluster) + "] smem " + l.smem + " args [" + Joined(l.args) + "] when " + l.when + "\n";
  return out;
}

std::string ConfigText(const OperatorSpec& op, const std::string& config) {
  std::string out = "config " + config + "\n";
  for (const ConfigSpec& c : op.configs)
    if (c.name == config)
      for (const auto& [name, value] : c.values) out += name + "=" + std::to_string(value) + "\n";
  for (const TensorSpec& t : op.tensors)
    out += "tensor " + t.name + " " + DTypeName(t.dtype) + " [" + Joined(t.shape) + "]\n";
  for (const ScalarSpec& sc : op.scalars) out += "scalar " + sc.name + "=" + std::to_string(sc.value) + "\n";
  return out + "flops " + op.flops + "\nbytes " + op.bytes + "\n";
}

std::string Subject(const std::string& key) { return kProfileCachePrefix + key; }

bool LoadCached(const AnalysisInputs& in, const std::string& key, KernelProfile* out) {
  std::vector<ProfileRecord> rows;
  std::string err;
  if (!in.store->ListProfiles(in.op->name, in.arch, Subject(key), &rows, &err)) {
    spdlog::debug("cached analysis not read: {}", err);
    return false;
  }
  if (rows.empty()) return false;
  *out = rows.front().profile;
  return true;
}

void SaveCached(const AnalysisInputs& in, const std::string& key, const KernelProfile& profile) {
  ProfileRecord rec;
  rec.operator_name = in.op->name;
  rec.arch = in.arch;
  rec.subject = Subject(key);
  rec.profile = profile;
  std::string err;
  if (!in.store->AddProfile(&rec, &err)) spdlog::warn("the incumbent's profile was not cached: {}", err);
}

}  // namespace

std::string AnalysisCacheKey(const OperatorSpec& op, const KernelUnderTest& kernel, const std::string& config,
                             const std::string& device, const std::string& driver) {
  std::string text = "forgek profile format " + std::to_string(kProfileFormat) + "\noperator " + op.name + "\n";
  text += kernel.library.empty() ? "cubin " + Sha256Hex(kernel.cubin) + "\n" + LaunchText(kernel)
                                 : "library " + kernel.library + " of toolkit " + Compiler::NvrtcVersion() + "\n";
  text += ConfigText(op, config) + "device " + device + "\ndriver " + driver + "\n";
  return Sha256Hex(text);
}

IncumbentAnalysis AnalyzeIncumbent(const AnalysisInputs& in, const Incumbent& incumbent) {
  IncumbentAnalysis out;
  // The kernel serving each config (a dispatch serves them by its table); configs with one kernel
  // are profiled together, those whose profile the store holds not at all.
  std::map<std::string, KernelProfile> by_config;
  std::vector<std::pair<const KernelUnderTest*, std::vector<std::string>>> to_profile;
  std::map<std::string, std::string> key_of;
  for (const std::string& config : in.configs) {
    const KernelUnderTest& k = incumbent.For(config);
    key_of[config] = AnalysisCacheKey(*in.op, k, config, in.device, in.driver);
    KernelProfile cached;
    if (in.store && !in.device.empty() && LoadCached(in, key_of[config], &cached)) {
      by_config[config] = std::move(cached);
      ++out.cached;
      continue;
    }
    auto part = std::find_if(to_profile.begin(), to_profile.end(), [&](const auto& p) { return p.first == &k; });
    if (part == to_profile.end()) to_profile.push_back({&k, {config}});
    else part->second.push_back(config);
  }
  const auto start = std::chrono::steady_clock::now();
  for (const auto& [kernel, configs] : to_profile) {
    ProfileRequest preq;
    preq.op = in.op;
    preq.kernel = *kernel;
    preq.configs = configs;
    std::vector<KernelProfile> profiles;
    std::string perr;
    if (!in.evaluator->Profile(preq, &profiles, &perr)) {
      out.degraded.push_back({"profile", "incumbent not profiled: " + perr});
      return out;
    }
    AttachSass(*kernel, &profiles);
    for (KernelProfile& p : profiles) {
      if (in.store && !in.device.empty() && key_of.count(p.config)) SaveCached(in, key_of[p.config], p);
      ++out.profiled;
      by_config[p.config] = std::move(p);
    }
  }
  out.profile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& [config, p] : by_config) out.profile_s_per_config = std::max(out.profile_s_per_config, p.wall_s);
  for (const std::string& config : in.configs) {
    auto it = by_config.find(config);
    if (it != by_config.end()) out.profiles.push_back(std::move(it->second));
  }
  if (!in.store) return out;
  std::vector<Observation> all;
  for (KernelProfile& prof : out.profiles) {
    prof.label = incumbent.seal_id.empty() ? "reference" : "seal:" + incumbent.seal_id;
    std::vector<Observation> obs;
    std::string aerr;
    bool ok = in.kb ? AnalyzeAndRecord(*in.store, *in.kb, *in.op, in.arch, in.device, prof, &obs, &aerr)
                    : AnalyzeAndRecord(*in.store, *in.op, in.arch, prof, &obs, &aerr);
    if (!ok) out.degraded.push_back({"analysis", "analysis of the incumbent on " + prof.config + " failed: " + aerr});
    all.insert(all.end(), obs.begin(), obs.end());
  }
  out.summary = RenderObservations(all);
  return out;
}

}  // namespace forgek
