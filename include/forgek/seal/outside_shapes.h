// Shapes outside an operator's suite, drawn within the ranges it declares, and the check that a
// kernel a seal may serve is correct on them (docs/seal-format.md "Shapes outside the suite").
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "forgek/core/evaluation.h"
#include "forgek/core/operator_spec.h"

namespace forgek {

// True when a kernel (or the golden, or the tensors) can take a shape.
using ShapeFilter = std::function<bool(const Bindings& values)>;

// Up to `count` distinct shapes, none of them a suite config, that `accepts` takes. A param with a
// range (operator.json "ranges") is drawn log-uniformly among its multiples, so small and large
// sizes both come up; the others keep the values of a suite config drawn first. Deterministic in
// `seed`; fewer than `count` when a bounded number of tries finds no more. Named "outside P=V,...".
std::vector<ConfigSpec> DrawOutsideShapes(const OperatorSpec& op, const ShapeFilter& accepts, int count,
                                          uint64_t seed);

// True when `kernel` (a library call: always; a compiled candidate: where its manifest resolves,
// constraints and launch limits included, on a device of `num_sms` SMs) and the operator's tensors
// take `values`.
bool KernelAcceptsShape(const OperatorSpec& op, const KernelUnderTest& kernel, const Bindings& values,
                        int64_t num_sms);

// One kernel checked on shapes outside the suite.
struct OutsideCheck {
  std::string kernel;               // the caller's label for it
  std::vector<std::string> shapes;  // the shapes checked ("outside M=100,N=64,K=192")
  bool ok = true;                   // correct on every one of them
  std::string detail;               // the first failure, or why nothing was checked
};

// Checks `kernel` for correctness (no timing) on up to `count` shapes outside the suite that it and
// the golden accept. An operator without ranges checks nothing and says so in `detail` (ok stays
// true: nothing was found wrong, and the caller reports that nothing was checked).
OutsideCheck CheckOutsideShapes(Evaluator& evaluator, const OperatorSpec& op, const KernelUnderTest& golden,
                                const std::string& label, const KernelUnderTest& kernel, int count, uint64_t seed,
                                double deadline_s);

// "kernel K: correct on 3 shapes outside the suite (outside M=..., ...)" or its failure, one line.
std::string OutsideCheckText(const OutsideCheck& c);

}  // namespace forgek
