// cuBLASLt references: fp8 e4m3 GEMM with per-tensor scales, and bf16 GEMM with a GELU+bias epilogue.
//
// Both are row-major and are computed as the column-major transpose (see library_cublas.cc):
// D^T[N,M] = op(first)·op(second) with the operator's B first and A second.
#include <cublasLt.h>

#include "library_registry.h"
#include "library_tensors.h"

namespace forgek {
namespace {

constexpr size_t kLtWorkspaceBytes = 32u << 20;

bool LtOk(cublasStatus_t status, const char* what, std::string* err) {
  if (status == CUBLAS_STATUS_SUCCESS) return true;
  if (err) *err = std::string(what) + ": " + cublasGetStatusName(status) + ": " + cublasGetStatusString(status);
  return false;
}

// One planned cublasLtMatmul: descriptors, the heuristic's best algorithm and a workspace.
class LtMatmulPlan {
 public:
  ~LtMatmulPlan() {
    for (cublasLtMatrixLayout_t l : {a_, b_, d_})
      if (l) cublasLtMatrixLayoutDestroy(l);
    if (desc_) cublasLtMatmulDescDestroy(desc_);
    if (handle_) cublasLtDestroy(handle_);
  }

  // Column-major shapes as cuBLASLt sees them: first is rows x cols with leading dimension ld.
  struct Operand {
    cudaDataType_t type;
    uint64_t rows, cols;
    int64_t ld;
    const void* ptr;
  };

  bool Init(cublasOperation_t trans_first, std::string* err) {
    const cublasOperation_t no_trans = CUBLAS_OP_N;
    return LtOk(cublasLtCreate(&handle_), "cublasLtCreate", err) &&
           LtOk(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate", err) &&
           SetAttribute(CUBLASLT_MATMUL_DESC_TRANSA, trans_first, err) &&
           SetAttribute(CUBLASLT_MATMUL_DESC_TRANSB, no_trans, err);
  }

  template <typename T>
  bool SetAttribute(cublasLtMatmulDescAttributes_t attr, const T& value, std::string* err) {
    return LtOk(cublasLtMatmulDescSetAttribute(desc_, attr, &value, sizeof value), "cublasLtMatmulDescSetAttribute",
                err);
  }

  // Builds the layouts, asks the heuristic for the best algorithm that fits the workspace.
  bool Plan(const std::string& id, const Operand& first, const Operand& second, const Operand& out,
            std::string* err) {
    first_ = first.ptr, second_ = second.ptr, out_ = const_cast<void*>(out.ptr);
    if (!LtOk(cublasLtMatrixLayoutCreate(&a_, first.type, first.rows, first.cols, first.ld), "layout A", err) ||
        !LtOk(cublasLtMatrixLayoutCreate(&b_, second.type, second.rows, second.cols, second.ld), "layout B", err) ||
        !LtOk(cublasLtMatrixLayoutCreate(&d_, out.type, out.rows, out.cols, out.ld), "layout D", err))
      return false;
    cublasLtMatmulPreference_t pref = nullptr;
    if (!LtOk(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate", err)) return false;
    const size_t ws = kLtWorkspaceBytes;
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    bool ok = LtOk(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                                        sizeof ws),
                   "cublasLtMatmulPreferenceSetAttribute", err) &&
              LtOk(cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_, b_, d_, d_, pref, 1, &result, &found),
                   "cublasLtMatmulAlgoGetHeuristic", err);
    cublasLtMatmulPreferenceDestroy(pref);
    if (!ok) return false;
    if (found == 0) {
      *err = id + ": cuBLASLt has no algorithm for these shapes and layouts";
      return false;
    }
    algo_ = result.algo;
    return workspace_.Reserve(result.workspaceSize, err);
  }

  bool Run(void* stream, std::string* err) {
    const float alpha = 1.0f, beta = 0.0f;
    return LtOk(cublasLtMatmul(handle_, desc_, &alpha, first_, a_, second_, b_, &beta, out_, d_, out_, d_, &algo_,
                               workspace_.get(), workspace_.size(), static_cast<cudaStream_t>(stream)),
                "cublasLtMatmul", err);
  }

 private:
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  DeviceBuffer workspace_;
  const void *first_ = nullptr, *second_ = nullptr;
  void* out_ = nullptr;
};

// cublaslt.gemm_fp8_e4m3: C[M,N] = scale_a·scale_b·(A[M,K]·B[N,K]^T), bf16 out, fp32 accumulation.
// B is given as [N,K] (each row one output column, the nn.Linear weight layout) because
// cuBLASLt's fp8 kernels take only the "TN" layout.
class GemmFp8E4m3 : public LibraryReference {
 public:
  bool Prepare(const Bindings&, const TensorMap& tensors, const std::map<std::string, double>&,
               std::string* err) override {
    TensorRequirements req("cublaslt.gemm_fp8_e4m3", tensors);
    const DeviceTensor* a = req.Get("A", {DType::e4m3}, 2, err);
    const DeviceTensor* b = a ? req.Get("B", {DType::e4m3}, 2, err) : nullptr;
    const DeviceTensor* c = b ? req.Get("C", {DType::bf16}, 2, err) : nullptr;
    const DeviceTensor* scale_a = c ? req.GetScalar("scale_a", DType::f32, err) : nullptr;
    const DeviceTensor* scale_b = scale_a ? req.GetScalar("scale_b", DType::f32, err) : nullptr;
    if (!scale_b) return false;
    const int64_t m = a->shape[0], k = a->shape[1], n = b->shape[0];
    if (!req.Dims("B", *b, {n, k}, err) || !req.Dims("C", *c, {m, n}, err)) return false;
    if (k % 16 != 0) {
      *err = req.id() + ": K = " + std::to_string(k) + " must be a multiple of 16 for fp8 cuBLASLt";
      return false;
    }
    const cublasOperation_t trans = CUBLAS_OP_T;
    // The first operand is B (so its scale is scale_b), the second A.
    return plan_.Init(trans, err) &&
           plan_.SetAttribute(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, scale_b->ptr, err) &&
           plan_.SetAttribute(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, scale_a->ptr, err) &&
           plan_.Plan(req.id(), {CUDA_R_8F_E4M3, uint64_t(k), uint64_t(n), k, b->ptr},
                      {CUDA_R_8F_E4M3, uint64_t(k), uint64_t(m), k, a->ptr},
                      {CUDA_R_16BF, uint64_t(n), uint64_t(m), n, c->ptr}, err);
  }
  bool Launch(void* stream, std::string* err) override { return plan_.Run(stream, err); }

