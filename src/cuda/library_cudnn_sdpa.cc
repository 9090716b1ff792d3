// cudnn.sdpa_prefill_bf16: causal GQA attention as cuDNN's fused flash-attention forward, built with the
// backend graph API (the graph cudnn-frontend's sdpa() lowers to, inference mode, no stats output).
#include <cmath>
#include <limits>

#include "library_cudnn_graph.h"
#include "library_tensors.h"

namespace forgek {
namespace {

using cudnn_graph::PackedStrides;
using cudnn_graph::TensorSpec;

constexpr int64_t kQ = 1, kK = 2, kV = 3, kO = 4, kScale = 5, kNegInf = 6;  // uids of real tensors

class SdpaPrefillBf16 : public LibraryReference {
 public:
  bool Prepare(const Bindings&, const TensorMap& tensors, const std::map<std::string, double>& scalars,
               std::string* err) override {
    TensorRequirements req("cudnn.sdpa_prefill_bf16", tensors);
    const DeviceTensor* q = req.Get("q", {DType::bf16}, 4, err);
    const DeviceTensor* k = q ? req.Get("k", {DType::bf16}, 4, err) : nullptr;
    const DeviceTensor* v = k ? req.Get("v", {DType::bf16}, 4, err) : nullptr;
    const DeviceTensor* o = v ? req.Get("o", {DType::bf16}, 4, err) : nullptr;
    if (!o) return false;
    const int64_t b = q->shape[0], hq = q->shape[1], s = q->shape[2], d = q->shape[3], hkv = k->shape[1];
    if (!req.Dims("k", *k, {b, hkv, s, d}, err) || !req.Dims("v", *v, {b, hkv, s, d}, err) ||
        !req.Dims("o", *o, {b, hq, s, d}, err))
      return false;
    if (hq % hkv != 0) {
      *err = req.id() + ": " + std::to_string(hq) + " query heads do not group over " + std::to_string(hkv) +
             " key/value heads (HQ must be a multiple of HKV)";
      return false;
    }
    auto it = scalars.find("softmax_scale");
    scale_ = it != scalars.end() ? float(it->second) : float(1.0 / std::sqrt(double(d)));
    if (!handle_.Init(err) || !handle_.Bind(nullptr, err)) return false;

    // The backend recognises the fused pattern only as cudnn-frontend emits it. Its softmax adds a
    // virtual log-sum-exp ("stats") branch even when no stats are wanted; a graph without that
    // branch is the second try.
    const std::vector<int64_t> uids = {kQ, kK, kV, kO, kScale, kNegInf};
    const std::vector<void*> pointers = {q->ptr, k->ptr, v->ptr, o->ptr, &scale_, &neg_inf_};
    std::string first_err;
    for (bool stats_branch : {true, false}) {
      const std::string key = req.id() + ShapeText({b, hq, hkv, s, d}) + (stats_branch ? "+stats" : "");
      if (Build(req.id(), b, hq, hkv, s, d, stats_branch, err) &&
          plan_.Tune(req.id(), key, handle_.get(), graph_->graph(), uids, pointers, cudnn_graph::TuneOptions{}, err))
        return true;
      if (first_err.empty()) first_err = *err;
    }
    *err = first_err + " | without the stats branch: " + *err;
    return false;
  }

  bool Launch(void* stream, std::string* err) override {
    return handle_.Bind(stream, err) && plan_.Execute(handle_.get(), err);
  }

