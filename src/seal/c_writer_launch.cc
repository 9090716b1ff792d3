// Launching in a seal's C export: tensor maps encoded, arguments marshalled, the public call.
#include <cstdio>
#include <map>

#include "c_writer.h"

namespace forgek {
namespace {

// The driver's data type of a tensor map over a tensor of `t`.
const char* TensorMapDataType(DType t) {
  switch (t) {
    case DType::f64: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT64";
    case DType::f32: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";
    case DType::f16: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
    case DType::bf16: return "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16";
    case DType::i32: return "CU_TENSOR_MAP_DATA_TYPE_INT32";
    case DType::u32: return "CU_TENSOR_MAP_DATA_TYPE_UINT32";
    case DType::i64: return "CU_TENSOR_MAP_DATA_TYPE_INT64";
    default: return "CU_TENSOR_MAP_DATA_TYPE_UINT8";  // fp8 and 8-bit integers move as bytes, as in the worker
  }
}

// The driver's enumerator for a tensor map's `field` (swizzle, l2_promotion, oob_fill) set to `value`.
bool TensorMapEnum(const std::string& field, const std::string& value, std::string* out, std::string* err) {
  static const std::map<std::string, std::map<std::string, std::string>> kEnums = {
      {"swizzle",
       {{"none", "CU_TENSOR_MAP_SWIZZLE_NONE"}, {"", "CU_TENSOR_MAP_SWIZZLE_NONE"}, {"32B", "CU_TENSOR_MAP_SWIZZLE_32B"},
        {"64B", "CU_TENSOR_MAP_SWIZZLE_64B"}, {"128B", "CU_TENSOR_MAP_SWIZZLE_128B"}}},
      {"l2_promotion",
       {{"none", "CU_TENSOR_MAP_L2_PROMOTION_NONE"}, {"", "CU_TENSOR_MAP_L2_PROMOTION_NONE"},
        {"64B", "CU_TENSOR_MAP_L2_PROMOTION_L2_64B"}, {"128B", "CU_TENSOR_MAP_L2_PROMOTION_L2_128B"},
        {"256B", "CU_TENSOR_MAP_L2_PROMOTION_L2_256B"}}},
      {"oob_fill",
       {{"none", "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE"}, {"", "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE"},
        {"nan", "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA"}}}};
  const auto& values = kEnums.at(field);
  auto it = values.find(value);
  if (it == values.end()) {
    *err = field + " '" + value + "' has no driver value";
    return false;
  }
  *out = it->second;
  return true;
}

}  // namespace

std::string CWriter::LaunchHelpers() const {
  const std::string st = Status();
  std::string c;
  c += "static " + st + " fk_launch_one(const " + T("_launch") +
       "* l, CUfunction function, CUstream stream, void** args) {\n"
       "  CUlaunchConfig config;\n"
       "  CUlaunchAttribute cluster;\n"
       "  CUresult r;\n"
       "  memset(&config, 0, sizeof config);\n"
       "  memset(&cluster, 0, sizeof cluster);\n"
       "  config.gridDimX = l->grid[0];\n  config.gridDimY = l->grid[1];\n  config.gridDimZ = l->grid[2];\n"
       "  config.blockDimX = l->block[0];\n  config.blockDimY = l->block[1];\n  config.blockDimZ = l->block[2];\n"
       "  config.sharedMemBytes = l->dynamic_smem_bytes;\n"
       "  config.hStream = stream;\n"
       "  if (l->cluster[0] * l->cluster[1] * l->cluster[2] > 1) {\n"
       "    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;\n"
       "    cluster.value.clusterDim.x = l->cluster[0];\n"
       "    cluster.value.clusterDim.y = l->cluster[1];\n"
       "    cluster.value.clusterDim.z = l->cluster[2];\n"
       "    config.attrs = &cluster;\n"
       "    config.numAttrs = 1;\n"
       "  }\n"
       "  r = cuLaunchKernelEx(&config, function, args, NULL);\n"
       "  if (r != CUDA_SUCCESS) return fk_cuda_error(r, \"cuLaunchKernelEx\", l->kernel);\n"
       "  return " + E("_OK") + ";\n}\n\n";
  c += "static " + st + " fk_zero_workspaces(const " + Plan() + "* plan, CUdeviceptr workspace, CUstream stream) {\n"
       "  int i;\n"
       "  for (i = 0; i < plan->num_workspaces; ++i) {\n"
       "    const " + T("_workspace") + "* w = &plan->workspaces[i];\n"
       "    CUresult r;\n"
       "    if (!w->zero || w->bytes == 0) continue;\n"
       "    r = cuMemsetD8Async(workspace + w->offset, 0, w->bytes, stream);\n"
       "    if (r != CUDA_SUCCESS) return fk_cuda_error(r, \"cuMemsetD8Async\", w->name);\n"
       "  }\n"
       "  return " + E("_OK") + ";\n}\n\n";
  return c;
}

std::string CWriter::ArgAddress(const CandidateManifest& m, const std::string& arg) const {
  if (const TensorSpec* tensor = op_.FindTensor(arg)) return "&fk_t" + std::to_string(tensor - op_.tensors.data());
  for (size_t w = 0; w < m.workspaces.size(); ++w)
    if (m.workspaces[w].name == arg) return "&fk_w" + std::to_string(w);
  for (size_t t = 0; t < m.tensor_maps.size(); ++t)
    if (m.tensor_maps[t].name == arg) return "&fk_maps[" + std::to_string(t) + "]";
  for (const ScalarSpec& sc : op_.scalars)
    if (sc.name == arg) return "&" + CParamName(sc.name);
  return "";
}

// The launches of one kernel: tensor maps encoded from the plan, then per launch its arguments in
// manifest order (pointers, maps and scalars by address, integers narrowed as the manifest says).
bool CWriter::KernelLaunch(const CKernel& k, std::string* out, std::string* err) const {
  const CandidateManifest& m = k.candidate.manifest;
  const std::string st = Status();
  std::string c = "static " + st + " fk_launch_" + std::to_string(k.entry) + "(const " + Plan() +
                  "* plan, const CUfunction* functions, CUstream stream, " + TensorParams() + ScalarParams() +
                  "CUdeviceptr workspace) {\n";
  for (size_t t = 0; t < op_.tensors.size(); ++t)
    c += "  CUdeviceptr fk_t" + std::to_string(t) + " = (CUdeviceptr)(uintptr_t)" + CParamName(op_.tensors[t].name) +
         ";\n";
  for (size_t w = 0; w < m.workspaces.size(); ++w)
    c += "  CUdeviceptr fk_w" + std::to_string(w) + " = workspace + plan->workspaces[" + std::to_string(w) +
         "].offset;\n";
  if (!m.tensor_maps.empty()) {
    c += "  static const cuuint32_t fk_ones[5] = {1, 1, 1, 1, 1};\n";
    c += "  CUtensorMap fk_maps[" + std::to_string(m.tensor_maps.size()) + "];\n";
    c += "  CUresult r;\n";
  }
  c += "  int i;\n";
  for (size_t t = 0; t < op_.tensors.size(); ++t) c += "  (void)fk_t" + std::to_string(t) + ";\n";
  for (size_t w = 0; w < m.workspaces.size(); ++w) c += "  (void)fk_w" + std::to_string(w) + ";\n";
  for (const ScalarSpec& sc : op_.scalars) c += "  (void)" + CParamName(sc.name) + ";\n";
  c += "  (void)workspace;\n";
  for (size_t i = 0; i < m.tensor_maps.size(); ++i) {
    const TensorMapSpec& t = m.tensor_maps[i];
    std::string address, dtype, swizzle, l2, oob;
    if (const TensorSpec* tensor = op_.FindTensor(t.tensor)) {
      address = "fk_t" + std::to_string(tensor - op_.tensors.data());
      dtype = TensorMapDataType(tensor->dtype);
    } else {
      for (size_t w = 0; w < m.workspaces.size(); ++w)
        if (m.workspaces[w].name == t.tensor) address = "fk_w" + std::to_string(w);
      dtype = "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";
    }
    const std::string path = "tensor_maps[" + std::to_string(i) + "]";
    if (!TensorMapEnum("swizzle", t.swizzle, &swizzle, err) || !TensorMapEnum("l2_promotion", t.l2_promotion, &l2, err) ||
        !TensorMapEnum("oob_fill", t.oob_fill, &oob, err)) {
      *err = path + ": " + *err;
      return false;
    }
    const std::string map = "plan->tensor_maps[" + std::to_string(i) + "]";
    c += "  r = cuTensorMapEncodeTiled(&fk_maps[" + std::to_string(i) + "], " + dtype + ", " + map +
         ".rank, (void*)(uintptr_t)" + address + ", " + map + ".dims, " + map + ".strides, " + map + ".box, fk_ones,\n" +
         "                              CU_TENSOR_MAP_INTERLEAVE_NONE, " + swizzle + ", " + l2 + ", " + oob + ");\n";
    c += "  if (r != CUDA_SUCCESS)\n    return fk_cuda_error(r, \"cuTensorMapEncodeTiled\", " +
         CStringLiteral("tensor map '" + t.name + "' over '" + t.tensor +
                        "' (TMA needs a 16-byte aligned address and strides that are multiples of 16 bytes)") +
         ");\n";
  }
  c += "  for (i = 0; i < plan->num_launches; ++i) {\n";
  c += "    const " + T("_launch") + "* l = &plan->launches[i];\n";
  c += "    " + st + " status = " + E("_OK") + ";\n";
  c += "    switch (l->index) {\n";
  for (size_t li = 0; li < m.launches.size(); ++li) {
    const LaunchSpec& l = m.launches[li];
    c += "      case " + std::to_string(li) + ": {  /* " + CommentText(l.kernel) + " */\n";
    std::vector<std::string> slots;
    for (size_t a = 0; a < l.args.size(); ++a) {
      const std::string& arg = l.args[a];
      const std::string value = "fk_a" + std::to_string(a);
      const std::string stored = "l->args[" + std::to_string(a) + "]";
      std::string slot = ArgAddress(m, arg);
      if (slot.empty()) {
        // An expression: the plan's value in a local of the type the manifest gives it.
        double d = 0;
        if (arg.rfind("i64:", 0) == 0) {
          c += "        int64_t " + value + " = " + stored + ";\n";
        } else if (arg.rfind("f32:", 0) == 0 && F32Literal(arg.substr(4), &d)) {
          // The literal as the worker reads it: strtod, then rounded to float.
          char text[64];
          std::snprintf(text, sizeof text, "%.17g", d);
          c += "        float " + value + " = (float)(" + text + ");\n";
        } else if (arg.rfind("f32:", 0) == 0) {
          c += "        float " + value + " = (float)" + stored + ";\n";
        } else {
          c += "        int32_t " + value + " = (int32_t)" + stored + ";\n";
        }
        slot = "&" + value;
      }
      slots.push_back(slot);
    }
    if (slots.empty()) {
      c += "        status = fk_launch_one(l, functions[i], stream, NULL);\n";
    } else {
      c += "        void* fk_args[" + std::to_string(slots.size()) + "];\n";
      for (size_t a = 0; a < slots.size(); ++a)
        c += "        fk_args[" + std::to_string(a) + "] = (void*)" + slots[a] + ";\n";
      c += "        status = fk_launch_one(l, functions[i], stream, fk_args);\n";
    }
    c += "        break;\n      }\n";
  }
  c += "      default:\n        status = fk_error(" + E("_SYSTEM_ERROR") + ", \"a plan of another kernel\");\n";
  c += "    }\n    if (status != " + E("_OK") + ") return status;\n  }\n  return " + E("_OK") + ";\n}\n\n";
  *out = c;
  return true;
}

std::string CWriter::PublicCall() const {
  const std::string st = Status();
  std::string c;
  c += WorkspaceBytesSignature() + " {\n"
       "  " + Plan() + " plan;\n"
       "  " + st + " status;\n"
       "  fk_last_error[0] = '\\0';\n"
       "  if (bytes == NULL) return fk_error(" + E("_INVALID_ARGUMENT") + ", \"bytes is NULL\");\n"
       "  *bytes = 0;\n"
       "  status = " + T("_plan") + "(" + SizeArgs() + ", &plan);\n"
       "  if (status != " + E("_OK") + ") return fk_error(status, plan.message);\n"
       "  *bytes = plan.workspace_bytes;\n"
       "  return " + E("_OK") + ";\n}\n\n";
  c += CallSignature() + " {\n";
  c += "  " + Plan() + " plan;\n"
       "  CUfunction functions[" + E("_MAX_LAUNCHES") + "];\n"
       "  CUcontext context = NULL, current = NULL, popped = NULL;\n"
       "  CUdeviceptr scratch = (CUdeviceptr)(uintptr_t)workspace;\n"
       "  int pushed = 0, allocated = 0;\n"
       "  int64_t num_sms = 0;\n"
       "  const char* sms_call = \"cuStreamGetCtx\";\n"
       "  CUresult r, sms_result;\n"
       "  " + st + " status;\n"
       "  fk_last_error[0] = '\\0';\n"
       "  fk_last_cuda = CUDA_SUCCESS;\n"
       "  /* The plan is for the stream's device. Where the driver cannot name it, the sizes are still\n"
       "     planned (at the nominal count) so that sizes no kernel takes are refused before a driver\n"
       "     error is reported; nothing is launched on such a plan. */\n"
       "  sms_result = cuStreamGetCtx(stream, &context);\n"
       "  if (sms_result == CUDA_SUCCESS) sms_result = fk_context_sms(context, &num_sms, &sms_call);\n"
       "  status = fk_plan_for(" + SizeArgs() + ", sms_result == CUDA_SUCCESS ? num_sms : " + E("_NOMINAL_SMS") +
       ", &plan);\n"
       "  if (status != " + E("_OK") + ") return fk_error(status, plan.message);\n";
  for (const TensorSpec& t : op_.tensors)
    c += "  if (" + CParamName(t.name) + " == NULL) return fk_error(" + E("_INVALID_ARGUMENT") + ", " +
         CStringLiteral("tensor '" + t.name + "' is NULL") + ");\n";
  c += "  if (workspace != NULL && workspace_bytes < plan.workspace_bytes) {\n"
       "    fk_error(" + E("_INVALID_ARGUMENT") + ", \"the workspace holds \");\n" +
       AppendLines("    ", "fk_last_error",
                   {{"(int64_t)workspace_bytes", true},
                    {"\" bytes; these sizes need \""},
                    {"(int64_t)plan.workspace_bytes", true},
                    {CStringLiteral(" (" + T("_workspace_bytes") + ")")}}) +
       "    return " + E("_INVALID_ARGUMENT") + ";\n  }\n";
  c += "  if (sms_result != CUDA_SUCCESS) return fk_cuda_error(sms_result, sms_call, \"the stream's context\");\n"
       "  r = cuCtxGetCurrent(&current);\n"
       "  if (r != CUDA_SUCCESS) return fk_cuda_error(r, \"cuCtxGetCurrent\", \"the calling thread\");\n"
       "  if (context != current) {\n"
       "    r = cuCtxPushCurrent(context);\n"
       "    if (r != CUDA_SUCCESS) return fk_cuda_error(r, \"cuCtxPushCurrent\", \"the stream's context\");\n"
       "    pushed = 1;\n"
       "  }\n"
       "  status = fk_functions(&plan, context, functions);\n"
       "  if (status == " + E("_OK") + " && plan.workspace_bytes > 0 && workspace == NULL) {\n"
       "    r = cuMemAllocAsync(&scratch, plan.workspace_bytes, stream);\n"
       "    if (r != CUDA_SUCCESS) status = fk_cuda_error(r, \"cuMemAllocAsync\", \"the workspace\");\n"
       "    else allocated = 1;\n"
       "  }\n"
       "  if (status == " + E("_OK") + ") status = fk_zero_workspaces(&plan, scratch, stream);\n"
       "  if (status == " + E("_OK") + ") {\n"
       "    switch (plan.kernel) {\n";
  for (const CKernel& k : s_.kernels)
    c += "      case " + std::to_string(k.entry) + ":\n        status = fk_launch_" + std::to_string(k.entry) +
         "(&plan, functions, stream, " + TensorAndScalarArgs() + "scratch);\n        break;\n";
  c += "      default:\n        status = fk_error(" + E("_SYSTEM_ERROR") + ", \"a plan of no exported kernel\");\n"
       "    }\n  }\n"
       "  if (allocated) {\n"
       "    r = cuMemFreeAsync(scratch, stream);\n"
       "    if (r != CUDA_SUCCESS && status == " + E("_OK") +
       ") status = fk_cuda_error(r, \"cuMemFreeAsync\", \"the workspace\");\n"
       "  }\n"
       "  if (pushed) cuCtxPopCurrent(&popped);\n"
       "  return status;\n}\n\n";
  return c;
}

}  // namespace forgek
