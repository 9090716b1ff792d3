// cuBLAS references: bf16 GEMM, strided-batched GEMM, grouped GEMM and GEMV, all row-major.
//
// cuBLAS is column-major. A row-major C[M,N] = A[M,K]·B[K,N] is the column-major product
// C^T[N,M] = B^T[N,K]·A^T[K,M], and a row-major matrix read column-major is its transpose, so
// every call below passes B first, A second, with m = N and n = M, and no transposition.
#include <cublas_v2.h>

#include <numeric>
#include <vector>

#include "library_registry.h"
#include "library_tensors.h"

namespace forgek {
namespace {

constexpr size_t kCublasWorkspaceBytes = 32u << 20;

bool CublasOk(cublasStatus_t status, const char* what, std::string* err) {
  if (status == CUBLAS_STATUS_SUCCESS) return true;
  if (err) *err = std::string(what) + ": " + cublasGetStatusName(status) + ": " + cublasGetStatusString(status);
  return false;
}

// A handle with its own 32 MiB workspace, bound to the launch stream on every call.
class CublasSession {
 public:
  ~CublasSession() {
    if (handle_) cublasDestroy(handle_);
  }
  bool Init(std::string* err) {
    if (!handle_ && !CublasOk(cublasCreate(&handle_), "cublasCreate", err)) return false;
    return workspace_.Reserve(kCublasWorkspaceBytes, err);
  }
  // cublasSetStream resets the workspace to cuBLAS's pool, so the workspace is set after it.
  bool Bind(void* stream, std::string* err) {
    return CublasOk(cublasSetStream(handle_, static_cast<cudaStream_t>(stream)), "cublasSetStream", err) &&
           CublasOk(cublasSetWorkspace(handle_, workspace_.get(), workspace_.size()), "cublasSetWorkspace", err);
  }
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
  DeviceBuffer workspace_;
};

// cublas.gemm_bf16: C[M,N] = A[M,K]·B[K,N], bf16 in and out, fp32 accumulation.
class GemmBf16 : public LibraryReference {
 public:
  bool Prepare(const Bindings&, const TensorMap& tensors, const std::map<std::string, double>&,
               std::string* err) override {
    TensorRequirements req("cublas.gemm_bf16", tensors);
    const DeviceTensor* a = req.Get("A", {DType::bf16}, 2, err);
    const DeviceTensor* b = a ? req.Get("B", {DType::bf16}, 2, err) : nullptr;
    const DeviceTensor* c = b ? req.Get("C", {DType::bf16}, 2, err) : nullptr;
    if (!c) return false;
    m_ = a->shape[0], k_ = a->shape[1], n_ = b->shape[1];
    if (!req.Dims("B", *b, {k_, n_}, err) || !req.Dims("C", *c, {m_, n_}, err)) return false;
    if (!req.FitsInt("M", m_, err) || !req.FitsInt("N", n_, err) || !req.FitsInt("K", k_, err)) return false;
    a_ = a->ptr, b_ = b->ptr, c_ = c->ptr;
    return session_.Init(err);
  }
  bool Launch(void* stream, std::string* err) override {
    const float alpha = 1.0f, beta = 0.0f;
    return session_.Bind(stream, err) &&
           CublasOk(cublasGemmEx(session_.get(), CUBLAS_OP_N, CUBLAS_OP_N, int(n_), int(m_), int(k_), &alpha, b_,
                                 CUDA_R_16BF, int(n_), a_, CUDA_R_16BF, int(k_), &beta, c_, CUDA_R_16BF, int(n_),
                                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                    "cublasGemmEx", err);
  }

 private:
  CublasSession session_;
  int64_t m_ = 0, n_ = 0, k_ = 0;
  const void *a_ = nullptr, *b_ = nullptr;
  void* c_ = nullptr;
};

// cublas.batched_gemm_bf16: C[b] = A[b]·B[b] for every b of A[Bt,M,K], B[Bt,K,N], C[Bt,M,N].
class BatchedGemmBf16 : public LibraryReference {
 public:
  bool Prepare(const Bindings&, const TensorMap& tensors, const std::map<std::string, double>&,
               std::string* err) override {
    TensorRequirements req("cublas.batched_gemm_bf16", tensors);
    const DeviceTensor* a = req.Get("A", {DType::bf16}, 3, err);
    const DeviceTensor* b = a ? req.Get("B", {DType::bf16}, 3, err) : nullptr;
    const DeviceTensor* c = b ? req.Get("C", {DType::bf16}, 3, err) : nullptr;
    if (!c) return false;
    batch_ = a->shape[0], m_ = a->shape[1], k_ = a->shape[2], n_ = b->shape[2];
    if (!req.Dims("B", *b, {batch_, k_, n_}, err) || !req.Dims("C", *c, {batch_, m_, n_}, err)) return false;
    if (!req.FitsInt("batch", batch_, err) || !req.FitsInt("M", m_, err) || !req.FitsInt("N", n_, err) ||
        !req.FitsInt("K", k_, err))
      return false;
    a_ = a->ptr, b_ = b->ptr, c_ = c->ptr;
    return session_.Init(err);
  }
  bool Launch(void* stream, std::string* err) override {
    const float alpha = 1.0f, beta = 0.0f;
    return session_.Bind(stream, err) &&
           CublasOk(cublasGemmStridedBatchedEx(session_.get(), CUBLAS_OP_N, CUBLAS_OP_N, int(n_), int(m_), int(k_),
                                               &alpha, b_, CUDA_R_16BF, int(n_), k_ * n_, a_, CUDA_R_16BF, int(k_),
                                               m_ * k_, &beta, c_, CUDA_R_16BF, int(n_), m_ * n_, int(batch_),
                                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                    "cublasGemmStridedBatchedEx", err);
  }

 private:
  CublasSession session_;
  int64_t batch_ = 0, m_ = 0, n_ = 0, k_ = 0;
  const void *a_ = nullptr, *b_ = nullptr;
  void* c_ = nullptr;
};

// cublas.grouped_gemm_bf16 (MoE experts): rows of A[T,K] are sorted by group; group e owns the
// next group_sizes[e] rows and multiplies them by B[e] (B[E,K,N]) into the same rows of C[T,N].
// One cublasGemmEx per non-empty group, as PyTorch and vLLM's fallback do: on H200 this took
// 2.78 ms for 8 experts of 4096x14336, where cublasGemmGroupedBatchedEx took 7.06 ms.
class GroupedGemmBf16 : public LibraryReference {
 public:
  bool Prepare(const Bindings&, const TensorMap& tensors, const std::map<std::string, double>&,
               std::string* err) override {
    TensorRequirements req("cublas.grouped_gemm_bf16", tensors);
    const DeviceTensor* a = req.Get("A", {DType::bf16}, 2, err);
    const DeviceTensor* b = a ? req.Get("B", {DType::bf16}, 3, err) : nullptr;
    const DeviceTensor* c = b ? req.Get("C", {DType::bf16}, 2, err) : nullptr;
    const DeviceTensor* sizes = c ? req.Get("group_sizes", {DType::i32}, 1, err) : nullptr;
    if (!sizes) return false;
    const int64_t tokens = a->shape[0], experts = b->shape[0];
    k_ = a->shape[1], n_ = b->shape[2];
    if (!req.Dims("B", *b, {experts, k_, n_}, err) || !req.Dims("C", *c, {tokens, n_}, err) ||
        !req.Dims("group_sizes", *sizes, {experts}, err))
      return false;
    if (!req.FitsInt("N", n_, err) || !req.FitsInt("K", k_, err) || !req.FitsInt("T", tokens, err)) return false;
    id_ = req.id(), tokens_ = tokens, experts_ = experts;
    a_ = a->ptr, b_ = b->ptr, c_ = c->ptr, sizes_ = sizes->ptr;
    planned_ = false;
    return session_.Init(err);
  }

