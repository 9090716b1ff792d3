// cuDNN references (legacy API, still in cuDNN 9): row softmax, NHWC bf16 convolution and
// depthwise convolution.
#include <cudnn.h>

#include <algorithm>

#include "library_cudnn_graph.h"
#include "library_registry.h"
#include "library_tensors.h"

namespace forgek {
namespace {

// Find-time workspace cap: algorithms that want more are not tried.
constexpr size_t kMaxConvWorkspaceBytes = size_t(1) << 30;

// Status checks and the handle are the graph references' (library_cudnn_graph.h).
using cudnn_graph::Ok;
using CudnnHandle = cudnn_graph::Handle;

class TensorDesc {
 public:
  ~TensorDesc() {
    if (desc_) cudnnDestroyTensorDescriptor(desc_);
  }
  bool Set(cudnnTensorFormat_t format, cudnnDataType_t type, int n, int c, int h, int w, std::string* err) {
    return (desc_ || Ok(cudnnCreateTensorDescriptor(&desc_), "cudnnCreateTensorDescriptor", err)) &&
           Ok(cudnnSetTensor4dDescriptor(desc_, format, type, n, c, h, w), "cudnnSetTensor4dDescriptor", err);
  }
  cudnnTensorDescriptor_t get() const { return desc_; }

 private:
  cudnnTensorDescriptor_t desc_ = nullptr;
};

// cudnn.softmax_fp32: y[M,N] = softmax over each row of x[M,N] (max-subtracted, "accurate").
class SoftmaxFp32 : public LibraryReference {
 public:
  bool Prepare(const Bindings&, const TensorMap& tensors, const std::map<std::string, double>&,
               std::string* err) override {
    TensorRequirements req("cudnn.softmax_fp32", tensors);
    const DeviceTensor* x = req.Get("x", {DType::f32}, 2, err);
    const DeviceTensor* y = x ? req.Get("y", {DType::f32}, 2, err) : nullptr;
    if (!y || !req.Dims("y", *y, x->shape, err)) return false;
    if (!req.FitsInt("M", x->shape[0], err) || !req.FitsInt("N", x->shape[1], err)) return false;
    x_ = x->ptr, y_ = y->ptr;
    // A row is one image's channels: CHANNEL mode normalises over C for each (n, h, w).
    return handle_.Init(err) &&
           desc_.Set(CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, int(x->shape[0]), int(x->shape[1]), 1, 1, err);
  }
  bool Launch(void* stream, std::string* err) override {
    const float alpha = 1.0f, beta = 0.0f;
    return handle_.Bind(stream, err) &&
           Ok(cudnnSoftmaxForward(handle_.get(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &alpha,
                                       desc_.get(), x_, &beta, desc_.get(), y_),
                   "cudnnSoftmaxForward", err);
  }

 private:
  CudnnHandle handle_;
  TensorDesc desc_;
  const void* x_ = nullptr;
  void* y_ = nullptr;
};

// A bf16 NHWC forward convolution, stride 1, "same" zero padding, fp32 accumulation, with the
// fastest algorithm cudnnFindConvolutionForwardAlgorithmEx measures at Prepare.
class ConvolutionBf16 : public LibraryReference {
 public:
  explicit ConvolutionBf16(bool depthwise) : depthwise_(depthwise) {}
  ~ConvolutionBf16() override {
    if (filter_) cudnnDestroyFilterDescriptor(filter_);
    if (conv_) cudnnDestroyConvolutionDescriptor(conv_);
  }

