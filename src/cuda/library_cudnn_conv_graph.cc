// cudnn.conv2d_fprop_bf16_graph: NHWC bf16 convolution through cuDNN's graph API, autotuned as PyTorch's
// cudnn.benchmark does (the legacy cudnnFindConvolutionForwardAlgorithmEx never sees the newer engines).
#include "library_cudnn_graph.h"
#include "library_tensors.h"

namespace forgek {
namespace {

using cudnn_graph::TensorSpec;

constexpr int64_t kX = 1, kW = 2, kY = 3;  // tensor uids

class ConvGraphBf16 : public LibraryReference {
 public:
  bool Prepare(const Bindings&, const TensorMap& tensors, const std::map<std::string, double>&,
               std::string* err) override {
    TensorRequirements req("cudnn.conv2d_fprop_bf16_graph", tensors);
    const DeviceTensor* x = req.Get("x", {DType::bf16}, 4, err);
    const DeviceTensor* w = x ? req.Get("w", {DType::bf16}, 4, err) : nullptr;
    const DeviceTensor* y = w ? req.Get("y", {DType::bf16}, 4, err) : nullptr;
    if (!y) return false;
    const int64_t n = x->shape[0], h = x->shape[1], wd = x->shape[2], c = x->shape[3];
    const int64_t k = w->shape[0], r = w->shape[1], s = w->shape[2];
    if (!req.Dims("w", *w, {k, r, s, c}, err) || !req.Dims("y", *y, {n, h, wd, k}, err)) return false;
    if (r % 2 == 0 || s % 2 == 0) {
      *err = req.id() + ": filter " + std::to_string(r) + "x" + std::to_string(s) +
             " must have odd sides (same padding, stride 1)";
      return false;
    }
    for (int64_t v : {n, h, wd, c, k})
      if (!req.FitsInt("dimension", v, err)) return false;

    // The graph API takes logical NCHW / KCRS dimensions; the strides say the memory is NHWC / KRSC.
    const TensorSpec xs{kX, CUDNN_DATA_BFLOAT16, {n, c, h, wd}, {h * wd * c, 1, wd * c, c}};
    const TensorSpec ws{kW, CUDNN_DATA_BFLOAT16, {k, c, r, s}, {r * s * c, 1, s * c, c}};
    const TensorSpec ys{kY, CUDNN_DATA_BFLOAT16, {n, k, h, wd}, {h * wd * k, 1, wd * k, k}};
    if (!handle_.Init(err) || !handle_.Bind(nullptr, err)) return false;
    graph_ = std::make_unique<cudnn_graph::GraphBuilder>(req.id());
    cudnnBackendDescriptor_t xd = graph_->Tensor("x", xs, err);
    cudnnBackendDescriptor_t wdesc = xd ? graph_->Tensor("w", ws, err) : nullptr;
    cudnnBackendDescriptor_t yd = wdesc ? graph_->Tensor("y", ys, err) : nullptr;
    if (!yd || !graph_->ConvFprop("fprop", xd, wdesc, yd, {r / 2, s / 2}, err) ||
        !graph_->Finalize(handle_.get(), err))
      return false;
    const std::string key = req.id() + ShapeText({n, h, wd, c, k, r, s});
    // Timing writes y, which is fine: Prepare is outside timing and y is an output.
    return plan_.Tune(req.id(), key, handle_.get(), graph_->graph(), {kX, kW, kY}, {x->ptr, w->ptr, y->ptr},
                      cudnn_graph::TuneOptions{}, err);
  }

  bool Launch(void* stream, std::string* err) override {
    return handle_.Bind(stream, err) && plan_.Execute(handle_.get(), err);
  }

 private:
  cudnn_graph::Handle handle_;
  std::unique_ptr<cudnn_graph::GraphBuilder> graph_;  // kept alive with the plan built from it
  cudnn_graph::TunedPlan plan_;
};

}  // namespace

std::unique_ptr<LibraryReference> MakeCudnnConvGraphBf16() { return std::make_unique<ConvGraphBf16>(); }

}  // namespace forgek
