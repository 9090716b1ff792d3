// The toy operator of the run-loop tests: y = f(x) over N floats, two configs, a scripted reference.
#pragma once

#include <string>
#include <vector>

#include "forgek/core/operator_spec.h"

namespace forgek {

// `dir` is the operator's folder (its golden.cu and families are the caller's to write there).
inline OperatorSpec ToyOperator(const std::string& dir, std::vector<std::string> families) {
  OperatorSpec op;
  op.name = "toy";
  op.category = "elementwise";
  op.dir = dir;
  op.path = dir + "/operator.json";
  op.params = {"N"};
  op.configs = {{"small", {{"N", 1 << 12}}}, {"large", {{"N", 1 << 20}}}};
  op.tensors = {{"x", TensorRole::input, DType::f32, {"N"}, {}}, {"y", TensorRole::output, DType::f32, {"N"}, {}}};
  op.flops = "N";
  op.bytes = "8*N";
  op.tolerance.rel_l2 = 1e-5;
  op.tolerance.max_abs = 1e-5;
  op.reference.library = "scripted.reference";
  op.golden = "golden.cu";
  op.families = std::move(families);
  return op;
}

}  // namespace forgek
