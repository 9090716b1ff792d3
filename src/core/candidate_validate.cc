// Checking a parsed candidate against its operator: names, arguments, tensor maps, kernels.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "json_fields.h"
#include "manifest_span.h"
#include "forgek/core/candidate.h"
#include "forgek/core/operator_spec.h"

namespace forgek {

namespace {

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// True when `code` declares `name` as `extern "C" __global__ ... name(`. This is a textual check,
// not a C++ parse: the text from the previous ';', '{' or '}' up to the name must hold both
// `extern "C"` and `__global__`. Kernels declared inside an `extern "C" { ... }` block, or through
// macros, are not recognised; candidates are asked to write the plain form.
bool DeclaresGlobalKernel(const std::string& code, const std::string& name) {
  for (size_t at = code.find(name); at != std::string::npos; at = code.find(name, at + 1)) {
    if ((at > 0 && IsWordChar(code[at - 1])) || (at + name.size() < code.size() && IsWordChar(code[at + name.size()])))
      continue;
    size_t after = at + name.size();
    while (after < code.size() && std::isspace(static_cast<unsigned char>(code[after]))) ++after;
    if (after >= code.size() || code[after] != '(') continue;
    size_t start = code.find_last_of(";{}", at);
    std::string head = code.substr(start == std::string::npos ? 0 : start + 1, at - (start == std::string::npos ? 0 : start + 1));
    if (head.find("__global__") == std::string::npos) continue;
    for (size_t e = head.find("extern"); e != std::string::npos; e = head.find("extern", e + 1)) {
      size_t q = e + 6;
      while (q < head.size() && std::isspace(static_cast<unsigned char>(head[q]))) ++q;
      if (head.compare(q, 3, "\"C\"") == 0) return true;
    }
  }
  return false;
}

class CandidateValidator {
 public:
  CandidateValidator(const Candidate& c, const OperatorSpec& op, const JsonLocator* locator, Diagnostics* diags)
      : c_(c), m_(c.manifest), op_(op), r_(c.path, locator, diags) {}

  bool Validate(size_t code_begin) {
    CheckNamesAgainstOperator();
    scope_ = op_.params;
    scope_.push_back(kNumSmsName);  // bound by every resolution: the device's SM count
    for (const ParamSpec& p : m_.params) scope_.push_back(p.name);
    // Names are looked up in a set: a let's check costs its own names, not the count of lets before it.
    scope_set_.insert(scope_.begin(), scope_.end());
    const std::string earlier = ScopeText("earlier lets");
    for (const auto& [name, text] : m_.lets) {
      // A let sees the params and the lets before it.
      r_.CheckNames(JsonPathKey("let", name), text, scope_set_, earlier);
      scope_.push_back(name);
      scope_set_.insert(name);
    }
    scope_text_ = ScopeText("lets");
    for (size_t i = 0; i < m_.constraints.size(); ++i) Check(JsonPathIndex("constraints", i), m_.constraints[i]);
    for (size_t i = 0; i < m_.workspaces.size(); ++i)
      Check(JsonPathKey(JsonPathIndex("workspaces", i), "bytes"), m_.workspaces[i].bytes);
    for (size_t i = 0; i < m_.tensor_maps.size(); ++i) CheckTensorMap(i);
    std::string code = c_.source.substr(std::min(code_begin, c_.source.size()));
    for (size_t i = 0; i < m_.launches.size(); ++i) CheckLaunch(i, code);
    return r_.error_count() == 0;
  }

 private:
  std::string ScopeText(const char* lets) const {
    std::string params;
    for (const ParamSpec& p : m_.params) params += (params.empty() ? "" : ", ") + p.name;
    return "expressions may use the operator's params (" + JoinNames(op_.params) + "), the candidate's params (" +
           (params.empty() ? "(none)" : params) + "), " + lets + " and " + kNumSmsName + " (the device's SM count)";
  }

  bool Check(const std::string& path, const std::string& text) {
    return r_.CheckNames(path, text, scope_set_, scope_text_);
  }

  // A candidate's own names must not hide the operator's: an argument names exactly one thing.
  void CheckNamesAgainstOperator() {
    std::map<std::string, std::string> taken;
    for (const std::string& p : op_.params) taken[p] = "param of the operator";
    for (const TensorSpec& t : op_.tensors) taken[t.name] = "tensor of the operator";
    for (const ScalarSpec& s : op_.scalars) taken[s.name] = "scalar of the operator";
    auto check = [&](const std::string& name, const std::string& path, bool by_key) {
      if (name == kNumSmsName) {
        by_key ? r_.KeyError(path, ReservedNameMessage(name)) : r_.Error(path, ReservedNameMessage(name));
        return;
      }
      auto it = taken.find(name);
      if (it == taken.end()) return;
      std::string message = "'" + name + "' is already the name of a " + it->second;
      by_key ? r_.KeyError(path, message) : r_.Error(path, message);
    };
    for (const ParamSpec& p : m_.params) check(p.name, JsonPathKey("params", p.name), true);
    for (const auto& [name, text] : m_.lets) check(name, JsonPathKey("let", name), true);
    for (size_t i = 0; i < m_.workspaces.size(); ++i)
      check(m_.workspaces[i].name, JsonPathKey(JsonPathIndex("workspaces", i), "name"), false);
    for (size_t i = 0; i < m_.tensor_maps.size(); ++i)
      check(m_.tensor_maps[i].name, JsonPathKey(JsonPathIndex("tensor_maps", i), "name"), false);
  }

