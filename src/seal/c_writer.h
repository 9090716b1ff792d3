// The writer of a seal's C export: the header's and the source's text, part by part.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "c_function_body.h"
#include "c_seal.h"
#include "c_text.h"

namespace forgek {

// The text of forgek_<op>.h and forgek_<op>.c for one seal. Each part of the source is a member
// that returns its text; Source() puts them in the order the C needs (what a function calls is
// defined above it).
class CWriter {
 public:
  explicit CWriter(const CSeal& s) : s_(s), op_(*s.op) {}

  bool Header(std::string* out, std::string* err);  // c_writer_header.cc
  bool Source(std::string* out, std::string* err);  // c_writer_source.cc

 private:
  std::string T(const std::string& suffix) const { return s_.prefix + suffix; }
  std::string E(const std::string& suffix) const { return s_.upper + suffix; }
  std::string Status() const { return T("_status"); }
  std::string Plan() const { return T("_launch_plan"); }

  size_t MaxOf(size_t (*count)(const CKernel&)) const {
    size_t n = 1;  // arrays of the plan keep at least one element: C has no empty arrays
    for (const CKernel& k : s_.kernels) n = std::max(n, count(k));
    return n;
  }
  size_t MaxLaunches() const { return MaxOf([](const CKernel& k) { return k.candidate.manifest.launches.size(); }); }
  size_t MaxWorkspaces() const { return MaxOf([](const CKernel& k) { return k.candidate.manifest.workspaces.size(); }); }
  size_t MaxTensorMaps() const { return MaxOf([](const CKernel& k) { return k.candidate.manifest.tensor_maps.size(); }); }
  size_t MaxArgs() const {
    return MaxOf([](const CKernel& k) {
      size_t n = 0;
      for (const LaunchSpec& l : k.candidate.manifest.launches) n = std::max(n, l.args.size());
      return n;
    });
  }
  int Entries() const {
    int n = 0;
    for (const CKernel& k : s_.kernels) n = std::max(n, k.entry + 1);
    return n;
  }

  // "int64_t M, int64_t N": the operator's sizes as parameters.
  std::string SizeParams() const {
    std::string out;
    for (const std::string& p : op_.params) out += (out.empty() ? "" : ", ") + std::string("int64_t ") + CParamName(p);
    return out;
  }
  std::string SizeArgs() const {
    std::string out;
    for (const std::string& p : op_.params) out += (out.empty() ? "" : ", ") + CParamName(p);
    return out;
  }
  std::string TensorParams() const {
    std::string out;
    for (const TensorSpec& t : op_.tensors)
      out += (t.role == TensorRole::input ? "const void* " : "void* ") + CParamName(t.name) + ", ";
    return out;
  }
  static std::string ScalarType(DType t) {
    return t == DType::f32 ? "float" : t == DType::i64 ? "int64_t" : "int32_t";
  }
  std::string ScalarParams() const {
    std::string out;
    for (const ScalarSpec& sc : op_.scalars) out += ScalarType(sc.dtype) + " " + CParamName(sc.name) + ", ";
    return out;
  }
  std::string TensorAndScalarArgs() const {
    std::string out;
    for (const TensorSpec& t : op_.tensors) out += CParamName(t.name) + ", ";
    for (const ScalarSpec& sc : op_.scalars) out += CParamName(sc.name) + ", ";
    return out;
  }
  std::string ShapeText(const TensorSpec& t) const {
    std::string out;
    for (const std::string& d : t.shape) out += (out.empty() ? "" : ", ") + d;
    return "[" + out + "]";
  }

  // The public functions' signatures, as the header declares them and the source defines them.
  std::string PlanSignature() const { return Status() + " " + T("_plan") + "(" + SizeParams() + ", " + Plan() + "* plan)"; }
  std::string WorkspaceBytesSignature() const {
    return Status() + " " + T("_workspace_bytes") + "(" + SizeParams() + ", size_t* bytes)";
  }
  std::string CallSignature() const {
    return Status() + " " + s_.prefix + "(CUstream stream, " + TensorParams() + ScalarParams() + SizeParams() +
           ", void* workspace, size_t workspace_bytes)";
  }

  // Appends to *c the text `part` writes for every kernel; an error names the kernel (c_writer_source.cc).
  bool EachKernel(bool (CWriter::*part)(const CKernel&, std::string*, std::string*) const, std::string* c,
                  std::string* err) const;

  // The header (c_writer_header.cc).
  std::string HeaderComment() const;
  std::string HeaderTypes() const;
  std::string HeaderFunctions() const;

  // The plan (c_writer_plan.cc): messages, the tensors' check, the seal's rule.
  std::string MessageHelpers() const;
  bool TensorCheck(std::string* out, std::string* err) const;
  std::string PublicPlan() const;
  // The public plan function: fk_plan_for at the current context's SM count.
  std::string PlanEntry() const;
  // Locals v_<name> of a plan function: the sizes, then `params` (a kernel's; null for none).
  void BindSizes(FunctionBody& f, const ParamAssignment* params) const;

  // One kernel's plan (c_writer_plan_kernel.cc).
  bool KernelPlan(const CKernel& k, std::string* out, std::string* err) const;
  bool PlanWorkspaces(const CKernel& k, FunctionBody& f, std::vector<std::string>* ws_vars, std::string* err) const;
  bool PlanTensorMaps(const CKernel& k, FunctionBody& f, const std::vector<std::string>& ws_vars,
                      std::string* err) const;
  bool PlanLaunch(const CKernel& k, size_t i, FunctionBody& f, std::string* err) const;

  // The module cache (c_writer_modules.cc).
  std::string Cubins() const;
  std::string ModuleTables() const;
  std::string ModuleFunctions() const;
  // fk_context_sms and fk_current_sms: the SM count of a context's device, read once per context.
  std::string ContextSms() const;
  std::string Unload() const;
  // The statements that take `context`'s id and then the cache's mutex (`what`: the context, in an error).
  std::string CacheLock(const std::string& what) const;

  // The calling thread's last error (c_writer_errors.cc).
  std::string ErrorState() const;
  std::string ErrorAccessors() const;

  // Launching (c_writer_launch.cc).
  std::string LaunchHelpers() const;
  bool KernelLaunch(const CKernel& k, std::string* out, std::string* err) const;
  std::string PublicCall() const;
  // What a launch passes for argument `arg` of kernel manifest `m` by address: "&fk_t0" (a tensor),
  // "&fk_w1" (a workspace), "&fk_maps[0]" (a tensor map), "&name" (a scalar); "" for an expression,
  // whose value the plan evaluates.
  std::string ArgAddress(const CandidateManifest& m, const std::string& arg) const;

  const CSeal& s_;
  const OperatorSpec& op_;
};

}  // namespace forgek
