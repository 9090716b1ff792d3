// A candidate kernel: one .cu file with a manifest comment; families are candidates with param domains.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "forgek/core/diagnostic.h"
#include "forgek/core/expr.h"

namespace forgek {

struct OperatorSpec;

struct WorkspaceSpec {
  std::string name;
  std::string bytes;  // expression
  bool zero = false;  // memset to zero before each launch sequence, else poisoned
};

struct TensorMapSpec {
  std::string name;
  std::string tensor;               // operator tensor or workspace
  std::vector<std::string> box;     // expressions, outermost first
  std::vector<std::string> shape;   // optional view, outermost first (empty: the tensor's shape)
  std::string swizzle = "none";     // none | 32B | 64B | 128B
  std::string l2_promotion = "none";  // none | 64B | 128B | 256B
  std::string oob_fill = "none";    // none | nan
};

struct LaunchSpec {
  std::string kernel;
  std::vector<std::string> grid;     // 1-3 expressions
  std::vector<std::string> block;    // 1-3 expressions
  std::vector<std::string> cluster;  // 0-3 expressions
  std::string smem = "0";            // dynamic shared memory bytes
  std::vector<std::string> args;     // see docs/candidate-format.md
  std::string when;                  // expression: the launch runs where it is non-zero (empty: always)
  int line = 0;                      // line of this launch in the file, for diagnostics
};

// A parameter: one fixed value, or a domain of values (a family's gene).
struct ParamSpec {
  std::string name;
  std::vector<int64_t> values;  // size 1: fixed
};

// Which params set one mechanism (or one tuning choice such as the tile): two instances of a
// family that differ only in these params are a controlled comparison of that mechanism's settings.
struct ControlSpec {
  std::string mechanism;              // a claimed mechanism id, or a tuning choice ("tile")
  std::vector<std::string> params;    // the params that set it, in manifest order
};

// Where a parsed manifest came from: its file and text, so that an error found later, when the
// manifest is resolved under a config (a division by zero, a grid out of range), still names the
// file, line and column of the expression, as every other error of a manifest does.
class ManifestOrigin {
 public:
  // `text` is the candidate's source (or its start, up to the manifest's end); the manifest's JSON
  // lies in [begin, end) of it.
  ManifestOrigin(std::string file, std::string text, size_t begin, size_t end);
  ~ManifestOrigin();
  ManifestOrigin(const ManifestOrigin&) = delete;
  ManifestOrigin& operator=(const ManifestOrigin&) = delete;

  const std::string& file() const { return file_; }
  // Fills d.file, d.line and d.column for the value at JSON path `field`: at byte `index` of the
  // string there when index >= 0 (an expression's error column - 1, plus any prefix such as "i64:"),
  // else at the value. Safe to call from several threads.
  void Locate(const std::string& field, long index, Diagnostic* d) const;

 private:
  struct Index;
  std::string file_, text_;
  size_t begin_, end_;
  mutable std::once_flag once_;
  mutable std::unique_ptr<Index> index_;  // built on the first error only: most manifests never need it
};

struct CandidateManifest {
  std::string name;
  std::vector<std::string> archs;  // the archs it is written for (sm90, sm100); empty: every arch
  std::vector<std::string> mechanisms;
  std::vector<ControlSpec> controls;  // "controls": {"mechanism": ["PARAM", ...]}; a param in at most one
  std::vector<ParamSpec> params;                          // in file order
  std::vector<std::pair<std::string, std::string>> lets;  // in file order
  std::vector<std::string> constraints;
  std::vector<WorkspaceSpec> workspaces;
  std::vector<TensorMapSpec> tensor_maps;
  std::vector<LaunchSpec> launches;
  std::shared_ptr<const ManifestOrigin> origin;  // set by ParseCandidate; null for one built in memory

