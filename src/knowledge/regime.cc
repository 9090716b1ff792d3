// Shape regimes: the coarse classes of input sizes that a decision is scoped to.
#include <algorithm>

#include "forgek/knowledge/knowledge.h"

namespace forgek {

namespace {

// Categories whose speed is decided by the tensor cores and the tile shape.
bool GemmLike(const std::string& category) {
  return category == "gemm" || category == "conv" || category == "attention" || category == "moe";
}

// A problem that fits in L2 (60 MiB on H200/H100 50 MiB) behaves differently from a streaming one.
constexpr double kSmallBytes = 32.0 * 1024 * 1024;
// Below a 2048^3 GEMM the grid no longer fills the machine for long.
constexpr double kSmallFlops = 2.0 * 2048.0 * 2048.0 * 2048.0;
constexpr int64_t kSkinnyDim = 256;

}  // namespace

std::string ShapeRegime(const OperatorSpec& op, const std::string& config) {
  const ConfigSpec* c = op.FindConfig(config);
  if (!c) return "any";
  Diagnostic diag;
  int64_t flops = 0, bytes = 0;
  bool have_flops = !op.flops.empty() && EvalExpression(op.flops, c->values, &flops, &diag);
  bool have_bytes = !op.bytes.empty() && EvalExpression(op.bytes, c->values, &bytes, &diag);
  if (GemmLike(op.category)) {
    auto m = c->values.find("M"), n = c->values.find("N");
    if (m != c->values.end() && n != c->values.end() && std::min(m->second, n->second) <= kSkinnyDim) return "skinny";
    if (!have_flops) return "any";
    return static_cast<double>(flops) < kSmallFlops ? "small" : "large";
  }
  if (!have_bytes) return "any";
  return static_cast<double>(bytes) < kSmallBytes ? "small" : "large";
}

}  // namespace forgek
