// Evaluating a candidate for one config and one param assignment: constraints, launches, arguments.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "core/json_location.h"
#include "forgek/candidate.h"
#include "forgek/operator_spec.h"
#include "forgek/spec_limits.h"

namespace forgek {

namespace {

// Limits of the CUDA launch API (the driver rejects anything beyond them with a bare error code).
constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxGridYZ = 65535;
constexpr int64_t kMaxBlockXY = 1024;
constexpr int64_t kMaxBlockZ = 64;
constexpr int64_t kMaxBlockThreads = 1024;
constexpr int64_t kMaxClusterBlocks = 16;  // 8 portable, 16 with the non-portable attribute
constexpr int64_t kMaxTensorMapBox = 256;

std::string ConfigText(const Bindings& config) {
  std::string out;
  for (const auto& [k, v] : config) out += (out.empty() ? "" : ",") + k + "=" + std::to_string(v);
  return out;
}

// The bindings of one instance: config params, candidate params, then lets in order.
bool BindInstance(const CandidateManifest& m, const ParamAssignment& params, const Bindings& config, Bindings* out,
                  std::string* why, std::string* field) {
  Bindings b = config;
  for (const auto& [name, value] : params) b[name] = value;
  for (const auto& [name, text] : m.lets) {
    Diagnostic d;
    int64_t v;
    if (!EvalExpression(text, b, &v, &d)) {
      *field = JsonPathKey("let", name);
      *why = "let " + name + " = " + text + ": " + d.message;
      return false;
    }
    b[name] = v;
  }
  *out = std::move(b);
  return true;
}

class Resolver {
 public:
  Resolver(const CandidateManifest& m, const OperatorSpec& op, const Bindings& vars, Diagnostics* diags)
      : m_(m), op_(op), vars_(vars), diags_(diags), first_(diags->size()) {}

  bool Resolve(ResolvedCandidate* out) {
    ResolvedCandidate r;
    for (size_t i = 0; i < m_.workspaces.size(); ++i) {
      int64_t bytes = 0;
      Eval(JsonPathKey(JsonPathIndex("workspaces", i), "bytes"), m_.workspaces[i].bytes, 0,
           std::numeric_limits<int64_t>::max(), &bytes);
      r.workspaces.emplace_back(m_.workspaces[i].name, bytes);
      r.workspace_zero.push_back(m_.workspaces[i].zero);
    }
    for (size_t i = 0; i < m_.tensor_maps.size(); ++i) r.tensor_maps.push_back(ResolveTensorMap(i));
    // A launch whose `when` is 0 does not run for this config (a family picking a kernel per shape);
    // its other fields are not evaluated, so they need not be valid there.
    const size_t before_launches = diags_->size();
    for (size_t i = 0; i < m_.launches.size(); ++i) {
      const std::string& when = m_.launches[i].when;
      int64_t runs = 1;
      if (!when.empty() && !Eval(JsonPathKey(JsonPathIndex("launches", i), "when"), when,
                                 std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), &runs))
        continue;
      if (runs != 0) r.launches.push_back(ResolveLaunch(i));
    }
    // Only a `when` that failed to evaluate leaves no launch and a diagnostic behind.
    if (r.launches.empty() && diags_->size() == before_launches)
      Error("launches", "no launch runs: the 'when' of every launch is 0");
    if (diags_->size() > first_) return false;
    *out = std::move(r);
    return true;
  }

 private:
  void Error(const std::string& field, const std::string& message) {
    diags_->push_back({"", field, 0, 0, message + " (config " + ConfigText(vars_) + ")"});
  }

  bool Eval(const std::string& field, const std::string& text, int64_t lo, int64_t hi, int64_t* out) {
    Diagnostic d;
    if (!EvalExpression(text, vars_, out, &d)) {
      Error(field, "'" + text + "': " + d.message);
      return false;
    }
    if (*out < lo || *out > hi) {
      Error(field, "'" + text + "' is " + std::to_string(*out) + "; must be in [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]");
      return false;
    }
    return true;
  }