 private:
  // S = Q·Kᵀ · scale; causal mask (row >= column kept, else -inf); P = softmax(S) in bf16; O = P·V.
  // K enters as Kᵀ [B, HKV, D, S] (strides swapped, same memory); the matmuls broadcast HKV heads
  // over HQ, which is how cuDNN expresses grouped-query attention.
  bool Build(const std::string& id, int64_t b, int64_t hq, int64_t hkv, int64_t s, int64_t d, bool stats_branch,
             std::string* err) {
    graph_ = std::make_unique<cudnn_graph::GraphBuilder>(id);
    cudnn_graph::GraphBuilder& g = *graph_;
    const std::vector<int64_t> full = {b, hq, s, s}, row = {b, hq, s, 1};
    int64_t uid = 100;
    auto virt = [&](const char* name, cudnnDataType_t type, const std::vector<int64_t>& dims) {
      return g.Tensor(name, TensorSpec{uid++, type, dims, PackedStrides(dims), true, false}, err);
    };
    const auto kF = CUDNN_DATA_FLOAT;
    const auto kB = CUDNN_DATA_BFLOAT16;
    cudnnBackendDescriptor_t q = g.Tensor("q", {kQ, kB, {b, hq, s, d}, PackedStrides({b, hq, s, d})}, err);
    cudnnBackendDescriptor_t kt =
        q ? g.Tensor("k (as K^T)", {kK, kB, {b, hkv, d, s}, {hkv * s * d, s * d, 1, d}}, err) : nullptr;
    cudnnBackendDescriptor_t v =
        kt ? g.Tensor("v", {kV, kB, {b, hkv, s, d}, PackedStrides({b, hkv, s, d})}, err) : nullptr;
    cudnnBackendDescriptor_t o =
        v ? g.Tensor("o", {kO, kB, {b, hq, s, d}, PackedStrides({b, hq, s, d})}, err) : nullptr;
    // Scalars have the rank of the tensors they meet (the backend rejects a rank-1 B for a rank-4 X).
    const std::vector<int64_t> one = {1, 1, 1, 1};
    cudnnBackendDescriptor_t scale = o ? g.Tensor("softmax_scale", {kScale, kF, one, one, false, true}, err) : nullptr;
    cudnnBackendDescriptor_t neg_inf = scale ? g.Tensor("-inf", {kNegInf, kF, one, one, false, true}, err) : nullptr;
    if (!neg_inf) return false;
    cudnnBackendDescriptor_t s0 = virt("S", kF, full), s1 = s0 ? virt("S*scale", kF, full) : nullptr;
    cudnnBackendDescriptor_t ri = s1 ? virt("row", CUDNN_DATA_INT32, full) : nullptr;
    cudnnBackendDescriptor_t ci = ri ? virt("column", CUDNN_DATA_INT32, full) : nullptr;
    cudnnBackendDescriptor_t keep = ci ? virt("row>=column", CUDNN_DATA_BOOLEAN, full) : nullptr;
    cudnnBackendDescriptor_t s2 = keep ? virt("masked", kF, full) : nullptr;
    cudnnBackendDescriptor_t mx = s2 ? virt("max", kF, row) : nullptr;
    cudnnBackendDescriptor_t sub = mx ? virt("S-max", kF, full) : nullptr;
    cudnnBackendDescriptor_t ex = sub ? virt("exp", kF, full) : nullptr;
    cudnnBackendDescriptor_t sum = ex ? virt("sum", kF, row) : nullptr;
    cudnnBackendDescriptor_t p = sum ? virt("P", CUDNN_DATA_BFLOAT16, full) : nullptr;
    if (!p) return false;
    if (!g.Matmul("Q*K^T", q, kt, s0, err) ||
        !g.Pointwise("scale", CUDNN_POINTWISE_MUL, kF, s0, scale, nullptr, s1, err) ||
        !g.Pointwise("row index", CUDNN_POINTWISE_GEN_INDEX, kF, s1, nullptr, nullptr, ri, err, 2) ||
        !g.Pointwise("column index", CUDNN_POINTWISE_GEN_INDEX, kF, s1, nullptr, nullptr, ci, err, 3) ||
        !g.Pointwise("row>=column", CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, ri, ci, nullptr, keep, err) ||
        !g.Pointwise("causal select", CUDNN_POINTWISE_BINARY_SELECT, kF, s1, neg_inf, keep, s2, err) ||
        !g.Reduction("row max", CUDNN_REDUCE_TENSOR_MAX, s2, mx, err) ||
        !g.Pointwise("subtract max", CUDNN_POINTWISE_SUB, kF, s2, mx, nullptr, sub, err) ||
        !g.Pointwise("exp", CUDNN_POINTWISE_EXP, kF, sub, nullptr, nullptr, ex, err) ||
        !g.Reduction("row sum", CUDNN_REDUCE_TENSOR_ADD, ex, sum, err))
      return false;
    if (stats_branch) {
      cudnnBackendDescriptor_t lg = virt("log sum", kF, row);
      cudnnBackendDescriptor_t stats = lg ? virt("stats", kF, row) : nullptr;
      if (!stats || !g.Pointwise("log", CUDNN_POINTWISE_LOG, kF, sum, nullptr, nullptr, lg, err) ||
          !g.Pointwise("stats", CUDNN_POINTWISE_ADD, kF, mx, lg, nullptr, stats, err))
        return false;
    }
    return g.Pointwise("normalise", CUDNN_POINTWISE_DIV, kF, ex, sum, nullptr, p, err) &&
           g.Matmul("P*V", p, v, o, err) && g.Finalize(handle_.get(), err);
  }

  float scale_ = 0.0f;  // by-value scalars: the variant pack points at these
  float neg_inf_ = -std::numeric_limits<float>::infinity();
  cudnn_graph::Handle handle_;
  std::unique_ptr<cudnn_graph::GraphBuilder> graph_;  // kept alive with the plan built from it
  cudnn_graph::TunedPlan plan_;
};

}  // namespace

std::unique_ptr<LibraryReference> MakeCudnnSdpaPrefillBf16() { return std::make_unique<SdpaPrefillBf16>(); }

}  // namespace forgek
