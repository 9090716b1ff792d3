// Opening the GPU for a command: probe, peaks (calibrated once per device and stored), evaluator.
#include "cli/gpu_session.h"

#include "forgek/verdict.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "forgek/compile.h"
#include "forgek/dispatch.h"
#include "forgek/gpu_list.h"
#include "forgek/hash.h"
#include "forgek/paths.h"
#include "cli/driver_version.h"
#include "run/incumbent.h"

namespace forgek::cli {

SessionEvaluator::SessionEvaluator(WorkerEvaluatorOptions opts) : worker_(std::move(opts)) {}

bool SessionEvaluator::Probe(std::string* err) {
  std::string perr;
  if (!worker_.Probe(&probe_, &perr) || !probe_.ok || probe_.devices.empty()) {
    *err = "no usable GPU: " + (!perr.empty() ? perr : !probe_.error.empty() ? probe_.error : "no CUDA device found");
    return false;
  }
  return true;
}

std::string SessionEvaluator::DeviceName() const {
  return probe_.devices.empty() ? "" : probe_.devices.front().name;
}

std::string SessionEvaluator::DriverVersion() const { return DriverDescription(probe_.driver_version); }

DeviceRecord DeviceFromProbe(const ProbeResult& probe, const std::string& arch, const DevicePeaks& peaks) {
  DeviceRecord d;
  if (!probe.devices.empty()) {
    const DeviceInfo& info = probe.devices.front();
    d.name = info.name;
    d.sm_count = info.sms;
    d.l2_bytes = info.l2_bytes;
    d.memory_bytes = info.memory_bytes;
  }
  d.arch = arch;
  d.driver = DriverDescription(probe.driver_version);
  d.peaks = {{"dram_gbps", peaks.BandwidthGbps()},   {"copy_kernel_gbps", peaks.copy_kernel_gbps},
             {"memcpy_gbps", peaks.memcpy_gbps},      {"bf16_tflops", peaks.bf16_tflops},
             {"fp16_tflops", peaks.fp16_tflops},      {"fp8_tflops", peaks.fp8_tflops},
             {"tf32_tflops", peaks.tf32_tflops}};
  d.calibrated = peaks.source == "calibrated";
  d.calibrated_at = d.calibrated ? NowIso8601() : "";
  return d;
}

bool PeaksFromDevice(const DeviceRecord& d, DevicePeaks* out) {
  if (!d.calibrated) return false;
  auto get = [&](const char* key) {
    auto it = d.peaks.find(key);
    return it == d.peaks.end() ? 0.0 : it->second;
  };
  out->copy_kernel_gbps = get("copy_kernel_gbps");
  out->memcpy_gbps = get("memcpy_gbps");
  out->bf16_tflops = get("bf16_tflops");
  out->fp16_tflops = get("fp16_tflops");
  out->fp8_tflops = get("fp8_tflops");
  out->tf32_tflops = get("tf32_tflops");
  out->device = d.name;
  out->source = "calibrated";
  return out->valid() && out->bf16_tflops > 0;
}

namespace {

std::vector<std::string> WorkerCommandForGpu(int index) {
  std::vector<std::string> cmd = DefaultWorkerCommand();
  if (index < 0) return cmd;
  cmd.insert(cmd.begin(), {"/usr/bin/env", "CUDA_VISIBLE_DEVICES=" + std::to_string(index)});
  return cmd;
}

bool OpenOne(const Context& ctx, Store* store, int gpu_index, GpuSession* out, std::string* err);

}  // namespace

bool OpenGpuSession(const Context& ctx, Store* store, GpuSession* out, std::string* err) {
  return OpenOne(ctx, store, -1, out, err);
}

bool OpenGpuSessions(const Context& ctx, Store* store, const std::string& gpus_spec, std::vector<GpuSession>* out,
                     std::string* err) {
  out->clear();
  ProbeResult probe;
  {
    WorkerEvaluator prober;
    std::string perr;
    if (!prober.Probe(&probe, &perr) || !probe.ok || probe.devices.empty()) {
      *err = "no usable GPU: " + (!perr.empty() ? perr : !probe.error.empty() ? probe.error : "no CUDA device found");
      return false;
    }
  }
  std::vector<int> indices;
  if (!ParseGpuList(gpus_spec, static_cast<int>(probe.devices.size()), &indices, err)) return false;
  for (int index : indices) {
    GpuSession session;
    if (!OpenOne(ctx, store, indices.size() == 1 && index == 0 ? -1 : index, &session, err)) {
      *err = "GPU " + std::to_string(index) + ": " + *err;
      return false;
    }
    out->push_back(std::move(session));
  }
  return true;
}

namespace {

bool OpenOne(const Context& ctx, Store* store, int gpu_index, GpuSession* out, std::string* err) {
  // One worker serves the probe, the calibration and every evaluation of the session.
  WorkerEvaluatorOptions opts;
  opts.command = WorkerCommandForGpu(gpu_index);
  out->evaluator = std::make_unique<SessionEvaluator>(opts);
  if (!out->evaluator->Probe(err)) return false;
  const ProbeResult& probe = out->evaluator->probe();
  const DeviceInfo& dev = probe.devices.front();
  if (ctx.arch == "sm90" && dev.cc.rfind("9.", 0) != 0) {
    *err = "--arch sm90 needs a Hopper GPU (compute capability 9.x); this is " + dev.name + " (" + dev.cc + ")";
    return false;
  }
  if (ctx.arch == "sm100" && dev.cc.rfind("10.", 0) != 0) {
    *err = "--arch sm100 needs a Blackwell GPU (compute capability 10.x); this is " + dev.name + " (" + dev.cc + ")";
    return false;
  }
  bool from_store = false;
  if (store) {
    DeviceRecord rec;
    DevicePeaks stored;
    bool found = false;
    std::string serr;
    if (store->FindDevice(dev.name, ctx.arch, &rec, &found, &serr) && found && PeaksFromDevice(rec, &stored)) {
      out->evaluator->worker().SetPeaks(stored);
      from_store = true;
      spdlog::debug("peaks of {} from the store (calibrated {})", dev.name, rec.calibrated_at);
    }
  }
  if (!out->evaluator->worker().Peaks(&out->peaks, err)) {
    *err = "calibration of " + dev.name + " failed: " + *err;
    return false;
  }
  if (!from_store && store) {
    spdlog::info("calibrated {}: copy {:.0f} GB/s, bf16 {:.0f} TFLOP/s", dev.name, out->peaks.BandwidthGbps(),
                 out->peaks.bf16_tflops);
    std::string serr;
    if (!store->UpsertDevice(DeviceFromProbe(probe, ctx.arch, out->peaks), &serr))
      spdlog::warn("calibrated peaks not stored: {}", serr);
  }
  return true;
}

}  // namespace

VerifyOutcome VerifySealOnGpu(const Context& ctx, Store& store, const OperatorSpec& op, const SealRecord& seal) {
  VerifyOutcome v;
  auto fail = [&](const std::string& why) {
    v.exit_code = kExitFailure;
    v.text = "seal " + seal.id.substr(0, 12) + ": " + why + "\n";
    v.json = nlohmann::json{{"seal", seal.id}, {"ok", false}, {"error", why}}.dump();
    return v;
  };
  GpuSession gpu;
  std::string err;
  if (!OpenGpuSession(ctx, &store, &gpu, &err)) return fail(err);
  if (!seal.device.empty() && gpu.evaluator->DeviceName() != seal.device)
    spdlog::warn("seal {} was timed on {}, this is {}: times are compared anyway", seal.id.substr(0, 12), seal.device,
                 gpu.evaluator->DeviceName());
  CompilerOptions copts;
  copts.cache_dir = DefaultCacheDir() + "/nvrtc";
  Compiler compiler(copts);
  CandidateRecord cand;
  bool found = false;
  if (!store.GetCandidate(seal.candidate_hash, &cand, &found, &err)) return fail(err);
  if (!found) return fail("the store does not hold its candidate " + seal.candidate_hash);
  Candidate source;
  Diagnostics diags;
  if (!ParseCandidate("seal.cu", cand.source, &source, &diags)) return fail(FormatDiagnostics(diags));
  ParamAssignment params;
  if (!ParseParamsJson(seal.params_json, &params, &err)) return fail(err);
  EvalRequest req;
  req.op = &op;
  CompileResult compiled;
  std::string feedback;
  if (!CompileKernel(compiler, seal.arch, source, params, "seal " + seal.id.substr(0, 12), &req.candidate, &compiled,
                     &feedback))
    return fail("no longer compiles: " + feedback);
  Incumbent expert;
  if (!PrepareExpertReference(op, seal.arch, compiler, &expert, &err)) return fail(err);
  if (!PrepareGolden(op, seal.arch, compiler, &req.golden, &err)) return fail(err);
  req.incumbent = expert.kernel;
  req.seeds = 3;
  // A dispatch seal is verified config by config, each with the kernel its table names.
  std::map<std::string, DispatchKernel> per_config;
  std::set<std::string> reference_configs;
  if (!LoadDispatchKernels(seal, seal.arch, store, compiler, &per_config, &reference_configs, &err)) return fail(err);
  EvalResult r;
  if (per_config.empty() && reference_configs.empty()) {
    r = gpu.evaluator->Evaluate(req);
  } else {
    std::vector<EvalResult> parts;
    std::vector<std::string> order;
    for (const ConfigSpec& c : op.configs) {
      EvalRequest part = req;
      part.configs = {c.name};
      auto it = per_config.find(c.name);
      if (reference_configs.count(c.name)) part.candidate = expert.kernel;
      else if (it != per_config.end()) part.candidate = it->second.kernel;
      parts.push_back(gpu.evaluator->Evaluate(part));
      order.push_back(c.name);
    }
    r = MergeResults(parts, order);
  }

  // The one rule (forgek/verdict.h): the seal holds while it is correct everywhere and slower than
  // the expert reference, measured interleaved now, on no config.
  std::vector<std::pair<std::string, double>> sealed(seal.config_us.begin(), seal.config_us.end());
  VerifyVerdict verdict = DecideVerify(r, op.configs.size(), sealed);
  const bool regression = !verdict.holds;
  std::string text = regression ? verdict.reason + "\n" : "";
  nlohmann::json configs = nlohmann::json::array();
  for (const VerifyConfig& c : verdict.configs) {
    const bool slower = c.vs_expert.direction == Direction::slower;
    char line[320];
    std::snprintf(line, sizeof line,
                  "%-22s %-7s now %10.2f us (sealed %10.2f us, drift %+5.1f%%; expert %10.2f us, %.3fx +- %.1f%%)%s\n",
                  c.config.c_str(), c.correct ? "ok" : "WRONG", c.now_us, c.sealed_us, 100 * c.drift, c.expert_us,
                  c.vs_expert.speedup, 100 * c.vs_expert.noise, slower ? "  SLOWER" : "");
    text += line;
    configs.push_back({{"config", c.config}, {"correct", c.correct}, {"median_us", c.now_us},
                       {"sealed_us", c.sealed_us}, {"drift", c.drift}, {"expert_us", c.expert_us},
                       {"speedup_vs_expert", c.vs_expert.speedup}, {"noise", c.vs_expert.noise},
                       {"slower", slower}});
  }
  v.exit_code = regression ? kExitRegression : kExitOk;
  v.text = "seal " + seal.id.substr(0, 12) + " (" + op.name + ") on " + gpu.evaluator->DeviceName() + ": " +
           (regression ? "REGRESSION" : "holds") + "\n" + text;
  v.json = nlohmann::json{{"seal", seal.id}, {"ok", !regression}, {"device", gpu.evaluator->DeviceName()},
                          {"outcome", OutcomeName(r.outcome)}, {"reason", verdict.reason}, {"configs", configs}}
               .dump();
  return v;
}

}  // namespace forgek::cli