  ResolvedTensorMap ResolveTensorMap(size_t i) {
    const TensorMapSpec& t = m_.tensor_maps[i];
    std::string path = JsonPathIndex("tensor_maps", i);
    ResolvedTensorMap r{t.name, t.tensor, {}, {}, t.swizzle, t.l2_promotion, t.oob_fill};
    if (!t.shape.empty()) {
      for (size_t d = 0; d < t.shape.size(); ++d) {
        int64_t v = 1;
        Eval(JsonPathIndex(JsonPathKey(path, "shape"), d), t.shape[d], 1, std::numeric_limits<int64_t>::max(), &v);
        r.shape.push_back(v);
      }
    } else if (const TensorSpec* tensor = op_.FindTensor(t.tensor)) {
      Diagnostic d;
      if (!op_.TensorShape(*tensor, vars_, &r.shape, &d)) Error(JsonPathKey(path, "tensor"), d.message);
    } else {
      Error(JsonPathKey(path, "tensor"), "'" + t.tensor + "' is not a tensor of the operator; give a shape");
    }
    for (size_t d = 0; d < t.box.size(); ++d) {
      int64_t v = 1;
      Eval(JsonPathIndex(JsonPathKey(path, "box"), d), t.box[d], 1, kMaxTensorMapBox, &v);
      r.box.push_back(v);
    }
    if (!r.shape.empty() && r.box.size() != r.shape.size())
      Error(JsonPathKey(path, "box"), "box rank " + std::to_string(r.box.size()) + " differs from shape rank " +
                                          std::to_string(r.shape.size()));
    return r;
  }

  // Up to three dimensions into dims[0..2] (the rest stay 1), each within [1, max[d]].
  void Dims(const std::string& path, const std::vector<std::string>& exprs, const int64_t max[3], int64_t dims[3]) {
    for (size_t d = 0; d < exprs.size() && d < 3; ++d) Eval(JsonPathIndex(path, d), exprs[d], 1, max[d], &dims[d]);
  }

  ResolvedLaunch ResolveLaunch(size_t i) {
    const LaunchSpec& l = m_.launches[i];
    std::string path = JsonPathIndex("launches", i);
    ResolvedLaunch r;
    r.kernel = l.kernel;
    const int64_t grid_max[3] = {kMaxGridX, kMaxGridYZ, kMaxGridYZ};
    const int64_t block_max[3] = {kMaxBlockXY, kMaxBlockXY, kMaxBlockZ};
    const int64_t cluster_max[3] = {kMaxClusterBlocks, kMaxClusterBlocks, kMaxClusterBlocks};
    Dims(JsonPathKey(path, "grid"), l.grid, grid_max, r.grid);
    Dims(JsonPathKey(path, "block"), l.block, block_max, r.block);
    Dims(JsonPathKey(path, "cluster"), l.cluster, cluster_max, r.cluster);
    int64_t threads = r.block[0] * r.block[1] * r.block[2];
    if (threads > kMaxBlockThreads)
      Error(JsonPathKey(path, "block"), "a block of " + std::to_string(threads) + " threads exceeds 1024");
    int64_t cluster_blocks = r.cluster[0] * r.cluster[1] * r.cluster[2];
    if (cluster_blocks > kMaxClusterBlocks)
      Error(JsonPathKey(path, "cluster"), "a cluster of " + std::to_string(cluster_blocks) + " blocks exceeds 16");
    for (int d = 0; d < 3; ++d)
      if (r.grid[d] % r.cluster[d] != 0)
        Error(JsonPathKey(path, "grid"), "grid dimension " + std::to_string(d) + " (" + std::to_string(r.grid[d]) +
                                             ") is not a multiple of the cluster dimension (" +
                                             std::to_string(r.cluster[d]) + ")");
    Eval(JsonPathKey(path, "smem"), l.smem, 0, std::numeric_limits<int32_t>::max(), &r.smem);
    if (r.smem > kMaxDynamicSmemBytes)
      Error(JsonPathKey(path, "smem"), std::to_string(r.smem) + " bytes of dynamic shared memory exceed the " +
                                           std::to_string(kMaxDynamicSmemBytes) +
                                           " (227 KiB) a block may opt in to on sm90 and sm100");
    for (size_t a = 0; a < l.args.size(); ++a) r.args.push_back(ResolveArg(JsonPathIndex(JsonPathKey(path, "args"), a), l.args[a]));
    return r;
  }