  // A new seed brings new group sizes: the groups are planned again before the next launch.
  bool InputsChanged(std::string*) override {
    planned_ = false;
    return true;
  }

  // Plans at the first launch after the inputs were (re)filled: that launch checks correctness or
  // warms up, it is never timed or captured into a graph, and the sizes are on the device by then.
  bool Launch(void* stream, std::string* err) override {
    if (!planned_ && !Plan(err)) return false;
    planned_ = true;
    if (!session_.Bind(stream, err)) return false;
    const float alpha = 1.0f, beta = 0.0f;
    for (const Group& grp : groups_) {
      if (!CublasOk(cublasGemmEx(session_.get(), CUBLAS_OP_N, CUBLAS_OP_N, int(n_), grp.rows, int(k_), &alpha,
                                 grp.weight, CUDA_R_16BF, int(n_), grp.activation, CUDA_R_16BF, int(k_), &beta,
                                 grp.output, CUDA_R_16BF, int(n_), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                    "cublasGemmEx (group)", err))
        return false;
    }
    return true;
  }

 private:
  // Reads the group sizes (they live on the device) and builds one GEMM per non-empty group.
  bool Plan(std::string* err) {
    std::vector<int32_t> host_sizes(experts_);
    // The worker's stream does not synchronise with the default stream: let its work land first.
    if (!CudaOk(cudaDeviceSynchronize(), "waiting for the inputs", err) ||
        !CudaOk(cudaMemcpy(host_sizes.data(), sizes_, experts_ * sizeof(int32_t), cudaMemcpyDeviceToHost),
                "copying group_sizes to the host", err))
      return false;
    auto listed = [&] {
      std::string out;
      for (int64_t e = 0; e < experts_; ++e) out += (e ? ", " : "") + std::to_string(host_sizes[e]);
      return " (group_sizes: " + out + ")";
    };
    int64_t total = 0;
    for (int64_t e = 0; e < experts_; ++e) {
      if (host_sizes[e] < 0) {
        *err = id_ + ": group_sizes[" + std::to_string(e) + "] = " + std::to_string(host_sizes[e]) + " is negative" +
               listed();
        return false;
      }
      total += host_sizes[e];
    }
    if (total != tokens_) {
      *err = id_ + ": group_sizes sum to " + std::to_string(total) + " but A has " + std::to_string(tokens_) +
             " rows" + listed();
      return false;
    }
    const auto* a_base = static_cast<const char*>(a_);
    const auto* b_base = static_cast<const char*>(b_);
    auto* c_base = static_cast<char*>(c_);
    groups_.clear();
    int64_t row = 0;
    for (int64_t e = 0; e < experts_; ++e) {
      if (host_sizes[e] > 0)  // cuBLAS rejects empty problems
        groups_.push_back({int(host_sizes[e]), b_base + e * k_ * n_ * 2, a_base + row * k_ * 2, c_base + row * n_ * 2});
      row += host_sizes[e];
    }
    return true;
  }

  struct Group {
    int rows;
    const void* weight;
    const void* activation;
    void* output;
  };
  CublasSession session_;
  std::string id_;
  int64_t tokens_ = 0, experts_ = 0, n_ = 0, k_ = 0;
  const void *a_ = nullptr, *b_ = nullptr, *sizes_ = nullptr;
  void* c_ = nullptr;
  bool planned_ = false;
  std::vector<Group> groups_;
};

// cublas.gemv_bf16: y[N] = x[K]·W[K,N] (x and y may also be [1,K] and [1,N]).
class GemvBf16 : public LibraryReference {
 public:
  bool Prepare(const Bindings&, const TensorMap& tensors, const std::map<std::string, double>&,
               std::string* err) override {
    TensorRequirements req("cublas.gemv_bf16", tensors);
    const DeviceTensor* w = req.Get("W", {DType::bf16}, 2, err);
    if (!w) return false;
    k_ = w->shape[0], n_ = w->shape[1];
    const DeviceTensor* x = VectorOf(req, "x", k_, err);
    const DeviceTensor* y = x ? VectorOf(req, "y", n_, err) : nullptr;
    if (!y) return false;
    if (!req.FitsInt("N", n_, err) || !req.FitsInt("K", k_, err)) return false;
    x_ = x->ptr, w_ = w->ptr, y_ = y->ptr;
    return session_.Init(err);
  }
  bool Launch(void* stream, std::string* err) override {
    const float alpha = 1.0f, beta = 0.0f;
    // Column-major y^T[N,1] = W^T[N,K]·x^T[K,1]: cuBLAS picks its GEMV kernels for n = 1.
    return session_.Bind(stream, err) &&
           CublasOk(cublasGemmEx(session_.get(), CUBLAS_OP_N, CUBLAS_OP_N, int(n_), 1, int(k_), &alpha, w_,
                                 CUDA_R_16BF, int(n_), x_, CUDA_R_16BF, int(k_), &beta, y_, CUDA_R_16BF, int(n_),
                                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                    "cublasGemmEx (gemv)", err);
  }

 private:
  // A bf16 vector of `len` elements, given as [len] or [1, len].
  static const DeviceTensor* VectorOf(const TensorRequirements& req, const std::string& name, int64_t len,
                                      std::string* err) {
    std::string rank1_err;
    if (const DeviceTensor* t = req.Get(name, {DType::bf16}, 1, &rank1_err))
      return req.Dims(name, *t, {len}, err) ? t : nullptr;
    const DeviceTensor* t = req.Get(name, {DType::bf16}, 2, err);
    if (!t) {
      if (err && err->find("dimensions") != std::string::npos)
        *err = req.id() + ": tensor '" + name + "' must be [" + std::to_string(len) + "] or [1, " +
               std::to_string(len) + "]";
      return nullptr;
    }
    return req.Dims(name, *t, {1, len}, err) ? t : nullptr;
  }

  CublasSession session_;
  int64_t n_ = 0, k_ = 0;
  const void *x_ = nullptr, *w_ = nullptr;
  void* y_ = nullptr;
};

template <typename T>
std::unique_ptr<LibraryReference> Make() {
  return std::make_unique<T>();
}

}  // namespace

void AddCublasReferences(LibraryTable* table) {
  (*table)["cublas.gemm_bf16"] = &Make<GemmBf16>;
  (*table)["cublas.batched_gemm_bf16"] = &Make<BatchedGemmBf16>;
  (*table)["cublas.grouped_gemm_bf16"] = &Make<GroupedGemmBf16>;
  (*table)["cublas.gemv_bf16"] = &Make<GemvBf16>;
}

}  // namespace forgek
