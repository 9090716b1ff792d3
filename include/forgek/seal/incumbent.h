// Choosing and preparing the kernels a run measures against: the incumbent and the expert reference.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "forgek/core/candidate.h"
#include "forgek/compile/compile.h"
#include "forgek/core/evaluation.h"
#include "forgek/core/operator_spec.h"

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
  // Configs outside the table follow the one rule (ServeOutsideTable): the fallback where it
  // accepts the shape, else the expert reference.
  std::map<std::string, DispatchKernel> per_config;
  std::set<std::string> reference_configs;  // configs a dispatch seal leaves to the expert reference
  bool dispatch = false;                     // the seal has a dispatch table
  bool fallback_reference = false;           // its fallback is the expert reference
  std::optional<DispatchKernel> fallback;    // its fallback when that is a kernel (none: `kernel`)
  // Newer seals passed over because they cannot be loaded (the store lacks their candidate or a
  // candidate of their dispatch table, or that table cannot be read), one line each (for the run's
  // degraded notes).
  std::vector<std::string> skipped_seals;
  const KernelUnderTest& For(const std::string& config) const {
    auto it = per_config.find(config);
    return it == per_config.end() ? kernel : it->second.kernel;
  }
  // The kernel a dispatch seal serves shapes outside its table with, before a shape is known: the
  // fallback kernel, or `kernel` for a single-kernel seal (null: the expert reference).
  const KernelUnderTest* FallbackKernel() const {
    if (fallback_reference) return nullptr;
    return fallback ? &fallback->kernel : &kernel;
  }
};

// The one rule of a dispatch seal for a shape its table does not name (forgek's runs, `seal
// verify` and an export's reader alike, docs/seal-format.md): its fallback kernel where that
// accepts the shape, else the expert reference. Fills inc->per_config for every config of `op`
// outside the table (the expert's kernel where it serves, those configs also in reference_configs,
// as are the table's own reference rows); a seal without a table is left as it is. "Accepts" is
// judged on a device of `num_sms` SMs, as the export's call judges it on the device it runs on.
void ServeOutsideTable(const OperatorSpec& op, const KernelUnderTest& expert, int64_t num_sms, Incumbent* inc);

// The dispatch table of a seal's metadata ({"dispatch": {...}}, docs/seal-format.md), compiled into
// inc's per_config, reference_configs, dispatch, fallback and fallback_reference: false with `err`
// when the metadata names a kernel the store lacks or that no longer compiles. A seal without a
// dispatch table leaves them empty.
bool LoadDispatchKernels(const SealRecord& seal, const std::string& arch, Store& store, Compiler& compiler,
                         Incumbent* inc, std::string* err);

// The one way a candidate is compiled and run: its compile request (file name, source, the params as
// -D defines) and, from the cubin, the kernel the evaluator launches.
CompileRequest CandidateCompileRequest(const Candidate& c, const ParamAssignment& params, const std::string& arch);
KernelUnderTest CandidateKernel(const std::string& label, std::string cubin, const Candidate& c,
                                const ParamAssignment& params);

// Compiles `c` with `params` into a runnable kernel; on a compile error returns false with the
// compiler's actionable summary in `feedback`.
bool CompileKernel(Compiler& compiler, const std::string& arch, const Candidate& c, const ParamAssignment& params,
                   const std::string& label, KernelUnderTest* out, CompileResult* result, std::string* feedback);

// A sealed kernel as it was sealed: the store's cubin of `sealed_sha` when it holds it (nothing is
// compiled), else `c` compiled with `params` now. A rebuild that hashes to `sealed_sha` is kept in
// the store flagged `rebuilt` (a seal from before stores kept binaries), where the store takes
// writes; one that differs is used with a warning naming both toolchains (`sealed_toolchain`).
// False with the compiler's summary in `feedback` when it must be compiled and does not compile.
bool LoadSealedKernel(Store& store, Compiler& compiler, const std::string& arch, const Candidate& c,
                      const ParamAssignment& params, const std::string& sealed_sha, const std::string& sealed_toolchain,
                      const std::string& label, KernelUnderTest* out, std::string* feedback);

// A rebuild of a sealed kernel that hashes to `sealed_sha` is the sealed cubin: kept in the store,
// flagged `rebuilt`, where the store takes writes. False (nothing kept) when it differs.
bool KeepRebuiltCubin(Store& store, const std::string& sealed_sha, const std::string& cubin, const std::string& label);

// Every cubin `seal` names: its own and each kernel's of its dispatch table (read as
// LoadDispatchKernels reads it); false with `err` when that table is malformed.
bool SealCubins(const SealRecord& seal, std::vector<std::string>* shas, std::string* err);

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
