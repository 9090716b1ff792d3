// Choosing and preparing the kernels a run measures against: the incumbent and the expert reference.
#pragma once

#include <string>

#include "forgek/candidate.h"
#include "forgek/compile.h"
#include "forgek/evaluation.h"
#include "forgek/operator_spec.h"

namespace forgek {

class Store;

struct Incumbent {
  KernelUnderTest kernel;
  std::string label;     // "reference (cublas.gemm_bf16)", "seal 3f2a..."
  std::string seal_id;   // "" when the expert reference is the incumbent
  bool has_source = false;
  Candidate source;      // the incumbent's candidate when it is a kernel
};

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

// The run's incumbent: the latest seal of (operator, arch) in `store` (recompiled from its stored
// source), else the expert reference.
bool PickIncumbent(const OperatorSpec& op, const std::string& arch, Store* store, Compiler& compiler,
                   Incumbent* out, std::string* err);

}  // namespace forgek
