// Binding kernels to buffers: functions, shared-memory limits, tensor maps, arguments, launches.
#include "kernel_binding.h"

#include <cstring>

namespace forgek::worker {
namespace {

bool Fail(GpuError* err, const std::string& msg) {
  err->message = msg;
  return false;
}

CUtensorMapDataType TensorMapType(DType t) {
  switch (t) {
    case DType::f64: return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
    case DType::f32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case DType::f16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DType::bf16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case DType::i32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case DType::u32: return CU_TENSOR_MAP_DATA_TYPE_UINT32;
    case DType::i64: return CU_TENSOR_MAP_DATA_TYPE_INT64;
    default: return CU_TENSOR_MAP_DATA_TYPE_UINT8;  // fp8 and 8-bit integers move as bytes
  }
}

bool Swizzle(const std::string& s, CUtensorMapSwizzle* out) {
  if (s.empty() || s == "none") *out = CU_TENSOR_MAP_SWIZZLE_NONE;
  else if (s == "32B") *out = CU_TENSOR_MAP_SWIZZLE_32B;
  else if (s == "64B") *out = CU_TENSOR_MAP_SWIZZLE_64B;
  else if (s == "128B") *out = CU_TENSOR_MAP_SWIZZLE_128B;
  else return false;
  return true;
}

bool L2Promotion(const std::string& s, CUtensorMapL2promotion* out) {
  if (s.empty() || s == "none") *out = CU_TENSOR_MAP_L2_PROMOTION_NONE;
  else if (s == "64B") *out = CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
  else if (s == "128B") *out = CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  else if (s == "256B") *out = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  else return false;
  return true;
}

}  // namespace

bool BoundKernel::Init(GpuContext* gpu, const WireKernel& kernel, const WireConfig& config, GpuError* err) {
  gpu_ = gpu;
  kernel_ = kernel;
  config_ = &config;
  err->kernel = kernel.label;
  if (!kernel.library.empty()) {
    std::string why;
    if (!HasLibraryReference(kernel.library))
      return Fail(err, "library reference '" + kernel.library + "' is not built into this worker");
    return true;
  }
  std::string cubin;
  if (!Base64Decode(kernel.cubin_b64, &cubin)) return Fail(err, "cubin_b64 is not valid base64");
  CUmodule module;
  if (!gpu->LoadModule(cubin, &module, err)) return false;
  const cuda::Driver& d = gpu->d();
  for (const ResolvedLaunch& l : kernel.launch.launches) {
    CUfunction f;
    if (!Ck(d.cuModuleGetFunction(&f, module, l.kernel.c_str()), "find kernel '" + l.kernel + "'", err)) return false;
    // Raised whenever dynamic memory is asked for: the default allowance is 48 KB minus the
    // kernel's static shared memory, so 48 KB of dynamic memory beside any static fails at launch.
    if (l.smem > 0 &&
        !Ck(d.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(l.smem)),
            "allow " + std::to_string(l.smem) + " bytes of dynamic shared memory for " + l.kernel, err))
      return false;
    if (l.cluster[0] * l.cluster[1] * l.cluster[2] > 8 &&
        !Ck(d.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
            "allow a non-portable cluster size for " + l.kernel, err))
      return false;
    functions_.push_back(f);
  }
  for (size_t i = 0; i < kernel.launch.workspaces.size(); ++i) {
    DeviceBuffer b;
    if (!b.Allocate(kernel.launch.workspaces[i].second, err)) return false;
    bool zero = i < kernel.launch.workspace_zero.size() && kernel.launch.workspace_zero[i];
    if (!zero) {  // poisoned once: a kernel must not rely on what a workspace holds
      std::string text;
      if (!cuda::Poison(b.get(), cuda::ElemType::u8, b.bytes(), gpu->stream(), &text))
        return gpu->HelperFailed(text, err);
    }
    workspaces_.push_back(std::move(b));
  }
  return true;
}

