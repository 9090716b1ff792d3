// Choosing and preparing the kernels a run measures against: the incumbent and the expert reference.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "forgek/candidate.h"
#include "forgek/compile.h"
#include "forgek/evaluation.h"
#include "forgek/operator_spec.h"

namespace forgek {

class Store;
struct SealRecord;

// One kernel of a dispatch seal: a stored candidate with its params, compiled.
struct DispatchKernel {
  KernelUnderTest kernel;
  std::string candidate_hash;
  std::string params_json = "{}";
  std::string cubin_sha256;
  std::string family;
};

struct Incumbent {
  KernelUnderTest kernel;  // the kernel of a single-kernel incumbent; a dispatch seal's fallback
  std::string label;     // "reference (cublas.gemm_bf16)", "seal 3f2a..."
  std::string seal_id;   // "" when the expert reference is the incumbent
  bool has_source = false;
  Candidate source;      // the incumbent's candidate when it is a kernel
  // A sealed incumbent's kernel as the store names it (what a dispatch seal's table copies).
  std::string candidate_hash, params_json = "{}", cubin_sha256;
  // A dispatch seal: the kernel serving each config of its table (empty: `kernel` serves all).
  // Configs outside the table are served by `kernel`.
  std::map<std::string, DispatchKernel> per_config;
  std::set<std::string> reference_configs;  // configs a dispatch seal leaves to the expert reference
  // Newer seals passed over because they cannot be loaded (the store lacks their candidate or a
  // candidate of their dispatch table, or that table cannot be read), one line each (for the run's
  // degraded notes).
  std::vector<std::string> skipped_seals;
  const KernelUnderTest& For(const std::string& config) const {
    auto it = per_config.find(config);
    return it == per_config.end() ? kernel : it->second.kernel;
  }
};

// The dispatch table of a seal's metadata ({"dispatch": {...}}, docs/seal-format.md), compiled:
// false with `err` when the metadata names a kernel the store lacks or that no longer compiles.
// A seal without a dispatch table leaves `per_config` empty.
bool LoadDispatchKernels(const SealRecord& seal, const std::string& arch, Store& store, Compiler& compiler,
                         std::map<std::string, DispatchKernel>* per_config, std::set<std::string>* reference_configs,
                         std::string* err);

// Compiles `c` with `params` into a runnable kernel; on a compile error returns false with the
// compiler's actionable summary in `feedback`.
bool CompileKernel(Compiler& compiler, const std::string& arch, const Candidate& c, const ParamAssignment& params,
                   const std::string& label, KernelUnderTest* out, CompileResult* result, std::string* feedback);

// The operator's expert reference: a library call, or its expert kernel compiled.
bool PrepareExpertReference(const OperatorSpec& op, const std::string& arch, Compiler& compiler, Incumbent* out,
                            std::string* err);

// The operator's golden kernel compiled (it writes fp32 outputs: the truth of every check).
bool PrepareGolden(const OperatorSpec& op, const std::string& arch, Compiler& compiler, KernelUnderTest* out,
                   std::string* err);

// The run's incumbent: the latest seal of (operator, arch) in `store` that can be loaded (the store
// holds its candidate and every candidate of its dispatch table, and that table can be read),
// recompiled from its stored source, else the expert reference. Seals passed over are listed in
// out->skipped_seals.
bool PickIncumbent(const OperatorSpec& op, const std::string& arch, Store* store, Compiler& compiler,
                   Incumbent* out, std::string* err);

}  // namespace forgek