  ResolvedArg ResolveArg(const std::string& field, const std::string& arg) {
    using Kind = ResolvedArg::Kind;
    if (op_.FindTensor(arg)) return {Kind::tensor, arg};
    for (const WorkspaceSpec& w : m_.workspaces)
      if (w.name == arg) return {Kind::workspace, arg};
    for (const TensorMapSpec& t : m_.tensor_maps)
      if (t.name == arg) return {Kind::tensor_map, arg};
    for (const ScalarSpec& s : op_.scalars) {
      if (s.name != arg) continue;
      if (s.dtype == DType::f32) return {Kind::f32, arg, 0, static_cast<float>(s.value)};
      return {s.dtype == DType::i64 ? Kind::i64 : Kind::i32, arg, static_cast<int64_t>(s.value)};
    }
    ResolvedArg r{Kind::i32, arg};
    if (arg.rfind("i64:", 0) == 0) {
      r.kind = Kind::i64;
      Eval(field, arg.substr(4), std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), &r.i);
    } else if (arg.rfind("f32:", 0) == 0) {
      r.kind = Kind::f32;
      std::string rest = arg.substr(4);
      char* end = nullptr;
      double v = std::strtod(rest.c_str(), &end);
      if (rest.empty() || end != rest.c_str() + rest.size()) {
        int64_t iv = 0;
        Eval(field, rest, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), &iv);
        v = static_cast<double>(iv);
      }
      r.f = static_cast<float>(v);
      if (!std::isfinite(r.f)) Error(field, "'" + rest + "' is not a finite float");
    } else {
      Eval(field, arg, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), &r.i);
    }
    return r;
  }

  const CandidateManifest& m_;
  const OperatorSpec& op_;
  const Bindings& vars_;
  Diagnostics* diags_;
  size_t first_;
};

}  // namespace

bool ConstraintsHold(const CandidateManifest& m, const ParamAssignment& params, const Bindings& config,
                     std::string* why) {
  Bindings vars;
  std::string field;
  if (!BindInstance(m, params, config, &vars, why, &field)) return false;
  for (const std::string& c : m.constraints) {
    Diagnostic d;
    int64_t v;
    if (!EvalExpression(c, vars, &v, &d)) {
      *why = "constraint '" + c + "': " + d.message;
      return false;
    }
    if (v == 0) {
      *why = "constraint '" + c + "' does not hold";
      return false;
    }
  }
  return true;
}

bool ResolveCandidate(const CandidateManifest& m, const OperatorSpec& op, const ParamAssignment& params,
                      const Bindings& config, ResolvedCandidate* out, Diagnostics* diags) {
  size_t first = diags->size();
  for (const ParamSpec& p : m.params) {
    auto it = params.find(p.name);
    if (it == params.end()) {
      diags->push_back({"", JsonPathKey("params", p.name), 0, 0, "no value given for param '" + p.name + "'"});
    } else if (std::find(p.values.begin(), p.values.end(), it->second) == p.values.end()) {
      diags->push_back({"", JsonPathKey("params", p.name), 0, 0,
                        "value " + std::to_string(it->second) + " is not in the domain of '" + p.name + "'"});
    }
  }
  for (const auto& [name, value] : params) {
    // An explicit capture: clang 14 (the asan preset) cannot capture a structured binding implicitly.
    bool known =
        std::any_of(m.params.begin(), m.params.end(), [&name = name](const ParamSpec& p) { return p.name == name; });
    if (!known) diags->push_back({"", "params", 0, 0, "'" + name + "' is not a param of this candidate"});
  }
  if (diags->size() > first) return false;
  std::string why;
  Bindings vars;
  std::string field;
  if (!BindInstance(m, params, config, &vars, &why, &field)) {
    diags->push_back({"", field, 0, 0, why + " (config " + ConfigText(config) + ")"});
    return false;
  }
  if (!ConstraintsHold(m, params, config, &why)) {
    diags->push_back({"", "constraints", 0, 0, why + " (config " + ConfigText(config) + ")"});
    return false;
  }
  Resolver resolver(m, op, vars, diags);
  return resolver.Resolve(out);
}

const char* ResolvedArgKindName(ResolvedArg::Kind k) {
  switch (k) {
    case ResolvedArg::Kind::tensor: return "tensor";
    case ResolvedArg::Kind::workspace: return "workspace";
    case ResolvedArg::Kind::tensor_map: return "tensor_map";
    case ResolvedArg::Kind::i32: return "i32";
    case ResolvedArg::Kind::i64: return "i64";
    case ResolvedArg::Kind::f32: return "f32";
  }
  return "i32";
}

}  // namespace forgek
