// `forgek ops validate` of an operator whose golden is a PyTorch problem file (docs/importing.md).
#pragma once

#include "forgek/core/diagnostic.h"
#include "forgek/core/operator_spec.h"

namespace forgek::cli {

// Describes the golden (a KernelBench problem, or a FlashInfer-Bench definition) at the first
// config, its size constants (axes) given the config's values, and checks that it agrees with
// operator.json: every problem input (and Model parameter) is an input of the same name, dtype and
// shape; the outputs are the operator's, in order, with the same dtypes and shapes; a definition's
// scalar inputs are scalars of the same dtype and value. Each disagreement, or the problem's
// refusal, is a diagnostic of field "golden".
void CheckTorchGolden(const OperatorSpec& op, Diagnostics* diags);

}  // namespace forgek::cli