bool BoundKernel::EncodeTensorMap(const ResolvedTensorMap& m, const TensorBindings& tensors, CUtensorMap* out,
                                  GpuError* err) {
  DeviceTensor t;
  auto it = tensors.find(m.tensor);
  if (it != tensors.end()) {
    t = it->second;
  } else {
    bool found = false;
    for (size_t i = 0; i < kernel_.launch.workspaces.size(); ++i) {
      if (kernel_.launch.workspaces[i].first != m.tensor) continue;
      // A workspace has no dtype: tensor maps over workspaces address fp32 elements.
      t.ptr = workspaces_[i].get();
      t.dtype = DType::f32;
      t.shape = {workspaces_[i].bytes() / 4};
      found = true;
    }
    if (!found) return Fail(err, "tensor map " + m.name + ": no tensor or workspace '" + m.tensor + "'");
  }
  std::vector<int64_t> shape = m.shape.empty() ? t.shape : m.shape;
  size_t rank = shape.size();
  if (rank < 1 || rank > 5 || m.box.size() != rank)
    return Fail(err, "tensor map " + m.name + ": rank " + std::to_string(rank) + " with a box of rank " +
                         std::to_string(m.box.size()) + " (need equal ranks, 1 to 5)");
  // The driver wants the innermost dimension first and strides (bytes) for all but it.
  cuuint64_t dims[5], strides[4];
  cuuint32_t box[5], elem_strides[5];
  int64_t stride = DTypeBytes(t.dtype);
  for (size_t i = 0; i < rank; ++i) {
    dims[i] = static_cast<cuuint64_t>(shape[rank - 1 - i]);
    box[i] = static_cast<cuuint32_t>(m.box[rank - 1 - i]);
    elem_strides[i] = 1;
    stride *= shape[rank - 1 - i];
    if (i + 1 < rank) strides[i] = static_cast<cuuint64_t>(stride);
  }
  CUtensorMapSwizzle swizzle;
  CUtensorMapL2promotion promotion;
  if (!Swizzle(m.swizzle, &swizzle)) return Fail(err, "tensor map " + m.name + ": unknown swizzle '" + m.swizzle + "'");
  if (!L2Promotion(m.l2_promotion, &promotion))
    return Fail(err, "tensor map " + m.name + ": unknown l2_promotion '" + m.l2_promotion + "'");
  CUtensorMapFloatOOBfill fill =
      m.oob_fill == "nan" ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  return Ck(gpu_->d().cuTensorMapEncodeTiled(out, TensorMapType(t.dtype), static_cast<cuuint32_t>(rank), t.ptr, dims,
                                              strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                              promotion, fill),
            "encode tensor map " + m.name, err);
}

bool BoundKernel::InputsChanged(GpuError* err) {
  for (const auto& inst : instances_) {
    std::string why;
    if (inst->library && !inst->library->InputsChanged(&why))
      return Fail(err, "library reference " + kernel_.library + ": " + why);
  }
  return true;
}