  bool Prepare(const Bindings&, const TensorMap& tensors, const std::map<std::string, double>&,
               std::string* err) override {
    TensorRequirements req(depthwise_ ? "cudnn.depthwise_conv2d_bf16" : "cudnn.conv2d_fprop_bf16", tensors);
    const DeviceTensor* x = req.Get("x", {DType::bf16}, 4, err);
    const DeviceTensor* w = x ? req.Get("w", {DType::bf16}, 4, err) : nullptr;
    const DeviceTensor* y = w ? req.Get("y", {DType::bf16}, 4, err) : nullptr;
    if (!y) return false;
    const int64_t n = x->shape[0], h = x->shape[1], wd = x->shape[2], c = x->shape[3];
    const int64_t k = depthwise_ ? c : w->shape[0], r = w->shape[1], s = w->shape[2];
    if (!req.Dims("w", *w, {k, r, s, depthwise_ ? 1 : c}, err) || !req.Dims("y", *y, {n, h, wd, k}, err))
      return false;
    if (r % 2 == 0 || s % 2 == 0) {
      *err = req.id() + ": filter " + std::to_string(r) + "x" + std::to_string(s) +
             " must have odd sides (same padding, stride 1)";
      return false;
    }
    for (int64_t v : {n, h, wd, c, k})
      if (!req.FitsInt("dimension", v, err)) return false;
    x_ = x->ptr, w_ = w->ptr, y_ = y->ptr;

    if (!handle_.Init(err) ||
        !x_desc_.Set(CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16, int(n), int(c), int(h), int(wd), err) ||
        !y_desc_.Set(CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16, int(n), int(k), int(h), int(wd), err) ||
        !Ok(cudnnCreateFilterDescriptor(&filter_), "cudnnCreateFilterDescriptor", err) ||
        // NHWC filter format is KRSC; a depthwise filter has one input channel per group.
        !Ok(cudnnSetFilter4dDescriptor(filter_, CUDNN_DATA_BFLOAT16, CUDNN_TENSOR_NHWC, int(k),
                                            depthwise_ ? 1 : int(c), int(r), int(s)),
                 "cudnnSetFilter4dDescriptor", err) ||
        !Ok(cudnnCreateConvolutionDescriptor(&conv_), "cudnnCreateConvolutionDescriptor", err) ||
        !Ok(cudnnSetConvolution2dDescriptor(conv_, int(r / 2), int(s / 2), 1, 1, 1, 1,
                                                 CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                 "cudnnSetConvolution2dDescriptor", err) ||
        !Ok(cudnnSetConvolutionMathType(conv_, CUDNN_TENSOR_OP_MATH), "cudnnSetConvolutionMathType", err) ||
        (depthwise_ &&
         !Ok(cudnnSetConvolutionGroupCount(conv_, int(c)), "cudnnSetConvolutionGroupCount", err)))
      return false;
    return ChooseAlgorithm(req.id(), err);
  }

  bool Launch(void* stream, std::string* err) override {
    const float alpha = 1.0f, beta = 0.0f;
    return handle_.Bind(stream, err) &&
           Ok(cudnnConvolutionForward(handle_.get(), &alpha, x_desc_.get(), x_, filter_, w_, conv_, algo_,
                                           workspace_.get(), workspace_bytes_, &beta, y_desc_.get(), y_),
                   "cudnnConvolutionForward", err);
  }

 private:
  // The heuristic lists the candidates and their workspace; Find times them (it writes y,
  // which is fine outside timing) and the fastest that succeeds is kept.
  bool ChooseAlgorithm(const std::string& id, std::string* err) {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int count = 0;
    if (!Ok(cudnnGetConvolutionForwardAlgorithm_v7(handle_.get(), x_desc_.get(), filter_, conv_, y_desc_.get(),
                                                        CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, perf),
                 "cudnnGetConvolutionForwardAlgorithm_v7", err))
      return false;
    size_t find_bytes = 0;
    for (int i = 0; i < count; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kMaxConvWorkspaceBytes)
        find_bytes = std::max(find_bytes, perf[i].memory);
    if (!workspace_.Reserve(find_bytes, err) ||
        !Ok(cudnnFindConvolutionForwardAlgorithmEx(handle_.get(), x_desc_.get(), x_, filter_, w_, conv_,
                                                        y_desc_.get(), y_, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count,
                                                        perf, workspace_.get(), find_bytes),
                 "cudnnFindConvolutionForwardAlgorithmEx", err))
      return false;
    for (int i = 0; i < count; ++i) {  // sorted fastest first
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= find_bytes) {
        algo_ = perf[i].algo;
        workspace_bytes_ = perf[i].memory;
        return CudaOk(cudaDeviceSynchronize(), "cudnnFindConvolutionForwardAlgorithmEx", err);
      }
    }
    *err = id + ": cuDNN found no working convolution algorithm for these shapes";
    return false;
  }

  bool depthwise_;
  CudnnHandle handle_;
  TensorDesc x_desc_, y_desc_;
  cudnnFilterDescriptor_t filter_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  DeviceBuffer workspace_;
  size_t workspace_bytes_ = 0;
  const void *x_ = nullptr, *w_ = nullptr;
  void* y_ = nullptr;
};

std::unique_ptr<LibraryReference> MakeSoftmax() { return std::make_unique<SoftmaxFp32>(); }
std::unique_ptr<LibraryReference> MakeConv() { return std::make_unique<ConvolutionBf16>(false); }
std::unique_ptr<LibraryReference> MakeDepthwise() { return std::make_unique<ConvolutionBf16>(true); }

}  // namespace

void AddCudnnReferences(LibraryTable* table) {
  (*table)["cudnn.softmax_fp32"] = &MakeSoftmax;
  (*table)["cudnn.conv2d_fprop_bf16"] = &MakeConv;
  (*table)["cudnn.depthwise_conv2d_bf16"] = &MakeDepthwise;
}

}  // namespace forgek
