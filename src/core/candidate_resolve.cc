// Evaluating a candidate for one config and one param assignment: constraints, launches, arguments.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>

#include "forgek/core/json_location.h"
#include "forgek/core/candidate.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/spec_limits.h"

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

// A diagnostic about the value at JSON path `at` of `m`, shown as `field`. A manifest parsed from a
// file names the file, line and column (docs/expressions.md): at byte `index` of the string there
// (an expression's error column - 1, plus any "i64:" prefix), or at the value when index < 0.
Diagnostic At(const CandidateManifest& m, const std::string& at, const std::string& field, long index,
              const std::string& message) {
  Diagnostic d{"", field, 0, 0, message};
  if (m.origin) m.origin->Locate(at, index, &d);
  return d;
}

// The byte of an expression's text that an evaluation error points at (-1: the whole value).
long ErrorIndex(const Diagnostic& expr_error, size_t prefix = 0) {
  return expr_error.column > 0 ? static_cast<long>(expr_error.column - 1 + prefix) : -1;
}

// The bindings of one instance: config params, num_sms, candidate params, then lets in order. A param
// or let named num_sms would hide the device's count: validation refuses it, and so does this for a
// manifest that was never validated.
bool BindInstance(const CandidateManifest& m, const ParamAssignment& params, const Bindings& config, int64_t num_sms,
                  Bindings* out, Diagnostic* err) {
  Bindings b = config;
  b[kNumSmsName] = num_sms;
  for (const auto& [name, value] : params) {
    if (name == kNumSmsName) {
      const std::string field = JsonPathKey("params", name);
      *err = At(m, field, field, -1, ReservedNameMessage(name));
      return false;
    }
    b[name] = value;
  }
  for (const auto& [name, text] : m.lets) {
    if (name == kNumSmsName) {
      const std::string field = JsonPathKey("let", name);
      *err = At(m, field, field, -1, ReservedNameMessage(name));
      return false;
    }
    Diagnostic d;
    int64_t v;
    if (!EvalExpression(text, b, &v, &d)) {
      const std::string field = JsonPathKey("let", name);
      *err = At(m, field, field, ErrorIndex(d), "let " + name + " = " + text + ": " + d.message);
      return false;
    }
    b[name] = v;
  }
  *out = std::move(b);
  return true;
}

// Whether every constraint holds for the bindings `vars`; else false with the first that does not
// (or cannot be evaluated) in *err, shown as field "constraints".
bool CheckConstraints(const CandidateManifest& m, const Bindings& vars, Diagnostic* err) {
  for (size_t i = 0; i < m.constraints.size(); ++i) {
    const std::string& c = m.constraints[i];
    Diagnostic d;
    int64_t v;
    if (!EvalExpression(c, vars, &v, &d)) {
      *err = At(m, JsonPathIndex("constraints", i), "constraints", ErrorIndex(d),
                "constraint '" + c + "': " + d.message);
      return false;
    }
    if (v == 0) {
      *err = At(m, JsonPathIndex("constraints", i), "constraints", -1, "constraint '" + c + "' does not hold");
      return false;
    }
  }
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
      const std::string field = JsonPathKey(JsonPathIndex("workspaces", i), "bytes");
      if (!Eval(field, m_.workspaces[i].bytes, 0, std::numeric_limits<int64_t>::max(), &bytes)) {
        unsized_workspaces_.insert(m_.workspaces[i].name);
      } else if (bytes > kMaxWorkspaceBytes) {
        // pow2(62) bytes would pass as a number but no GPU holds it, and sizes derived from it overflow.
        Error(field, "workspace '" + m_.workspaces[i].name + "': '" + m_.workspaces[i].bytes + "' is " +
                         std::to_string(bytes) + " bytes; a workspace may hold at most " +
                         std::to_string(kMaxWorkspaceBytes) + " (2^40, 1 TiB)");
        unsized_workspaces_.insert(m_.workspaces[i].name);
      }
      r.workspaces.emplace_back(m_.workspaces[i].name, bytes);
      r.workspace_zero.push_back(m_.workspaces[i].zero);
    }
    for (size_t i = 0; i < m_.tensor_maps.size(); ++i) {
      const size_t before = diags_->size();
      r.tensor_maps.push_back(ResolveTensorMap(i));
      if (diags_->size() == before) CheckTensorMapExtent(i, r.tensor_maps.back(), r);
    }
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
  // `index`: the byte of the string at `field` the error points at (-1: the value).
  void Error(const std::string& field, const std::string& message, long index = -1) {
    diags_->push_back(At(m_, field, field, index, message + " (config " + ConfigText(vars_) + ")"));
  }

  // `prefix`: bytes of the field's string before `text` ("i64:"), for the error's column.
  bool Eval(const std::string& field, const std::string& text, int64_t lo, int64_t hi, int64_t* out,
            size_t prefix = 0) {
    Diagnostic d;
    if (!EvalExpression(text, vars_, out, &d)) {
      Error(field, "'" + text + "': " + d.message, ErrorIndex(d, prefix));
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

  // The bytes of the buffer a tensor map views (an operator tensor under this config, or a workspace)
  // and the size of the elements the worker encodes it with; false (reported) when unknown.
  bool ViewedBuffer(const std::string& field, const ResolvedTensorMap& t, const ResolvedCandidate& r,
                    std::string* what, int64_t* bytes, int64_t* elem) {
    if (const TensorSpec* tensor = op_.FindTensor(t.tensor)) {
      *what = "tensor '" + t.tensor + "'";
      *elem = DTypeBytes(tensor->dtype);
      std::vector<int64_t> shape;
      Diagnostic d;
      if (!op_.TensorShape(*tensor, vars_, &shape, &d)) {
        Error(field, d.message);
        return false;
      }
      if (!CheckedBytes(shape, *elem, bytes)) {
        Error(field, *what + " has no valid size under this config (a negative dimension, or more than 2^63 bytes)");
        return false;
      }
      return true;
    }
    for (const auto& [name, size] : r.workspaces) {
      if (name != t.tensor) continue;
      if (unsized_workspaces_.count(name)) return false;  // its bytes were refused: already reported
      *what = "workspace '" + name + "'";
      *elem = 4;  // a workspace has no dtype: the worker encodes maps over it as fp32 elements
      *bytes = size;
      return true;
    }
    return false;  // names nothing: ResolveTensorMap or validation has said so
  }

  // product(shape) * elem into *out; false when it does not fit in int64.
  static bool CheckedBytes(const std::vector<int64_t>& shape, int64_t elem, int64_t* out) {
    int64_t n = elem;
    for (int64_t d : shape)
      if (d < 0 || __builtin_mul_overflow(n, d, &n)) return false;
    *out = n;
    return true;
  }

  // TMA reads and writes anywhere inside the extent a map describes (its shape, packed row-major, times
  // the element size); the driver checks nothing against the allocation. A view larger than its
  // buffer would let a kernel reach memory beyond it, so it is refused here, where sizes are known.
  void CheckTensorMapExtent(size_t i, const ResolvedTensorMap& t, const ResolvedCandidate& r) {
    const TensorMapSpec& spec = m_.tensor_maps[i];
    const std::string field = JsonPathKey(JsonPathIndex("tensor_maps", i), spec.shape.empty() ? "tensor" : "shape");
    std::string what;
    int64_t buffer = 0, elem = 0;
    if (!ViewedBuffer(field, t, r, &what, &buffer, &elem)) return;
    std::string dims;
    for (int64_t d : t.shape) dims += (dims.empty() ? "" : " x ") + std::to_string(d);
    int64_t extent = 0;
    const std::string head = "tensor map '" + t.name + "' views " + dims + " elements of " + std::to_string(elem) +
                             " bytes";
    if (!CheckedBytes(t.shape, elem, &extent)) {
      Error(field, head + " (more than 2^63 bytes), but " + what + " holds " + std::to_string(buffer) +
                       " bytes; TMA would reach memory beyond it");
    } else if (extent > buffer) {
      Error(field, head + " (" + std::to_string(extent) + " bytes), but " + what + " holds " +
                       std::to_string(buffer) + " bytes; TMA would reach memory beyond it");
    }
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
      Eval(field, arg.substr(4), std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), &r.i, 4);
    } else if (arg.rfind("f32:", 0) == 0) {
      r.kind = Kind::f32;
      std::string rest = arg.substr(4);
      char* end = nullptr;
      double v = std::strtod(rest.c_str(), &end);
      if (rest.empty() || end != rest.c_str() + rest.size()) {
        int64_t iv = 0;
        Eval(field, rest, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), &iv, 4);
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
  std::set<std::string> unsized_workspaces_;  // whose bytes did not resolve or were refused
};

}  // namespace

