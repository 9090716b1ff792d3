// An operator: semantics, tensors, configs, golden, expert reference, seed and families.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "forgek/core/diagnostic.h"
#include "forgek/core/expr.h"

namespace forgek {

enum class DType { f64, f32, f16, bf16, e4m3, e5m2, i8, u8, i32, u32, i64 };
bool ParseDType(const std::string& s, DType* out);
const char* DTypeName(DType t);
int DTypeBytes(DType t);
bool DTypeIsFloat(DType t);

enum class TensorRole { input, output, inout };
const char* TensorRoleName(TensorRole r);  // "input" | "output" | "inout"

// How an input is filled: never zeros, fresh values for every seed.
struct InitSpec {
  std::string dist = "normal";  // normal | uniform | int_range | probs | partition
  double mean = 0, stddev = 1;  // normal
  double lo = -1, hi = 1;       // uniform; int_range uses [lo, hi)
  std::string hi_expr;          // int_range: upper bound as an expression (e.g. "E"), overrides hi
  // partition: the tensor's elements are uneven random parts (each >= part_min and a multiple
  // of `multiple`) summing to `total`, an expression over params (MoE group sizes).
  std::string total_expr;
  int64_t total = 0;            // total_expr evaluated under one config (the worker's copy)
  int64_t multiple = 1, part_min = 0;
};

struct TensorSpec {
  std::string name;
  TensorRole role = TensorRole::input;
  DType dtype = DType::f32;
  std::vector<std::string> shape;  // expressions, outermost first
  InitSpec init;                   // inputs and inouts
};

struct ScalarSpec {
  std::string name;
  DType dtype = DType::f32;  // f32, i32 or i64
  double value = 0;
};

struct ConfigSpec {
  std::string name;
  Bindings values;  // every param of the operator
};

// The sizes a kernel of this operator must accept for one param (operator.json "ranges"): every
// multiple of `multiple_of` in [min, max]. Shapes outside the suite are drawn from them.
struct ParamRange {
  int64_t min = 1;
  int64_t max = 1;
  int64_t multiple_of = 1;
};

struct Tolerance {
  double rel_l2 = 0;
  double max_abs = 0;
  bool exact = false;           // integer outputs: bit-exact
  std::string check = "elementwise";  // elementwise | distribution
  // Exact outputs that are discontinuous in the input (a sampled index): the fraction of
  // elements allowed to differ from the golden; 0 = every element must match.
  double max_mismatch_fraction = 0;
  std::string why;
};

struct ReferenceSpec {
  std::string library;  // a library id built into the worker ("cublas.gemm_bf16"), or ""
  std::string kernel;   // a candidate file relative to the operator folder, or ""
  // {"kernel": FILE, "params": {...}}: the reference is FILE's instance at these values (each in
  // FILE's domain; LoadReferenceKernel narrows the domains), so a seed and its reference can share
  // one file. Empty: FILE's params are fixed.
  std::map<std::string, int64_t> params;
};
// "FILE", or "FILE at A=1, B=2" for the instance of FILE that operator.json names.
std::string InstanceText(const std::string& file, const std::map<std::string, int64_t>& params);
// "library cublas.gemm_bf16", "kernel reference.cu", or "kernel split_kv.cu at SPLIT=512".
std::string ReferenceText(const ReferenceSpec& r);

struct OperatorSpec {
  std::string dir;   // absolute folder
  std::string path;  // absolute path of operator.json
  std::string name;
  std::vector<std::string> aliases;
  std::string category;
  std::string description;
  std::vector<std::string> params;
  std::vector<ConfigSpec> configs;
  std::map<std::string, ParamRange> ranges;  // optional; params without one keep a suite config's value
  std::vector<TensorSpec> tensors;
  std::vector<ScalarSpec> scalars;
  std::string flops;  // expression
  std::string bytes;  // expression
  Tolerance tolerance;
  std::string golden;                 // path relative to dir
  ReferenceSpec reference;
  std::string seed;                   // path relative to dir
  // "seed": {"kernel": FILE, "params": {...}}: the seed is FILE's instance at these values (each in
  // FILE's domain of that param; LoadSeed narrows the domains). Empty for "seed": "FILE".
  std::map<std::string, int64_t> seed_params;
  std::vector<std::string> families;  // paths relative to dir
  // "yardstick": {"torch_ops": NAME}: PyTorch's own form of the operator, an entry of the shipped
  // scripts/torch_ops.py, timed beside forgek's kernels (docs/importing.md, "PyTorch as the
  // yardstick"); "" when none is named. An operator whose golden is a PyTorch problem needs none.
  std::string yardstick_torch_ops;

  // "seed.cu", or "families/x.cu at BM=128, BN=128" for a seed that is one instance of a file.
  std::string SeedText() const;
  const ConfigSpec* FindConfig(const std::string& name) const;
  const TensorSpec* FindTensor(const std::string& name) const;
  // Element counts of a tensor's shape under a config; false with diag on error.
  bool TensorShape(const TensorSpec& t, const Bindings& config, std::vector<int64_t>* shape,
                   Diagnostic* diag) const;
  // The dtype whose tensor-core peak bounds the arithmetic (SOL %, rooflines): the first float
  // tensor that is read, f32 when none is.
  DType ComputeDType() const;
};

// Loads and fully validates dir/operator.json (every field, every expression under every
// config, every referenced file exists). Returns false with every problem found in `diags`;
// `out` is untouched then (nothing is half-loaded).
bool LoadOperator(const std::string& dir, OperatorSpec* out, Diagnostics* diags);

// The operator folders under `root` (those holding an operator.json), sorted by name.
std::vector<std::string> ListOperatorDirs(const std::string& root);

// Resolves a name or alias to its folder under `root`; false with a message listing close
// matches when unknown.
bool ResolveOperator(const std::string& root, const std::string& name_or_alias, std::string* dir,
                     std::string* err);

}  // namespace forgek
