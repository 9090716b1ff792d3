// `forgek profile`: profile the reference or a kernel on the GPU and record what it shows.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "commands.h"
#include "load_operator.h"
#include "gpu_session.h"
#include "option_checks.h"
#include "params_option.h"
#include "forgek/knowledge/bottleneck.h"
#include "forgek/core/candidate.h"
#include "forgek/compile/compile.h"
#include "forgek/knowledge/knowledge.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/paths.h"
#include "forgek/knowledge/store.h"
#include "forgek/protocol/worker_protocol.h"

namespace forgek::cli {
namespace {

struct ProfileArgs {
  std::string op;
  bool reference = false;
  std::string kernel;
  std::string params;  // "BM=128,BN=64"
  std::vector<std::string> configs;
  std::string metrics;  // "m1,m2"
  bool no_store = false;
};

// The kernel to profile: the reference's library call, or a compiled .cu file.
KernelUnderTest PrepareKernel(const Context& ctx, const OperatorSpec& op, const ProfileArgs& a) {
  if (a.reference && !op.reference.library.empty()) return {"reference", op.reference.library, "", {}, {}};
  std::string path = a.reference ? op.dir + "/" + op.reference.kernel : a.kernel;
  Candidate c;
  Diagnostics diags;
  if (!(a.reference ? LoadReferenceKernel(op, &c, &diags) : LoadCandidateFile(path, &c, &diags)))
    throw Failure(FormatDiagnostics(diags));
  if (!ValidateCandidate(c, op, &diags)) throw Failure(FormatDiagnostics(diags));
  ParamAssignment params = ChooseParams(a.reference ? "" : a.params, c.manifest, path);
  CompilerOptions copts;
  copts.cache_dir = CacheDir("nvrtc");
  copts.pch_dir = CacheDir("pch");
  Compiler compiler(copts);
  CompileRequest req;
  req.name = path;
  req.source = c.source;
  req.arch = ctx.arch;
  req.options = ParamDefines(params);
  CompileResult r = compiler.Submit(req).get();
  if (!r.ok) throw Failure(path + " does not compile:\n" + r.Summary());
  return {a.reference ? "reference" : "candidate", "", r.cubin, c.manifest, params};
}


BottleneckVerdict Judge(const KernelProfile& p, const OperatorSpec& op, const DevicePeaks& peaks, int sms) {
  BottleneckInputs in;
  in.metrics = p.metrics;
  in.flops = p.flops;
  in.bytes = p.bytes;
  in.time_us = p.time_us;
  in.peak_flops = peaks.TflopsFor(op.ComputeDType()) * 1e12;
  in.peak_bandwidth = peaks.BandwidthGbps() * 1e9;
  for (const KernelLaunchRecord& l : p.launches) in.blocks += l.grid[0] * l.grid[1] * l.grid[2];
  in.sm_count = sms;
  return JudgeBottleneck(in);
}

std::string Dim3(const int64_t d[3]) { return fmt::format("{}x{}x{}", d[0], d[1], d[2]); }

std::string ProfileText(const KernelProfile& p, const BottleneckVerdict& v, const std::vector<Observation>& obs,
                        bool stored) {
  std::string out = fmt::format("config {}: {:.2f} us", p.config, p.time_us);
  if (p.time_us > 0 && p.flops > 0) out += fmt::format(", {:.1f} TFLOP/s", p.flops / p.time_us / 1e6);
  if (p.time_us > 0 && p.bytes > 0) out += fmt::format(", {:.0f} GB/s", p.bytes / p.time_us / 1e3);
  out += "\n  launches:\n";
  for (const KernelLaunchRecord& l : p.launches)
    out += fmt::format("    {}\n      grid {} block {} cluster {} regs {} smem {}+{} B, {:.2f} us\n", l.name,
                       Dim3(l.grid), Dim3(l.block), Dim3(l.cluster), l.registers_per_thread, l.static_smem_bytes,
                       l.dynamic_smem_bytes, l.duration_us);
  if (p.launches.empty()) out += "    (no activity records)\n";
  out += "  metrics:\n";
  for (const auto& [name, value] : p.metrics) out += fmt::format("    {:<72} {:>14.4g}\n", name, value);
  if (p.metrics.empty()) out += "    (none)\n";
  out += fmt::format("  bottleneck: {} (memory {:.1f}%, compute {:.1f}%, warps active {:.1f}%, L2 hit {:.1f}%)\n",
                     BottleneckName(v.kind), v.memory_pct, v.compute_pct, v.warps_active_pct, v.l2_hit_pct);
  for (const std::string& r : v.reasons) out += "    " + r + "\n";
  if (stored) {
    out += fmt::format("  observations recorded ({}):\n", obs.size());
    std::stringstream lines(RenderObservations(obs));
    for (std::string line; std::getline(lines, line);) out += "    " + line + "\n";
  }
  return out;
}

nlohmann::json ProfileJson(const KernelProfile& p, const BottleneckVerdict& v, const std::vector<Observation>& obs) {
  nlohmann::json launches = nlohmann::json::array();
  for (const KernelLaunchRecord& l : p.launches) launches.push_back(ToJson(l));
  nlohmann::json observations = nlohmann::json::array();
  for (const Observation& o : obs)
    observations.push_back({{"kind", o.kind}, {"key", o.key}, {"value", o.value}, {"number", o.number},
                            {"mechanism", o.mechanism}, {"evidence", o.evidence}});
  return {{"label", p.label},
          {"config", p.config},
          {"time_us", p.time_us},
          {"flops", p.flops},
          {"bytes", p.bytes},
          {"launches", launches},
          {"metrics", p.metrics},
          {"bottleneck",
           {{"kind", BottleneckName(v.kind)},
            {"memory_pct", v.memory_pct},
            {"compute_pct", v.compute_pct},
            {"warps_active_pct", v.warps_active_pct},
            {"l2_hit_pct", v.l2_hit_pct},
            {"reasons", v.reasons}}},
          {"observations", observations},
          {"has_sass", !p.sass.empty()}};
}

void RunProfile(Context& ctx, const ProfileArgs& a) {
  if (a.reference == !a.kernel.empty()) throw UsageError("give exactly one of --reference and --kernel FILE");
  if (a.reference && !a.params.empty()) throw UsageError("--params applies to --kernel only");
  std::string err;
  OperatorSpec op = LoadOperatorOption(ctx, "--op", a.op);
  CheckConfigNames(op, a.configs);
  KernelUnderTest kernel = PrepareKernel(ctx, op, a);

  Store store;
  if (!a.no_store && !store.Open(StorePath(ctx), &err, StoreMode::create)) throw Failure(err);
  GpuSession session;
  if (!OpenGpuSession(ctx, a.no_store ? nullptr : &store, &session, &err)) throw Failure(err);
  const ProbeResult& probe = session.evaluator->probe();
  const std::string device = probe.devices.empty() ? "" : probe.devices[0].name;
  const int sms = probe.devices.empty() ? 0 : probe.devices[0].sms;

  ProfileRequest req;
  req.op = &op;
  req.kernel = kernel;
  req.configs = a.configs;
  req.metrics = SplitCommas(a.metrics);
  std::vector<KernelProfile> profiles;
  if (!session.evaluator->Profile(req, &profiles, &err)) throw Failure("profiling " + kernel.label + " failed: " + err);
  AttachSass(kernel, &profiles);

  KnowledgeBase kb;
  Diagnostics diags;
  if (!a.no_store && !LoadKnowledgeBase(KnowledgeDir(), &kb, &diags)) throw Failure(FormatDiagnostics(diags));
  nlohmann::json all = nlohmann::json::array();
  for (const KernelProfile& p : profiles) {
    std::vector<Observation> obs;
    if (!a.no_store && !AnalyzeAndRecord(store, kb, op, ctx.arch, device, p, &obs, &err))
      throw Failure("recording the profile of config " + p.config + " failed: " + err);
    BottleneckVerdict verdict = Judge(p, op, session.peaks, sms);
    if (ctx.json) all.push_back(ProfileJson(p, verdict, obs));
    else std::printf("%s", ProfileText(p, verdict, obs, !a.no_store).c_str());
  }
  if (ctx.json) {
    nlohmann::json j = {{"operator", op.name}, {"kernel", kernel.label}, {"device", device},
                        {"stored", !a.no_store}, {"profiles", all}};
    std::printf("%s\n", j.dump().c_str());
  }
}

}  // namespace

void set_profile_command(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<ProfileArgs>();
  CLI::App* cmd = app.add_subcommand(
      "profile", "Profile the reference or a kernel on the GPU (launches, metrics, bottleneck) and record it");
  cmd->add_option("--op", a->op, "Operator name or alias")->required();
  cmd->add_flag("--reference", a->reference, "Profile the operator's expert reference");
  cmd->add_option("--kernel", a->kernel, "Profile this candidate .cu file")->check(ReadableFile());
  cmd->add_option("--params", a->params, "Values for a family's params: BM=128,BN=64");
  cmd->add_option("--config", a->configs, "Only these configs (repeatable; default: every config)");
  cmd->add_option("--metrics", a->metrics, "Range-profiler metrics m1,m2 (default: forgek's set)");
  cmd->add_flag("--no-store", a->no_store, "Print only; record nothing in the knowledge store");
  cmd->callback([&ctx, a] { RunProfile(ctx, *a); });
}

}  // namespace forgek::cli
