// One NVRTC compile, stripped to what the compile service needs: options in, log and cubin out.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace forgek {

struct NvrtcRun {
  bool ok = false;         // NVRTC succeeded and produced a cubin
  bool cancelled = false;  // the flow callback stopped it
  int status = 0;          // the nvrtcResult
  std::string status_text; // nvrtcGetErrorString(status)
  std::string log;
  std::string cubin;
};

// The options every compile gets: target, language, line info, the ptxas report, the toolkit's
// include folders (CCCL moved to include/cccl in CUDA 13). NVRTC's defaults otherwise hold
// (-dopt on without -G, --fmad=true).
std::vector<std::string> BaseNvrtcOptions(const std::string& target, const std::string& cuda_root);

// Automatic precompiled headers in a shared folder; they change speed, never output.
std::vector<std::string> PchNvrtcOptions(const std::string& pch_dir);

// Compiles `source` (named `name` in messages). A candidate that includes the driver header cuda.h gets a device-side stand-in
// declaring CUtensorMap and CUdeviceptr: the toolkit's cuda.h needs host headers NVRTC lacks. `should_stop` is polled from NVRTC's flow
// callback, which NVRTC calls between its phases: the front end of a source runs uninterrupted.
NvrtcRun RunNvrtc(const std::string& name, const std::string& source, const std::vector<std::string>& options,
                  const std::function<bool()>& should_stop);

}  // namespace forgek
