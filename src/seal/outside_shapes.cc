// Shapes outside the suite drawn within operator.json's ranges, and correctness checks on them.
#include "forgek/seal/outside_shapes.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "forgek/core/candidate.h"

namespace forgek {
namespace {

// A drawn shape's tensors together stay below this, so that a check never runs the device out of
// memory (the golden's fp32 outputs and rotated copies come on top).
constexpr int64_t kMaxShapeBytes = int64_t{4} << 30;

std::string ShapeName(const OperatorSpec& op, const Bindings& values) {
  std::string name = "outside ";
  for (size_t i = 0; i < op.params.size(); ++i)
    name += (i ? "," : "") + op.params[i] + "=" + std::to_string(values.at(op.params[i]));
  return name;
}

// Log-uniform among the multiples of r.multiple_of in [r.min, r.max].
int64_t DrawInRange(const ParamRange& r, std::mt19937_64& rng) {
  const int64_t lo = (r.min + r.multiple_of - 1) / r.multiple_of, hi = r.max / r.multiple_of;  // in multiples
  std::uniform_real_distribution<double> u(std::log(static_cast<double>(lo)), std::log(static_cast<double>(hi) + 1));
  const int64_t k = std::clamp(static_cast<int64_t>(std::exp(u(rng))), lo, hi);
  return k * r.multiple_of;
}

bool TensorsFit(const OperatorSpec& op, const Bindings& values) {
  int64_t total = 0;
  for (const TensorSpec& t : op.tensors) {
    std::vector<int64_t> shape;
    Diagnostic d;
    if (!op.TensorShape(t, values, &shape, &d)) return false;
    int64_t elements = 1;
    for (int64_t s : shape) {
      if (s < 1 || elements > kMaxShapeBytes / s) return false;
      elements *= s;
    }
    const int64_t bytes = elements * std::max(1, DTypeBytes(t.dtype));
    if (bytes > kMaxShapeBytes - total) return false;
    total += bytes;
  }
  return true;
}

}  // namespace

std::vector<ConfigSpec> DrawOutsideShapes(const OperatorSpec& op, const ShapeFilter& accepts, int count,
                                          uint64_t seed) {
  std::vector<ConfigSpec> out;
  if (op.ranges.empty() || op.configs.empty() || count <= 0) return out;
  std::set<Bindings> seen;
  for (const ConfigSpec& c : op.configs) seen.insert(c.values);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> base(0, op.configs.size() - 1);
  for (int tries = 0; tries < 400 && static_cast<int>(out.size()) < count; ++tries) {
    Bindings values = op.configs[base(rng)].values;
    for (const auto& [param, range] : op.ranges) values[param] = DrawInRange(range, rng);
    if (seen.count(values) || !TensorsFit(op, values) || !accepts(values)) continue;
    seen.insert(values);
    out.push_back({ShapeName(op, values), values});
  }
  return out;
}

bool KernelAcceptsShape(const OperatorSpec& op, const KernelUnderTest& kernel, const Bindings& values,
                        int64_t num_sms) {
  if (!TensorsFit(op, values)) return false;
  if (!kernel.library.empty()) return true;
  ResolvedCandidate rc;
  Diagnostics diags;
  return ResolveCandidate(kernel.manifest, op, kernel.params, values, num_sms, &rc, &diags);
}

OutsideCheck CheckOutsideShapes(Evaluator& evaluator, const OperatorSpec& op, const KernelUnderTest& golden,
                                const std::string& label, const KernelUnderTest& kernel, int count, uint64_t seed,
                                double deadline_s) {
  OutsideCheck check;
  check.kernel = label;
  if (op.ranges.empty()) {
    check.detail = "operator.json declares no \"ranges\": no shape outside the suite was checked";
    return check;
  }
  OperatorSpec outside = op;
  // Shapes the kernels accept on the evaluator's device, where the worker will resolve them.
  const int64_t num_sms = DeviceSmCountOr(&evaluator, kernel.manifest.archs.empty() ? "sm90" : kernel.manifest.archs[0]);
  outside.configs = DrawOutsideShapes(
      op,
      [&](const Bindings& v) {
        return KernelAcceptsShape(op, kernel, v, num_sms) && KernelAcceptsShape(op, golden, v, num_sms);
      },
      count, seed);
  if (outside.configs.empty()) {
    check.detail = "no shape within operator.json's ranges that it accepts (outside the suite)";
    return check;
  }
  for (const ConfigSpec& c : outside.configs) check.shapes.push_back(c.name);
  EvalRequest req;
  req.op = &outside;
  req.candidate = kernel;
  req.golden = golden;
  req.time = false;
  req.seeds = 1;
  req.deadline_s = deadline_s;
  EvalResult r = evaluator.Evaluate(req);
  check.ok = r.outcome == Outcome::correct;
  if (!check.ok) check.detail = OutcomeName(r.outcome) + (r.detail.empty() ? "" : ": " + r.detail);
  return check;
}

std::string OutsideCheckText(const OutsideCheck& c) {
  if (c.shapes.empty()) return c.kernel + ": " + c.detail;
  std::string shapes;
  for (const std::string& s : c.shapes) shapes += (shapes.empty() ? "" : "; ") + s.substr(s.find(' ') + 1);
  const std::string n = std::to_string(c.shapes.size()) + (c.shapes.size() == 1 ? " shape" : " shapes");
  return c.ok ? c.kernel + ": correct on " + n + " outside the suite (" + shapes + ")"
              : c.kernel + ": WRONG outside the suite (" + shapes + "): " + c.detail;
}

}  // namespace forgek
