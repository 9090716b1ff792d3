// Reading NVRTC's program log: located compiler messages and the ptxas resource report.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "forgek/compile/compile.h"

namespace forgek {

// The front end's diagnostics ("name.cu(12): error: ...", with the caret line giving the column),
// NVRTC's own option errors ("nvrtc: error: ...") and ptxas errors and warnings (no line), in log
// order. Detail lines ("detected during instantiation ...") are appended to the message.
std::vector<CompileMessage> ParseCompileMessages(const std::string& log);

// The log with the echoed source lines of messages located in any file but `name` removed, and cut
// at `max_bytes`: what the store, the terminal and an LLM provider see quotes only the candidate.
std::string QuoteOnlyOwnLines(const std::string& log, const std::string& name, size_t max_bytes);

// The `--ptxas-options=-v` report: one entry per entry function, in log order.
std::vector<KernelResources> ParsePtxasReport(const std::string& log);

}  // namespace forgek