int64_t NominalSmCount(const std::string& arch) { return arch == "sm100" ? 148 : 132; }

int64_t NominalSmCount(const CandidateManifest& m) { return NominalSmCount(m.archs.empty() ? "sm90" : m.archs.front()); }

std::string ReservedNameMessage(const std::string& name) {
  return "'" + name + "' is reserved: forgek binds it to the device's SM count (docs/expressions.md); choose another name";
}

bool ConstraintsHold(const CandidateManifest& m, const ParamAssignment& params, const Bindings& config,
                     int64_t num_sms, std::string* why) {
  Bindings vars;
  Diagnostic err;
  if (!BindInstance(m, params, config, num_sms, &vars, &err) || !CheckConstraints(m, vars, &err)) {
    *why = err.message;
    return false;
  }
  return true;
}

bool ResolveCandidate(const CandidateManifest& m, const OperatorSpec& op, const ParamAssignment& params,
                      const Bindings& config, int64_t num_sms, ResolvedCandidate* out, Diagnostics* diags) {
  size_t first = diags->size();
  for (const ParamSpec& p : m.params) {
    auto it = params.find(p.name);
    if (it == params.end()) {
      const std::string field = JsonPathKey("params", p.name);
      diags->push_back(At(m, field, field, -1, "no value given for param '" + p.name + "'"));
    } else if (std::find(p.values.begin(), p.values.end(), it->second) == p.values.end()) {
      const std::string field = JsonPathKey("params", p.name);
      diags->push_back(At(m, field, field, -1,
                          "value " + std::to_string(it->second) + " is not in the domain of '" + p.name + "'"));
    }
  }
  for (const auto& [name, value] : params) {
    // An explicit capture: clang 14 (the asan preset) cannot capture a structured binding implicitly.
    bool known =
        std::any_of(m.params.begin(), m.params.end(), [&name = name](const ParamSpec& p) { return p.name == name; });
    if (!known) diags->push_back(At(m, "params", "params", -1, "'" + name + "' is not a param of this candidate"));
  }
  if (diags->size() > first) return false;
  Bindings vars;
  Diagnostic err;
  if (!BindInstance(m, params, config, num_sms, &vars, &err) || !CheckConstraints(m, vars, &err)) {
    err.message += " (config " + ConfigText(config) + ",num_sms=" + std::to_string(num_sms) + ")";
    diags->push_back(err);
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
