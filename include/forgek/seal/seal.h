// Seals: building the record of a new seal, finding them, exporting a self-contained folder,
// comparing two of them, and verifying one again on the GPU.
#pragma once

#include <map>
#include <string>

#include "forgek/compile/compile.h"
#include "forgek/core/operator_spec.h"
#include "forgek/knowledge/store.h"
#include "forgek/verdict/verdict.h"

namespace forgek {

// What a seal records besides its confirmation: where the kernel comes from and what it replaces.
struct SealOrigin {
  std::string operator_name, arch;
  std::string candidate_hash, cubin_sha256;
  ParamAssignment params;
  std::string family, rationale;
  std::vector<std::string> mechanisms;
  std::string parent;           // the incumbent's seal id ("" when the incumbent is the expert reference)
  std::string incumbent_label;  // what the confirmation was timed against
  std::string run_id, toolchain, driver, device;
  // A dispatch seal: its table (metadata.dispatch, docs/seal-format.md) as JSON text, and the table
  // entry that served each confirmed config. Empty for a seal of one kernel.
  std::string dispatch_json;
  std::map<std::string, int> kernel_of_config;
};

// The record of a new seal from a confirmation that `verdict` (DecideSeal) sealed: per-config times,
// the geomean speedup over the incumbent, metadata, and an id unique to this sealing.
SealRecord BuildSealRecord(const SealOrigin& origin, const EvalResult& confirmation, const SealVerdict& verdict);

// A seal by full id or unique prefix (at least 4 characters).
bool FindSeal(Store& store, const std::string& id_or_prefix, SealRecord* out, std::string* err);

// Writes the folder of docs/seal-format.md: kernel.cu, kernel.cubin, launch.json (launches
// resolved per config), seal.json (metadata and lineage), README.md. The cubin is rebuilt from
// the sealed source and must hash to the sealed cubin hash (else an error naming both toolchains,
// unless `allow_rebuilt` is set). The folder must not exist or be empty; it is written in a
// temporary sibling and renamed, so a failure leaves nothing half-written.
bool ExportSeal(Store& store, const SealRecord& seal, const OperatorSpec& op, Compiler& compiler,
                const std::string& dir, bool allow_rebuilt, std::string* err);

// Writes forgek_<op>.h and forgek_<op>.c into `dir` (docs/seal-format.md "The C export"): the
// seal's cubins embedded as byte arrays and one function per operator that plans the launches for
// any sizes with C generated from the manifests' expression trees (constraints and the driver's
// limits checked, an unsupported size an error code), picks a dispatch seal's kernel by the one
// rule, loads each module once per CUDA context and launches with the driver API alone. The
// cubins are those the store keeps (nothing is compiled, so a store copied to another machine
// exports as is); a seal the store keeps none of is rebuilt as ExportSeal rebuilds it, under the same
// `allow_rebuilt` rule. The folder rules of ExportSeal apply.
bool ExportSealC(Store& store, const SealRecord& seal, const OperatorSpec& op, Compiler& compiler,
                 const std::string& dir, bool allow_rebuilt, std::string* err);
// "forgek_softmax_fp32": the C export's file stem and function prefix for an operator.
std::string CExportName(const std::string& operator_name);
// Writes the Python package `dir`/forgek_<op>/ (docs/seal-format.md "The torch export"): the C pair of
// ExportSealC, _shapes.py (the operator's shapes as Python generated from its expression trees, the
// sizes read from the inputs' shapes and the inputs checked against them, torch-free) and
// __init__.py, which on import builds the C with the system compiler into a cached shared library,
// loads it with ctypes and registers torch.ops.forgek.<op> (a functional custom op with a fake
// implementation, so it runs under torch.compile). Same store, rebuild and folder rules as ExportSealC.
bool ExportSealTorch(Store& store, const SealRecord& seal, const OperatorSpec& op, Compiler& compiler,
                     const std::string& dir, bool allow_rebuilt, std::string* err);

// Side-by-side differences of two seals: lineage, params, mechanisms, per-config times.
std::string SealDiffText(Store& store, const SealRecord& a, const SealRecord& b);
// The same comparison as JSON: both seals, params as [a, b], per-config times, descent.
std::string SealDiffJson(Store& store, const SealRecord& a, const SealRecord& b);

// A seal measured now: `seal` recompiled from its stored source and timed through `evaluator`,
// each config with the kernel that serves it, interleaved against the operator's expert reference;
// then every kernel it can serve checked beyond the suite (a dispatch's fallback on every config,
// shapes drawn within the operator's ranges). What `seal verify` judges and `forgek regress`
// classifies. `error` is set when it could not be measured (no longer compiles, ...).
struct SealMeasurement {
  std::string error;
  EvalResult result;
  VerifyVerdict verdict;                    // DecideVerify, the failures beyond the suite folded in
  std::vector<std::string> beyond_suite;    // one line per check beyond the suite's configs
  std::vector<std::string> problems;        // those of them that failed
};
SealMeasurement MeasureSeal(Evaluator& evaluator, Store& store, Compiler& compiler, const OperatorSpec& op,
                            const SealRecord& seal);

// `forgek seal verify`: `seal` recompiled from its stored source and re-measured now through
// `evaluator`, interleaved against the operator's expert reference, judged by DecideVerify. `text`
// is the report for a person, `json` the same for a program.
struct SealVerification {
  enum class Status { holds, regression, failure } status = Status::failure;
  std::string text, json;
};
SealVerification VerifySeal(Evaluator& evaluator, Store& store, Compiler& compiler, const OperatorSpec& op,
                            const SealRecord& seal);

// One seal as JSON (the seal.json of an export, without the launches).
std::string SealJson(const SealRecord& seal, const std::vector<SealRecord>& lineage);

}  // namespace forgek
