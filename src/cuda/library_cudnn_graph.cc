// Building cuDNN backend operation graphs: descriptors, tensors, operations, and the graph ids' table.
#include "library_cudnn_graph.h"

namespace forgek {

void AddCudnnGraphReferences(LibraryTable* table) {
  (*table)["cudnn.conv2d_fprop_bf16_graph"] = &MakeCudnnConvGraphBf16;
  (*table)["cudnn.sdpa_prefill_bf16"] = &MakeCudnnSdpaPrefillBf16;
}

namespace cudnn_graph {

bool Ok(cudnnStatus_t status, const std::string& what, std::string* err) {
  if (status == CUDNN_STATUS_SUCCESS) return true;
  if (err) {
    *err = what + ": " + cudnnGetErrorString(status);
    // The backend's own reason ("... not supported because ...") is what makes a graph debuggable.
    char detail[512] = {0};
    cudnnGetLastErrorString(detail, sizeof detail);
    if (detail[0]) *err += std::string(" (") + detail + ")";
  }
  return false;
}

Desc::~Desc() {
  if (desc_) cudnnBackendDestroyDescriptor(desc_);
}

Desc& Desc::operator=(Desc&& other) noexcept {
  if (this != &other) {
    if (desc_) cudnnBackendDestroyDescriptor(desc_);
    desc_ = other.desc_;
    other.desc_ = nullptr;
  }
  return *this;
}

bool Desc::Create(cudnnBackendDescriptorType_t type, const std::string& what, std::string* err) {
  if (desc_) cudnnBackendDestroyDescriptor(desc_);
  desc_ = nullptr;
  return Ok(cudnnBackendCreateDescriptor(type, &desc_), what + ": cudnnBackendCreateDescriptor", err);
}

bool Desc::Set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
               const void* values, const std::string& what, std::string* err) {
  return Ok(cudnnBackendSetAttribute(desc_, name, type, count, values),
            what + ": cudnnBackendSetAttribute(" + std::to_string(int(name)) + ")", err);
}

bool Desc::Finalize(const std::string& what, std::string* err) {
  return Ok(cudnnBackendFinalize(desc_), what + ": cudnnBackendFinalize", err);
}

Handle::~Handle() {
  if (handle_) cudnnDestroy(handle_);
}

bool Handle::Init(std::string* err) { return handle_ || Ok(cudnnCreate(&handle_), "cudnnCreate", err); }

bool Handle::Bind(void* stream, std::string* err) {
  return Ok(cudnnSetStream(handle_, static_cast<cudaStream_t>(stream)), "cudnnSetStream", err);
}

std::vector<int64_t> PackedStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

Desc* GraphBuilder::New(cudnnBackendDescriptorType_t type, const std::string& what, std::string* err) {
  owned_.push_back(std::make_unique<Desc>());
  return owned_.back()->Create(type, what, err) ? owned_.back().get() : nullptr;
}

bool GraphBuilder::AddOperation(Desc* op, const std::string& what, std::string* err) {
  if (!op->Finalize(what, err)) return false;
  ops_.push_back(op->get());
  return true;
}

cudnnBackendDescriptor_t GraphBuilder::Tensor(const std::string& name, const TensorSpec& spec, std::string* err) {
  const std::string what = label_ + ": tensor '" + name + "' (uid " + std::to_string(spec.uid) + ")";
  const int64_t rank = int64_t(spec.dims.size()), alignment = 16;
  const bool is_virtual = spec.is_virtual, by_value = spec.by_value;
  Desc* t = New(CUDNN_BACKEND_TENSOR_DESCRIPTOR, what, err);
  const bool ok = t && t->Set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &spec.type, what, err) &&
                  t->Set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, rank, spec.dims.data(), what, err) &&
                  t->Set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, rank, spec.strides.data(), what, err) &&
                  t->Set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &spec.uid, what, err) &&
                  t->Set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment, what, err) &&
                  t->Set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual, what, err) &&
                  (!by_value || t->Set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value, what, err)) &&
                  t->Finalize(what, err);
  return ok ? t->get() : nullptr;
}

