// Reading NVRTC's program log: located compiler messages and the ptxas resource report.
#pragma once

#include <string>
#include <vector>

#include "forgek/compile.h"

namespace forgek {

// The front end's diagnostics ("name.cu(12): error: ...", with the caret line giving the column),
// NVRTC's own option errors ("nvrtc: error: ...") and ptxas errors and warnings (no line), in log
// order. Detail lines ("detected during instantiation ...") are appended to the message.
std::vector<CompileMessage> ParseCompileMessages(const std::string& log);

// The `--ptxas-options=-v` report: one entry per entry function, in log order.
std::vector<KernelResources> ParsePtxasReport(const std::string& log);

}  // namespace forgek
