// The Python of the torch export: the torch-free shapes module and the package's __init__.py.
#pragma once

#include <string>

#include "forgek/core/operator_spec.h"
#include "forgek/knowledge/store.h"

namespace forgek {

// _shapes.py for `op`: each tensor's shape as a Python function generated from the operator's
// expression trees (Expr::Eval's int64 semantics and messages), the sizes read from the inputs'
// shapes, and the check of every input shape against them. It imports nothing, so it runs without
// torch. False with *err when a name of the operator is no Python identifier.
bool TorchShapesModule(const OperatorSpec& op, std::string* out, std::string* err);

// __init__.py of the package forgek_<op> for `seal`: builds forgek_<op>.c beside it into a cached
// shared library, loads it with ctypes and registers torch.ops.forgek.<op> with its fake.
bool TorchPackageInit(const OperatorSpec& op, const SealRecord& seal, std::string* out, std::string* err);

}  // namespace forgek
