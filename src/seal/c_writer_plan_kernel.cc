// One kernel's plan in a seal's C export: its lets, constraints, workspaces, tensor maps and launches.
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "forgek/core/params.h"
#include "forgek/core/spec_limits.h"
#include "c_writer.h"

namespace forgek {
namespace {

// The bounds ResolveCandidate applies (src/core/candidate_resolve.cc): the generated plan refuses
// exactly the sizes forgek's own resolution refuses, so that a dispatch's fallback "accepts" a shape
// in the C where it does in forgek.
constexpr int64_t kMaxGrid[3] = {(int64_t{1} << 31) - 1, 65535, 65535};
constexpr int64_t kMaxBlock[3] = {1024, 1024, 64};
constexpr int64_t kMaxCluster[3] = {16, 16, 16};
constexpr int64_t kMaxBlockThreads = 1024;
constexpr int64_t kMaxClusterBlocks = 16;
constexpr int64_t kMaxTensorMapBox = 256;
constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

}  // namespace

bool CWriter::PlanWorkspaces(const CKernel& k, FunctionBody& f, std::vector<std::string>* ws_vars,
                             std::string* err) const {
  const CandidateManifest& m = k.candidate.manifest;
  f.Line("plan->num_workspaces = " + std::to_string(m.workspaces.size()) + ";");
  if (m.workspaces.empty()) return true;
  const std::string offset = f.Fresh("offset");
  f.Line("int64_t " + offset + " = 0;");
  for (size_t i = 0; i < m.workspaces.size(); ++i) {
    const WorkspaceSpec& w = m.workspaces[i];
    const std::string field = "workspaces[" + std::to_string(i) + "].bytes";
    std::string v;
    if (!f.EvalIn(field, w.bytes, 0, kInt64Max, &v, err)) return false;
    // pow2(62) bytes would pass as a number but no GPU holds it, and offsets derived from it overflow.
    f.Line("if (" + v + " > " + CInt64Literal(kMaxWorkspaceBytes) + ") return " +
           FunctionBody::FailValue(field + ": workspace '" + w.name + "': '" + w.bytes + "' is ", v,
                                   " bytes; a workspace may hold at most " + std::to_string(kMaxWorkspaceBytes) +
                                       " (2^40, 1 TiB)") +
           ";");
    const std::string at = "plan->workspaces[" + std::to_string(i) + "]";
    f.Line(at + ".name = " + CStringLiteral(w.name) + ";");
    f.Line(at + ".offset = (size_t)" + offset + ";");
    f.Line(at + ".bytes = (size_t)" + v + ";");
    f.Line(at + ".zero = " + std::string(w.zero ? "1" : "0") + ";");
    f.Line(offset + " += (" + v + " + 255) / 256 * 256;");
    ws_vars->push_back(v);
  }
  f.Line("plan->workspace_bytes = (size_t)" + offset + ";");
  return true;
}

// Each map's shape (given, or its tensor's) and box, the view checked against the buffer it views
// (CheckTensorMapExtent of ResolveCandidate), then the driver's form: innermost first, byte strides.
bool CWriter::PlanTensorMaps(const CKernel& k, FunctionBody& f, const std::vector<std::string>& ws_vars,
                             std::string* err) const {
  const CandidateManifest& m = k.candidate.manifest;
  f.Line("plan->num_tensor_maps = " + std::to_string(m.tensor_maps.size()) + ";");
  for (size_t i = 0; i < m.tensor_maps.size(); ++i) {
    const TensorMapSpec& t = m.tensor_maps[i];
    const std::string path = "tensor_maps[" + std::to_string(i) + "]";
    f.Open("{  /* " + path + " " + CommentText(t.name) + " over " + CommentText(t.tensor) + " */");
    const TensorSpec* tensor = op_.FindTensor(t.tensor);
    int ws = -1;
    for (size_t w = 0; w < m.workspaces.size(); ++w)
      if (m.workspaces[w].name == t.tensor) ws = static_cast<int>(w);
    if (!tensor && ws < 0) {
      *err = path + ".tensor: '" + t.tensor + "' is neither a tensor nor a workspace";
      return false;
    }
    if (!tensor && t.shape.empty()) {
      *err = path + ".shape: a tensor map over workspace '" + t.tensor + "' needs a shape";
      return false;
    }
    // Dimension d of the tensor under the map, as the operator's shape gives it.
    auto tensor_dim = [&](size_t d, std::string* v) {
      const size_t index = static_cast<size_t>(tensor - op_.tensors.data());
      return f.Eval("tensors[" + std::to_string(index) + "].shape[" + std::to_string(d) + "]", tensor->shape[d], v, err);
    };
    std::vector<std::string> shape, box;
    if (!t.shape.empty()) {
      for (size_t d = 0; d < t.shape.size(); ++d) {
        std::string v;
        if (!f.EvalIn(path + ".shape[" + std::to_string(d) + "]", t.shape[d], 1, kInt64Max, &v, err)) return false;
        shape.push_back(v);
      }
    } else {
      for (size_t d = 0; d < tensor->shape.size(); ++d) {
        std::string v;
        if (!tensor_dim(d, &v)) return false;
        shape.push_back(v);
      }
    }
    for (size_t d = 0; d < t.box.size(); ++d) {
      std::string v;
      if (!f.EvalIn(path + ".box[" + std::to_string(d) + "]", t.box[d], 1, kMaxTensorMapBox, &v, err)) return false;
      box.push_back(v);
    }
    const size_t rank = shape.size();
    if (box.size() != rank || rank < 1 || rank > 5) {
      *err = path + ": a shape of rank " + std::to_string(rank) + " with a box of rank " + std::to_string(box.size()) +
             " (need equal ranks, 1 to 5)";
      return false;
    }
    const int64_t elem = tensor ? DTypeBytes(tensor->dtype) : 4;  // a workspace is viewed as fp32, as in the worker
    const std::string buffer = f.Fresh("buffer"), extent = f.Fresh("extent");
    const std::string what = tensor ? "tensor '" + t.tensor + "'" : "workspace '" + t.tensor + "'";
    const std::string field = path + (t.shape.empty() ? ".tensor" : ".shape");
    if (tensor) {
      f.Line("int64_t " + buffer + " = " + CInt64Literal(elem) + ";");
      for (size_t d = 0; d < tensor->shape.size(); ++d) {
        std::string v;
        if (!tensor_dim(d, &v)) return false;
        f.Line("if (" + v + " < 0 || !fk_mul(" + buffer + ", " + v + ", &" + buffer + ")) " +
               FunctionBody::Fail(field + ": " + what +
                                  " has no valid size under these sizes (a negative dimension, or more than 2^63 bytes)"));
      }
    } else {
      f.Line("int64_t " + buffer + " = " + ws_vars.at(static_cast<size_t>(ws)) + ";");
    }
    f.Line("int64_t " + extent + " = " + CInt64Literal(elem) + ";");
    std::string views;
    for (size_t d = 0; d < rank; ++d) views += (d ? " x " : "") + (t.shape.empty() ? tensor->shape[d] : t.shape[d]);
    const std::string head = "tensor map '" + t.name + "' views " + views + " elements of " + std::to_string(elem) + " bytes";
    std::string overflow;
    for (size_t d = 0; d < rank; ++d) overflow += (d ? " || " : "") + ("!fk_mul(" + extent + ", " + shape[d] + ", &" + extent + ")");
    f.Line("if (" + overflow + ") " +
           FunctionBody::Fail(field + ": " + head + ", more than 2^63 bytes, beyond what " + what +
                              " holds; TMA would reach memory beyond it"));
    f.Line("if (" + extent + " > " + buffer + ") return " +
           FunctionBody::FailValue(field + ": " + head + " (", extent,
                                   " bytes), more than " + what + " holds; TMA would reach memory beyond it") +
           ";");
    const std::string at = "plan->tensor_maps[" + std::to_string(i) + "]";
    f.Line(at + ".name = " + CStringLiteral(t.name) + ";");
    f.Line(at + ".rank = " + std::to_string(rank) + ";");
    const std::string stride = f.Fresh("stride");
    f.Line("int64_t " + stride + " = " + CInt64Literal(elem) + ";");
    for (size_t d = 0; d < rank; ++d) {
      const std::string& dim = shape[rank - 1 - d];
      f.Line(at + ".dims[" + std::to_string(d) + "] = (cuuint64_t)" + dim + ";");
      f.Line(at + ".box[" + std::to_string(d) + "] = (cuuint32_t)" + box[rank - 1 - d] + ";");
      if (d + 1 < rank) {
        // Below the extent checked above: no overflow.
        f.Line(stride + " *= " + dim + ";");
        f.Line(at + ".strides[" + std::to_string(d) + "] = (cuuint64_t)" + stride + ";");
      }
    }
    f.Line("(void)" + stride + ";");
    f.Close();
  }
  return true;
}

// One launch: skipped where its `when` is 0 (its other fields then unevaluated), else every field
// evaluated and bounded as ResolveLaunch and ResolveArg do.
bool CWriter::PlanLaunch(const CKernel& k, size_t i, FunctionBody& f, std::string* err) const {
  const LaunchSpec& l = k.candidate.manifest.launches[i];
  const std::string path = "launches[" + std::to_string(i) + "]";
  f.Open("{  /* " + path + " " + CommentText(l.kernel) + " */");
  if (!l.when.empty()) {
    std::string when;
    if (!f.Eval(path + ".when", l.when, &when, err)) return false;
    f.Open("if (" + when + " != 0) {");
  }
  const std::string at = "plan->launches[plan->num_launches]";
  f.Line(at + ".kernel = " + CStringLiteral(l.kernel) + ";");
  f.Line(at + ".index = " + std::to_string(i) + ";");
  f.Line(at + ".num_args = " + std::to_string(l.args.size()) + ";");
  struct Dims {
    const char* name;
    const std::vector<std::string>* exprs;
    const int64_t* max;
  };
  const Dims all[] = {{"grid", &l.grid, kMaxGrid}, {"block", &l.block, kMaxBlock}, {"cluster", &l.cluster, kMaxCluster}};
  std::map<std::string, std::vector<std::string>> values;
  for (const Dims& dims : all) {
    for (size_t d = 0; d < 3; ++d) {
      std::string v = "1";
      if (d < dims.exprs->size() &&
          !f.EvalIn(path + "." + dims.name + "[" + std::to_string(d) + "]", (*dims.exprs)[d], 1, dims.max[d], &v, err))
        return false;
      values[dims.name].push_back(v);
      f.Line(at + "." + dims.name + "[" + std::to_string(d) + "] = (unsigned int)" + v + ";");
    }
  }
  const auto& block = values["block"];
  const auto& cluster = values["cluster"];
  const auto& grid = values["grid"];
  // Each factor is within its bound above: the products cannot overflow.
  f.Line("if (" + block[0] + " * " + block[1] + " * " + block[2] + " > " + CInt64Literal(kMaxBlockThreads) + ") return " +
         FunctionBody::FailValue(path + ".block: a block of ", block[0] + " * " + block[1] + " * " + block[2],
                                 " threads exceeds 1024") +
         ";");
  f.Line("if (" + cluster[0] + " * " + cluster[1] + " * " + cluster[2] + " > " + CInt64Literal(kMaxClusterBlocks) + ") return " +
         FunctionBody::FailValue(path + ".cluster: a cluster of ", cluster[0] + " * " + cluster[1] + " * " + cluster[2],
                                 " blocks exceeds 16") +
         ";");
  for (size_t d = 0; d < 3; ++d) {
    if (cluster[d] == "1") continue;
    f.Line("if (" + grid[d] + " % " + cluster[d] + " != 0) return " +
           FunctionBody::FailValue(path + ".grid: grid dimension " + std::to_string(d) + " (", grid[d],
                                   ") is not a multiple of the cluster dimension") +
           ";");
  }
  std::string smem;
  if (!f.EvalIn(path + ".smem", l.smem, 0, kInt32Max, &smem, err)) return false;
  f.Line("if (" + smem + " > " + CInt64Literal(kMaxDynamicSmemBytes) + ") return " +
         FunctionBody::FailValue(path + ".smem: ", smem,
                                 " bytes of dynamic shared memory exceed the " + std::to_string(kMaxDynamicSmemBytes) +
                                     " (227 KiB) a block may opt in to on sm90 and sm100") +
         ";");
  f.Line(at + ".dynamic_smem_bytes = (unsigned int)" + smem + ";");
  const CandidateManifest& m = k.candidate.manifest;
  for (size_t a = 0; a < l.args.size(); ++a) {
    const std::string& arg = l.args[a];
    const std::string field = path + ".args[" + std::to_string(a) + "]";
    const std::string slot = at + ".args[" + std::to_string(a) + "]";
    if (!ArgAddress(m, arg).empty()) {  // passed by address: nothing to evaluate
      f.Line(slot + " = 0;");
      continue;
    }
    std::string v;
    if (arg.rfind("i64:", 0) == 0) {
      if (!f.Eval(field, arg.substr(4), &v, err)) return false;
    } else if (arg.rfind("f32:", 0) == 0) {
      const std::string rest = arg.substr(4);
      double d = 0;
      if (F32Literal(rest, &d)) {
        if (!std::isfinite(static_cast<float>(d))) {
          *err = field + ": '" + rest + "' is not a finite float";
          return false;
        }
        f.Line(slot + " = 0;");  // a literal: written into the launch code
        continue;
      }
      if (!f.Eval(field, rest, &v, err)) return false;
    } else if (!f.EvalIn(field, arg, kInt32Min, kInt32Max, &v, err)) {
      return false;
    }
    f.Line(slot + " = " + v + ";");
  }
  f.Line("++plan->num_launches;");
  if (!l.when.empty()) f.Close();
  f.Close();
  return true;
}

bool CWriter::KernelPlan(const CKernel& k, std::string* out, std::string* err) const {
  const CandidateManifest& m = k.candidate.manifest;
  std::set<std::string> bound(op_.params.begin(), op_.params.end());
  bound.insert(kNumSmsName);  // the device's SM count, a parameter of the plan function
  for (const auto& [name, value] : k.params) bound.insert(name);
  for (const auto& [name, text] : m.lets) bound.insert(name);
  FunctionBody f(bound, "  ");
  BindSizes(f, &k.params);
  for (const auto& [name, text] : m.lets) {
    f.Line("/* let " + CommentText(name) + " = " + CommentText(text) + " */");
    std::string v;
    // Worded as ResolveCandidate words them: "let NAME = TEXT: message".
    if (!f.EvalWithPrefix("let." + name, "let " + name + " = " + text + ": ", text, &v, err)) return false;
    f.Line("int64_t v_" + name + " = " + v + ";");
    f.Line("(void)v_" + name + ";");
  }
  for (size_t i = 0; i < m.constraints.size(); ++i) {
    const std::string& c = m.constraints[i];
    std::string v;
    if (!f.EvalWithPrefix("constraints[" + std::to_string(i) + "]", "constraint '" + c + "': ", c, &v, err)) return false;
    f.Line("if (" + v + " == 0) " + FunctionBody::Fail("constraint '" + c + "' does not hold"));
  }
  std::vector<std::string> ws_vars;
  if (!PlanWorkspaces(k, f, &ws_vars, err) || !PlanTensorMaps(k, f, ws_vars, err)) return false;
  f.Line("plan->num_launches = 0;");
  for (size_t i = 0; i < m.launches.size(); ++i)
    if (!PlanLaunch(k, i, f, err)) return false;
  f.Line("if (plan->num_launches == 0) " + FunctionBody::Fail("launches: no launch runs: the 'when' of every launch is 0"));
  *out = "/* Kernel " + std::to_string(k.entry) + ": " + CommentText(k.label) + ", params " +
         CommentText(ParamsJson(k.params)) + ". */\nstatic " + Status() + " fk_plan_" + std::to_string(k.entry) + "(" +
         SizeParams() + ", int64_t num_sms, " + Plan() + "* plan) {\n" + f.code() + "  return " + E("_OK") + ";\n}\n\n";
  return true;
}

}  // namespace forgek