bool BoundKernel::AddInstance(const TensorBindings& tensors, int* instance, GpuError* err) {
  auto inst = std::make_unique<Instance>();
  if (!kernel_.library.empty()) {
    std::string why;
    inst->library = MakeLibraryReference(kernel_.library, &why);
    if (!inst->library) return Fail(err, "library reference " + kernel_.library + ": " + why);
    std::map<std::string, double> scalars;
    for (const ScalarSpec& s : config_->scalars) scalars[s.name] = s.value;
    if (!inst->library->Prepare(config_->values, tensors, scalars, &why))
      return Fail(err, "library reference " + kernel_.library + ": " + why);
  } else {
    std::map<std::string, CUtensorMap> maps;
    for (const ResolvedTensorMap& m : kernel_.launch.tensor_maps)
      if (!EncodeTensorMap(m, tensors, &maps[m.name], err)) return false;
    for (const ResolvedLaunch& l : kernel_.launch.launches) {
      std::vector<void*> params;
      for (const ResolvedArg& a : l.args) {
        ArgSlot& slot = inst->slots.emplace_back();
        std::memset(slot.bytes, 0, sizeof slot.bytes);
        switch (a.kind) {
          case ResolvedArg::Kind::tensor: {
            auto it = tensors.find(a.name);
            if (it == tensors.end()) return Fail(err, l.kernel + ": no tensor '" + a.name + "'");
            std::memcpy(slot.bytes, &it->second.ptr, sizeof(void*));
            break;
          }
          case ResolvedArg::Kind::workspace: {
            bool found = false;
            for (size_t i = 0; i < kernel_.launch.workspaces.size(); ++i) {
              if (kernel_.launch.workspaces[i].first != a.name) continue;
              CUdeviceptr p = workspaces_[i].ptr();
              std::memcpy(slot.bytes, &p, sizeof p);
              found = true;
            }
            if (!found) return Fail(err, l.kernel + ": no workspace '" + a.name + "'");
            break;
          }
          case ResolvedArg::Kind::tensor_map: {
            auto it = maps.find(a.name);
            if (it == maps.end()) return Fail(err, l.kernel + ": no tensor map '" + a.name + "'");
            std::memcpy(slot.bytes, &it->second, sizeof(CUtensorMap));
            break;
          }
          case ResolvedArg::Kind::i32: {
            int32_t v = static_cast<int32_t>(a.i);
            std::memcpy(slot.bytes, &v, sizeof v);
            break;
          }
          case ResolvedArg::Kind::i64:
            std::memcpy(slot.bytes, &a.i, sizeof a.i);
            break;
          case ResolvedArg::Kind::f32:
            std::memcpy(slot.bytes, &a.f, sizeof a.f);
            break;
        }
        params.push_back(slot.bytes);
      }
      inst->params.push_back(std::move(params));
    }
  }
  instances_.push_back(std::move(inst));
  *instance = static_cast<int>(instances_.size()) - 1;
  return true;
}

bool BoundKernel::Enqueue(int instance, GpuError* err) {
  err->kernel = kernel_.label;
  Instance& inst = *instances_.at(static_cast<size_t>(instance));
  const cuda::Driver& d = gpu_->d();
  CUstream stream = gpu_->stream();
  if (inst.library) {
    std::string why;
    if (!inst.library->Launch(stream, &why)) return Fail(err, "library reference " + kernel_.library + ": " + why);
    return true;
  }
  for (size_t i = 0; i < workspaces_.size(); ++i) {
    if (i < kernel_.launch.workspace_zero.size() && kernel_.launch.workspace_zero[i] &&
        !Ck(d.cuMemsetD8Async(workspaces_[i].ptr(), 0, static_cast<size_t>(workspaces_[i].bytes()), stream),
            "zero workspace " + kernel_.launch.workspaces[i].first, err))
      return false;
  }
  for (size_t k = 0; k < functions_.size(); ++k) {
    const ResolvedLaunch& l = kernel_.launch.launches[k];
    CUlaunchConfig cfg{};
    cfg.gridDimX = static_cast<unsigned>(l.grid[0]);
    cfg.gridDimY = static_cast<unsigned>(l.grid[1]);
    cfg.gridDimZ = static_cast<unsigned>(l.grid[2]);
    cfg.blockDimX = static_cast<unsigned>(l.block[0]);
    cfg.blockDimY = static_cast<unsigned>(l.block[1]);
    cfg.blockDimZ = static_cast<unsigned>(l.block[2]);
    cfg.sharedMemBytes = static_cast<unsigned>(l.smem);
    cfg.hStream = stream;
    CUlaunchAttribute attr{};
    if (l.cluster[0] * l.cluster[1] * l.cluster[2] > 1) {
      attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attr.value.clusterDim.x = static_cast<unsigned>(l.cluster[0]);
      attr.value.clusterDim.y = static_cast<unsigned>(l.cluster[1]);
      attr.value.clusterDim.z = static_cast<unsigned>(l.cluster[2]);
      cfg.attrs = &attr;
      cfg.numAttrs = 1;
    }
    if (!Ck(d.cuLaunchKernelEx(&cfg, functions_[k], inst.params[k].data(), nullptr),
            "launch " + l.kernel + " (launch " + std::to_string(k) + ")", err))
      return false;
  }
  return true;
}

}  // namespace forgek::worker