bool GraphBuilder::Pointwise(const std::string& name, cudnnPointwiseMode_t mode, cudnnDataType_t compute,
                             cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t t,
                             cudnnBackendDescriptor_t y, std::string* err, int64_t axis) {
  const std::string what = label_ + ": pointwise '" + name + "'";
  Desc* pw = New(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, what, err);
  if (!pw || !pw->Set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, what, err) ||
      !pw->Set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &compute, what, err) ||
      (mode == CUDNN_POINTWISE_GEN_INDEX &&
       !pw->Set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis, what, err)) ||
      !pw->Finalize(what, err))
    return false;
  const float one = 1.0f;
  Desc* op = New(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, what, err);
  return op && op->SetDesc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw->get(), what, err) &&
         op->SetDesc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x, what, err) &&
         (!b || op->SetDesc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b, what, err)) &&
         (!t || op->SetDesc(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, t, what, err)) &&
         op->SetDesc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y, what, err) &&
         op->Set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &one, what, err) &&
         op->Set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &one, what, err) &&
         AddOperation(op, what, err);
}

bool GraphBuilder::Matmul(const std::string& name, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b,
                          cudnnBackendDescriptor_t c, std::string* err) {
  const std::string what = label_ + ": matmul '" + name + "'";
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  Desc* mm = New(CUDNN_BACKEND_MATMUL_DESCRIPTOR, what, err);
  if (!mm || !mm->Set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, what, err) ||
      !mm->Finalize(what, err))
    return false;
  Desc* op = New(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, what, err);
  return op && op->SetDesc(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a, what, err) &&
         op->SetDesc(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b, what, err) &&
         op->SetDesc(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c, what, err) &&
         op->SetDesc(CUDNN_ATTR_OPERATION_MATMUL_DESC, mm->get(), what, err) && AddOperation(op, what, err);
}

bool GraphBuilder::Reduction(const std::string& name, cudnnReduceTensorOp_t reduce, cudnnBackendDescriptor_t x,
                             cudnnBackendDescriptor_t y, std::string* err) {
  const std::string what = label_ + ": reduction '" + name + "'";
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  Desc* rd = New(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, what, err);
  if (!rd || !rd->Set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, what, err) ||
      !rd->Set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &reduce, what, err) ||
      !rd->Finalize(what, err))
    return false;
  Desc* op = New(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, what, err);
  return op && op->SetDesc(CUDNN_ATTR_OPERATION_REDUCTION_DESC, rd->get(), what, err) &&
         op->SetDesc(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x, what, err) &&
         op->SetDesc(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y, what, err) && AddOperation(op, what, err);
}

bool GraphBuilder::ConvFprop(const std::string& name, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t w,
                             cudnnBackendDescriptor_t y, const std::vector<int64_t>& pads, std::string* err) {
  const std::string what = label_ + ": convolution '" + name + "'";
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const int64_t spatial = int64_t(pads.size());
  const std::vector<int64_t> ones(pads.size(), 1);
  Desc* conv = New(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, what, err);
  if (!conv || !conv->Set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, what, err) ||
      !conv->Set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, what, err) ||
      !conv->Set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial, what, err) ||
      !conv->Set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, spatial, pads.data(), what, err) ||
      !conv->Set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, spatial, pads.data(), what, err) ||
      !conv->Set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, spatial, ones.data(), what, err) ||
      !conv->Set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, spatial, ones.data(), what, err) ||
      !conv->Finalize(what, err))
    return false;
  const float alpha = 1.0f, beta = 0.0f;
  Desc* op = New(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, what, err);
  return op && op->SetDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x, what, err) &&
         op->SetDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w, what, err) &&
         op->SetDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y, what, err) &&
         op->SetDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv->get(), what, err) &&
         op->Set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha, what, err) &&
         op->Set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta, what, err) &&
         AddOperation(op, what, err);
}

bool GraphBuilder::Finalize(cudnnHandle_t handle, std::string* err) {
  const std::string what = label_ + ": operation graph (" + std::to_string(ops_.size()) + " operations)";
  return graph_.Create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, what, err) &&
         graph_.Set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, what, err) &&
         graph_.Set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, int64_t(ops_.size()), ops_.data(),
                    what, err) &&
         graph_.Finalize(what, err);
}

}  // namespace cudnn_graph
}  // namespace forgek