  bool IsFamily() const;  // any param with more than one value
  // The control group a param belongs to, or null.
  const ControlSpec* ControlOf(const std::string& param) const;
  bool ForArch(const std::string& arch) const;  // archs is empty or names `arch`
  std::string ArchsText() const;                // "sm90" or "sm90, sm100"; "every arch" when empty
};

struct Candidate {
  std::string path;    // file it came from ("" for text from an LLM)
  std::string source;  // the whole file text, manifest included
  CandidateManifest manifest;
};

// Parses the manifest comment of `source`. Errors carry the file, the JSON field path and the
// line and column in the .cu file. Does not check names against an operator: see Validate.
bool ParseCandidate(const std::string& path, const std::string& source, Candidate* out, Diagnostics* diags);
bool LoadCandidateFile(const std::string& path, Candidate* out, Diagnostics* diags);
// The operator's seed: its file, and for "seed": {"kernel", "params"} each named param's domain
// narrowed to its one value (which must lie in the file's domain, so that the instance is one the
// file itself declares: its source and params identify it like any family instance). Errors name
// operator.json's field.
bool LoadSeed(const OperatorSpec& op, Candidate* out, Diagnostics* diags);
// The operator's expert reference kernel, narrowed the same way for "reference": {"kernel", "params"}.
bool LoadReferenceKernel(const OperatorSpec& op, Candidate* out, Diagnostics* diags);

// Checks a parsed candidate against an operator: every expression parses and names only known
// params/lets/config params, every arg resolves, tensor maps name real tensors, etc.
bool ValidateCandidate(const Candidate& c, const OperatorSpec& op, Diagnostics* diags);

// One choice of a value for every param of a candidate (for a fixed candidate, its values).
using ParamAssignment = std::map<std::string, int64_t>;

// The reserved name every candidate expression may read for the multiprocessor count of the device
// its launches are for (a persistent grid of one block per SM: "min(units, num_sms)"). No operator
// param, candidate param, let, workspace or tensor map may take it (docs/expressions.md).
inline constexpr const char* kNumSmsName = "num_sms";
// The error for a name declared as kNumSmsName: it says why it is refused and what to do.
std::string ReservedNameMessage(const std::string& name);
// The count bound to num_sms where a manifest is resolved for no device (validation, the compile
// gate, a family's space, an LLM reply's checks): the target arch's parts, sm90 132 (H100 SXM, H200),
// sm100 148 (B200); any other arch, sm90's. Where a launch is for a real device, callers bind that
// device's CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT instead.
int64_t NominalSmCount(const std::string& arch);
// NominalSmCount of the first arch the manifest is written for (sm90 when it names none).
int64_t NominalSmCount(const CandidateManifest& m);

// The param assignment's constraints under a config hold, num_sms bound to `num_sms`. Fills `why`
// with the first failing constraint.
bool ConstraintsHold(const CandidateManifest& m, const ParamAssignment& params, const Bindings& config,
                     int64_t num_sms, std::string* why);

// A launch with every expression evaluated for one config and one param assignment.
struct ResolvedArg {
  enum class Kind { tensor, workspace, tensor_map, i32, i64, f32 } kind;
  std::string name;   // tensor / workspace / tensor map / scalar name, or the expression text
  int64_t i = 0;
  float f = 0;
};
// "tensor" | "workspace" | "tensor_map" | "i32" | "i64" | "f32", as manifests and exports write them.
const char* ResolvedArgKindName(ResolvedArg::Kind k);

struct ResolvedTensorMap {
  std::string name, tensor;
  std::vector<int64_t> shape, box;  // outermost first
  std::string swizzle, l2_promotion, oob_fill;
};
struct ResolvedLaunch {
  std::string kernel;
  int64_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, cluster[3] = {1, 1, 1};
  int64_t smem = 0;
  std::vector<ResolvedArg> args;
};
struct ResolvedCandidate {
  std::vector<std::pair<std::string, int64_t>> workspaces;  // name, bytes
  std::vector<bool> workspace_zero;
  std::vector<ResolvedTensorMap> tensor_maps;
  std::vector<ResolvedLaunch> launches;
};

// Every expression of `m` under one config and one param assignment, num_sms bound to `num_sms`: the
// device's count for a launch on a real device, else NominalSmCount. The result is for that count
// only: a grid that reads num_sms is not valid on a device with another.
bool ResolveCandidate(const CandidateManifest& m, const OperatorSpec& op, const ParamAssignment& params,
                      const Bindings& config, int64_t num_sms, ResolvedCandidate* out, Diagnostics* diags);

// The NVRTC -D options for an assignment ("-DBM=128", ...), in param order.
std::vector<std::string> ParamDefines(const ParamAssignment& params);

}  // namespace forgek
