// NVRTC calls: program creation, cancellable compilation, log and cubin retrieval, versions.
#include "nvrtc_program.h"

#include <nvrtc.h>

#include <atomic>
#include <memory>

#include "forgek/compile/compile.h"

namespace forgek {
namespace {

// NVRTC requires the callback to keep answering "cancel" once it has said so.
struct FlowGuard {
  const std::function<bool()>* should_stop;
  std::atomic<bool> stopped{false};
};

int FlowCallback(void* payload, void* /*reserved*/) {
  auto* guard = static_cast<FlowGuard*>(payload);
  if (guard->stopped.load()) return 1;
  if (*guard->should_stop && (*guard->should_stop)()) {
    guard->stopped.store(true);
    return 1;
  }
  return 0;
}

// The toolkit's cuda.h includes host headers NVRTC cannot open, yet candidates include it for
// CUtensorMap. Device code needs only the by-value types, so NVRTC gets this one instead.
constexpr const char* kDeviceCudaHeader = R"(#pragma once
typedef struct alignas(64) CUtensorMap_st { unsigned long long opaque[16]; } CUtensorMap;
typedef unsigned long long CUdeviceptr;
)";

struct ProgramDeleter {
  void operator()(_nvrtcProgram* p) const { nvrtcDestroyProgram(&p); }
};

}  // namespace

bool ArchToNvrtcTarget(const std::string& arch, std::string* target) {
  if (arch == "sm90") {
    *target = "sm_90a";
  } else if (arch == "sm100") {
    *target = "sm_100a";
  } else {
    return false;
  }
  return true;
}

std::string Compiler::NvrtcVersion() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<std::string> BaseNvrtcOptions(const std::string& target, const std::string& cuda_root) {
  return {"--gpu-architecture=" + target,
          "-std=c++17",
          "-lineinfo",
          "--ptxas-options=-v",
          "-I" + cuda_root + "/include",
          "-I" + cuda_root + "/include/cccl"};
}

std::vector<std::string> PchNvrtcOptions(const std::string& pch_dir) {
  // Without the messages, a log reads the same whether or not a header came precompiled.
  return {"--pch", "--pch-dir=" + pch_dir, "--pch-messages=false", "--pch-verbose=false"};
}

NvrtcRun RunNvrtc(const std::string& name, const std::string& source, const std::vector<std::string>& options,
                  const std::function<bool()>& should_stop) {
  NvrtcRun run;
  nvrtcProgram raw = nullptr;
  const char* header_sources[] = {kDeviceCudaHeader};
  const char* header_names[] = {"cuda.h"};
  nvrtcResult rc = nvrtcCreateProgram(&raw, source.c_str(), name.c_str(), 1, header_sources, header_names);
  if (rc != NVRTC_SUCCESS) {
    run.status = rc;
    run.status_text = nvrtcGetErrorString(rc);
    return run;
  }
  std::unique_ptr<_nvrtcProgram, ProgramDeleter> program(raw);
  FlowGuard guard{&should_stop};
  nvrtcSetFlowCallback(raw, FlowCallback, &guard);

  std::vector<const char*> argv;
  argv.reserve(options.size());
  for (const std::string& o : options) argv.push_back(o.c_str());
  rc = nvrtcCompileProgram(raw, static_cast<int>(argv.size()), argv.data());
  run.status = rc;
  run.status_text = nvrtcGetErrorString(rc);
  run.cancelled = rc == NVRTC_ERROR_CANCELLED || guard.stopped.load();

  size_t log_size = 0;
  if (nvrtcGetProgramLogSize(raw, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    run.log.resize(log_size);
    if (nvrtcGetProgramLog(raw, run.log.data()) != NVRTC_SUCCESS) run.log.clear();
    while (!run.log.empty() && run.log.back() == '\0') run.log.pop_back();
  }
  if (rc != NVRTC_SUCCESS) return run;

  size_t cubin_size = 0;
  if (nvrtcGetCUBINSize(raw, &cubin_size) == NVRTC_SUCCESS && cubin_size > 0) {
    run.cubin.resize(cubin_size);
    if (nvrtcGetCUBIN(raw, run.cubin.data()) != NVRTC_SUCCESS) run.cubin.clear();
  }
  run.ok = !run.cubin.empty();
  return run;
}

}  // namespace forgek