 private:
  LtMatmulPlan plan_;
};

// cublaslt.gemm_bias_gelu_bf16: C[M,N] = gelu(A[M,K]·B[K,N] + bias[N]), bf16 in and out, with
// cuBLASLt's GELU (tanh approximation) applied in the epilogue.
class GemmBiasGeluBf16 : public LibraryReference {
 public:
  bool Prepare(const Bindings&, const TensorMap& tensors, const std::map<std::string, double>&,
               std::string* err) override {
    TensorRequirements req("cublaslt.gemm_bias_gelu_bf16", tensors);
    const DeviceTensor* a = req.Get("A", {DType::bf16}, 2, err);
    const DeviceTensor* b = a ? req.Get("B", {DType::bf16}, 2, err) : nullptr;
    const DeviceTensor* bias = b ? req.Get("bias", {DType::bf16}, 1, err) : nullptr;
    const DeviceTensor* c = bias ? req.Get("C", {DType::bf16}, 2, err) : nullptr;
    if (!c) return false;
    const int64_t m = a->shape[0], k = a->shape[1], n = b->shape[1];
    if (!req.Dims("B", *b, {k, n}, err) || !req.Dims("bias", *bias, {n}, err) || !req.Dims("C", *c, {m, n}, err))
      return false;
    const cublasOperation_t no_trans = CUBLAS_OP_N;
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_GELU_BIAS;
    const cudaDataType_t bias_type = CUDA_R_16BF;
    // Column-major D^T[N,M]: the bias runs along D^T's rows, which are the operator's N columns.
    return plan_.Init(no_trans, err) && plan_.SetAttribute(CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue, err) &&
           plan_.SetAttribute(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias->ptr, err) &&
           plan_.SetAttribute(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, bias_type, err) &&
           plan_.Plan(req.id(), {CUDA_R_16BF, uint64_t(n), uint64_t(k), n, b->ptr},
                      {CUDA_R_16BF, uint64_t(k), uint64_t(m), k, a->ptr},
                      {CUDA_R_16BF, uint64_t(n), uint64_t(m), n, c->ptr}, err);
  }
  bool Launch(void* stream, std::string* err) override { return plan_.Run(stream, err); }

 private:
  LtMatmulPlan plan_;
};

template <typename T>
std::unique_ptr<LibraryReference> Make() {
  return std::make_unique<T>();
}

}  // namespace

void AddCublasLtReferences(LibraryTable* table) {
  (*table)["cublaslt.gemm_fp8_e4m3"] = &Make<GemmFp8E4m3>;
  (*table)["cublaslt.gemm_bias_gelu_bf16"] = &Make<GemmBiasGeluBf16>;
}

}  // namespace forgek