  bool IsWorkspace(const std::string& name) const {
    return std::any_of(m_.workspaces.begin(), m_.workspaces.end(), [&](const WorkspaceSpec& w) { return w.name == name; });
  }
  bool IsTensorMap(const std::string& name) const {
    return std::any_of(m_.tensor_maps.begin(), m_.tensor_maps.end(), [&](const TensorMapSpec& t) { return t.name == name; });
  }
  bool IsScalar(const std::string& name) const {
    return std::any_of(op_.scalars.begin(), op_.scalars.end(), [&](const ScalarSpec& s) { return s.name == name; });
  }

  void CheckTensorMap(size_t i) {
    const TensorMapSpec& t = m_.tensor_maps[i];
    std::string path = JsonPathIndex("tensor_maps", i);
    for (size_t d = 0; d < t.box.size(); ++d) Check(JsonPathIndex(JsonPathKey(path, "box"), d), t.box[d]);
    for (size_t d = 0; d < t.shape.size(); ++d) Check(JsonPathIndex(JsonPathKey(path, "shape"), d), t.shape[d]);
    const TensorSpec* tensor = op_.FindTensor(t.tensor);
    if (!tensor && !IsWorkspace(t.tensor)) {
      std::vector<std::string> known;
      for (const TensorSpec& x : op_.tensors) known.push_back(x.name);
      for (const WorkspaceSpec& w : m_.workspaces) known.push_back(w.name);
      r_.Error(JsonPathKey(path, "tensor"), "'" + t.tensor + "' is neither a tensor of operator " + op_.name +
                                                " nor a workspace; known: " + JoinNames(known));
      return;
    }
    if (!tensor && t.shape.empty()) {
      r_.Error(path, "a tensor map over workspace '" + t.tensor + "' needs a \"shape\" (a workspace has none)");
      return;
    }
    size_t rank = t.shape.empty() ? tensor->shape.size() : t.shape.size();
    if (t.box.size() != rank)
      r_.Error(JsonPathKey(path, "box"), "box has " + std::to_string(t.box.size()) + " dimensions but '" + t.tensor +
                                             "' has " + std::to_string(rank) + (t.shape.empty() ? "" : " (its shape view)"));
  }

  void CheckLaunch(size_t i, const std::string& code) {
    const LaunchSpec& l = m_.launches[i];
    std::string path = JsonPathIndex("launches", i);
    auto check_list = [&](const char* key, const std::vector<std::string>& list) {
      for (size_t d = 0; d < list.size(); ++d) Check(JsonPathIndex(JsonPathKey(path, key), d), list[d]);
    };
    check_list("grid", l.grid);
    check_list("block", l.block);
    check_list("cluster", l.cluster);
    Check(JsonPathKey(path, "smem"), l.smem);
    if (!l.when.empty()) Check(JsonPathKey(path, "when"), l.when);
    for (size_t a = 0; a < l.args.size(); ++a) CheckArg(JsonPathIndex(JsonPathKey(path, "args"), a), l.args[a]);
    if (!l.kernel.empty() && !DeclaresGlobalKernel(code, l.kernel))
      r_.Error(JsonPathKey(path, "kernel"), "no 'extern \"C\" __global__' function named '" + l.kernel +
                                                "' in the source (kernels need C linkage so the worker finds them by name)");
  }

  void CheckArg(const std::string& path, const std::string& arg) {
    if (op_.FindTensor(arg) || IsWorkspace(arg) || IsTensorMap(arg) || IsScalar(arg)) return;
    if (arg.rfind("i64:", 0) == 0) {
      CheckPrefixed(path, arg, 4);
      return;
    }
    if (arg.rfind("f32:", 0) == 0) {
      std::string rest = arg.substr(4);
      char* end = nullptr;
      double v = std::strtod(rest.c_str(), &end);
      bool literal = !rest.empty() && end == rest.c_str() + rest.size();
      if (literal && !std::isfinite(static_cast<float>(v))) r_.Error(path, "'" + rest + "' is not a finite float");
      if (!literal) CheckPrefixed(path, arg, 4);
      return;
    }
    if (IsIdentifier(arg) && scope_set_.count(arg) == 0) {
      std::vector<std::string> known = scope_;
      for (const TensorSpec& t : op_.tensors) known.push_back(t.name);
      for (const ScalarSpec& s : op_.scalars) known.push_back(s.name);
      for (const WorkspaceSpec& w : m_.workspaces) known.push_back(w.name);
      for (const TensorMapSpec& t : m_.tensor_maps) known.push_back(t.name);
      r_.ExprError(path, {"", "", 1, 1, "unknown argument '" + arg + "': not a tensor, scalar, workspace, tensor map, "
                                        "param or let; known: " + JoinNames(known)});
      return;
    }
    Check(path, arg);
  }

  // An expression after a type prefix ("i64:M*N"): positions count from the start of the string.
  void CheckPrefixed(const std::string& path, const std::string& arg, size_t prefix) {
    r_.CheckNames(path, arg.substr(prefix), scope_set_, scope_text_, prefix);
  }

  const Candidate& c_;
  const CandidateManifest& m_;
  const OperatorSpec& op_;
  FieldReader r_;
  std::vector<std::string> scope_;     // params and lets in declaration order, for messages
  std::set<std::string> scope_set_;    // the same, for lookups
  std::string scope_text_;             // what expressions may use, for messages
};

}  // namespace

bool ValidateCandidate(const Candidate& c, const OperatorSpec& op, Diagnostics* diags) {
  // Positions come from the manifest in the source; a manifest built in memory has none.
  ManifestSpan span;
  Diagnostics ignored;
  bool located = FindManifest(c.path, c.source, &span, &ignored);
  JsonLocator locator(c.source, located ? span.begin : 0, located ? span.end : 0);
  CandidateValidator validator(c, op, &locator, diags);
  return validator.Validate(located ? span.end + 2 : 0);
}

}  // namespace forgek
