// What the compile service and its child process say to each other: length-prefixed fields, so
// that any bytes (a source that is not UTF-8, a cubin) pass unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nvrtc_program.h"

namespace forgek {

// One compile as the child receives it on stdin.
struct ChildCompileRequest {
  std::string name;    // the candidate's file name, for messages
  std::string source;
  std::vector<std::string> options;       // NVRTC options, whole
  std::vector<std::string> read_folders;  // all the child may read: the toolkit, forgek's device headers
  std::vector<std::string> write_folders; // and write: the precompiled-header folder
  bool allow_unconfined = false;          // compile even where the kernel has no Landlock
  uint64_t address_space_bytes = 0;       // RLIMIT_AS (0: none)
  uint64_t cpu_seconds = 0;               // RLIMIT_CPU (0: none)
  uint64_t stack_bytes = 0;               // RLIMIT_STACK (0: as inherited)
};

// What the child answers on stdout.
struct ChildCompileReply {
  NvrtcRun run;
  int landlock_abi = 0;  // 0: compiled unconfined (allowed by the request)
  std::string error;     // set when the child could not compile at all (no confinement, bad request)
};

std::string EncodeRequest(const ChildCompileRequest& req);
bool DecodeRequest(const std::string& bytes, ChildCompileRequest* req, std::string* err);
std::string EncodeReply(const ChildCompileReply& reply);
bool DecodeReply(const std::string& bytes, ChildCompileReply* reply, std::string* err);

}  // namespace forgek
