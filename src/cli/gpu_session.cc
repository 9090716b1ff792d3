// Opening the GPU for a command: probe, peaks (calibrated once per device and stored), evaluator.
#include "gpu_session.h"

#include <cctype>

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "forgek/run/calibration.h"
#include "forgek/compile/compile.h"
#include "forgek/run/gpu_list.h"
#include "forgek/core/hash.h"
#include "forgek/knowledge/knowledge.h"
#include "forgek/core/paths.h"
#include "forgek/seal/seal.h"
#include "forgek/run/driver_version.h"

namespace forgek::cli {
namespace {

// What still works without a GPU, said wherever a command finds none.
constexpr const char* kNoGpuHint =
    " (without a GPU, 'forgek run --compile-only' runs the agent and the compiler, and 'forgek ops validate' "
    "checks operators and compiles their kernels)";

}  // namespace

SessionEvaluator::SessionEvaluator(WorkerEvaluatorOptions opts) : worker_(std::move(opts)) {}

bool SessionEvaluator::Probe(std::string* err) {
  std::string perr;
  if (!worker_.Probe(&probe_, &perr) || !probe_.ok || probe_.devices.empty()) {
    *err = "no usable GPU: " + (!perr.empty() ? perr : !probe_.error.empty() ? probe_.error : "no CUDA device found") + kNoGpuHint;
    return false;
  }
  return true;
}

std::string SessionEvaluator::DeviceName() const {
  return probe_.devices.empty() ? "" : probe_.devices.front().name;
}

std::string SessionEvaluator::DriverVersion() const { return DriverDescription(probe_.driver_version); }

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
      *err = "no usable GPU: " + (!perr.empty() ? perr : !probe.error.empty() ? probe.error : "no CUDA device found") + kNoGpuHint;
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

// The datasheet peaks of exactly this device model (knowledge/hardware), for the SOL % against
// the datasheet; none (a warning) when no datasheet names it.
DevicePeaks DatasheetPeaks(const std::string& arch, const std::string& device) {
  KnowledgeBase kb;
  Diagnostics diags;
  HardwareSpec spec;
  std::string err;
  if (!LoadKnowledgeBase(KnowledgeDir(), &kb, &diags) ||
      !ResolveHardware(nullptr, kb, arch, device, &spec, &err) || spec.name.empty()) {
    spdlog::warn("no datasheet for {}: the SOL % against the datasheet is not reported", device);
    return {};
  }
  // ResolveHardware falls back to another model of the arch; a datasheet % needs this one.
  std::string model = spec.name.substr(spec.name.rfind(' ') + 1), name = device;
  for (std::string* s : {&model, &name})
    for (char& c : *s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name.find(model) == std::string::npos) {
    spdlog::warn("no datasheet for {} (knowledge/hardware): the SOL % against the datasheet is not reported", device);
    return {};
  }
  return spec.peaks;
}

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
  out->evaluator->worker().SetDatasheetPeaks(DatasheetPeaks(ctx.arch, dev.name));
  const bool from_store = store && StoredPeaks(*store, dev.name, ctx.arch, &out->peaks);
  if (from_store) out->evaluator->worker().SetPeaks(out->peaks);
  if (!out->evaluator->worker().Peaks(&out->peaks, err)) {
    *err = "calibration of " + dev.name + " failed: " + *err;
    return false;
  }
  if (!from_store && store) {
    spdlog::info("calibrated {}: copy {:.0f} GB/s, bf16 {:.0f} TFLOP/s, launch floor {:.2f} us", dev.name,
                 out->peaks.BandwidthGbps(), out->peaks.bf16_tflops, out->peaks.launch_floor_us);
    StorePeaks(*store, probe, ctx.arch, out->peaks);
  }
  return true;
}

}  // namespace

VerifyOutcome VerifySealOnGpu(const Context& ctx, Store& store, const OperatorSpec& op, const SealRecord& seal) {
  VerifyOutcome v;
  GpuSession gpu;
  std::string err;
  if (!OpenGpuSession(ctx, &store, &gpu, &err)) {
    v.exit_code = kExitFailure;
    v.text = "seal " + seal.id.substr(0, 12) + ": " + err + "\n";
    v.json = nlohmann::json{{"seal", seal.id}, {"ok", false}, {"error", err}}.dump();
    return v;
  }
  CompilerOptions copts;
  copts.cache_dir = CacheDir("nvrtc");
  Compiler compiler(copts);
  SealVerification s = VerifySeal(*gpu.evaluator, store, compiler, op, seal);
  v.exit_code = s.status == SealVerification::Status::holds        ? kExitOk
                : s.status == SealVerification::Status::regression ? kExitRegression
                                                                   : kExitFailure;
  v.text = std::move(s.text);
  v.json = std::move(s.json);
  return v;
}

}  // namespace forgek::cli
