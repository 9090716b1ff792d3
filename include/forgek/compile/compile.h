// The NVRTC compile service: a thread pool with a content-addressed on-disk cache. No CUDA context.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

namespace forgek {

// `sm90` -> "sm_90a", `sm100` -> "sm_100a"; false for anything else.
bool ArchToNvrtcTarget(const std::string& arch, std::string* target);

struct CompileRequest {
  std::string name;     // file name for messages (e.g. "seed.cu")
  std::string source;   // the whole .cu text
  std::string arch;     // "sm90" | "sm100"
  std::vector<std::string> options;  // extra options, e.g. -DBM=128
  double timeout_s = 120;
};

// One compiler message, located so an agent or a person can act on it.
struct CompileMessage {
  std::string file;  // the file the front end names: the request's name, or a header it includes
  int line = 0;
  int column = 0;
  std::string severity;  // error | warning
  std::string message;
};

// Per-kernel resources from the ptxas report.
struct KernelResources {
  std::string kernel;
  int registers = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int stack_bytes = 0;
  int static_smem_bytes = 0;
  int const_bytes = 0;
  // ptxas's code (C7511, C7515, ...) where it serialised the kernel's wgmmas (too few registers for the wgmma
  // pipeline, an accumulator defined by a non-wgmma instruction inside a pipeline stage, ...): no wgmma then
  // overlaps another, and a Hopper kernel's tensor cores run far below peak. Empty: not serialised.
  std::string wgmma_serialized;
};

struct CompileResult {
  bool ok = false;
  bool timed_out = false;
  bool cache_hit = false;
  std::string cubin;   // binary (sm_XXa cubin)
  std::string key;     // content hash of (source, options, NVRTC version, arch)
  std::string log;     // the full NVRTC program log
  std::vector<CompileMessage> messages;
  std::vector<KernelResources> kernels;
  double seconds = 0;

  // A short, actionable text: the first errors with line numbers.
  std::string Summary() const;
};

// Every compile runs in a child process (forgek/compile_worker.h) that may read only the toolkit
// and `include_dirs`, write only `pch_dir`, and use at most `memory_limit_bytes` of address space;
// it is killed at the request's deadline. Its crash or overrun is the candidate's compile error.
struct CompilerOptions {
  std::string cuda_root = FORGEK_CUDA_ROOT;
  std::string cache_dir;  // "" disables the on-disk cache
  std::string pch_dir;    // "" disables the shared precompiled-header folder
  int threads = 0;        // 0: hardware concurrency
  std::vector<std::string> include_dirs;     // further header folders candidates may include from
  std::vector<std::string> worker_command;   // the compile child; empty: this executable + "compile-worker"
  uint64_t memory_limit_bytes = 8ull << 30;  // the child's RLIMIT_AS (not applied under AddressSanitizer)
  // Compile even where the kernel offers no Landlock (also FORGEK_UNCONFINED_COMPILE=1): a
  // candidate's #include can then read any file forgek can.
  bool allow_unconfined = false;
};

// True when FORGEK_UNCONFINED_COMPILE=1 allows compiles without confinement.
bool UnconfinedCompileAllowedByEnvironment();

// The Landlock ABI this kernel confines compile children with; 0 when it has none (then compiles
// fail unless allowed unconfined).
int CompileConfinementAbi();

class Compiler {
 public:
  explicit Compiler(CompilerOptions opts);
  ~Compiler();
  Compiler(const Compiler&) = delete;
  Compiler& operator=(const Compiler&) = delete;

  // Compiles on the pool; the future never throws.
  std::future<CompileResult> Submit(CompileRequest req);
  // Compiles on the calling thread (cache still used).
  CompileResult CompileNow(const CompileRequest& req);

  // "13.0" from nvrtcVersion.
  static std::string NvrtcVersion();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace forgek
