// cuDNN's backend graph API in small RAII pieces, and the plan autotuning the graph references share.
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "library_registry.h"

namespace forgek {

// Adds the ids built on the graph API: cudnn.conv2d_fprop_bf16_graph, cudnn.sdpa_prefill_bf16.
void AddCudnnGraphReferences(LibraryTable* table);

std::unique_ptr<LibraryReference> MakeCudnnConvGraphBf16();
std::unique_ptr<LibraryReference> MakeCudnnSdpaPrefillBf16();

namespace cudnn_graph {

// True on CUDNN_STATUS_SUCCESS; else fills `err` with "<what>: <status> (<cuDNN's last error text>)".
bool Ok(cudnnStatus_t status, const std::string& what, std::string* err);

// One backend descriptor, destroyed with the object.
class Desc {
 public:
  Desc() = default;
  ~Desc();
  Desc(Desc&& other) noexcept : desc_(other.desc_) { other.desc_ = nullptr; }
  Desc& operator=(Desc&& other) noexcept;
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;

  bool Create(cudnnBackendDescriptorType_t type, const std::string& what, std::string* err);
  bool Set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count, const void* values,
           const std::string& what, std::string* err);
  bool SetDesc(cudnnBackendAttributeName_t name, cudnnBackendDescriptor_t value, const std::string& what,
               std::string* err) {
    return Set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &value, what, err);
  }
  bool Finalize(const std::string& what, std::string* err);
  cudnnBackendDescriptor_t get() const { return desc_; }

 private:
  cudnnBackendDescriptor_t desc_ = nullptr;
};

// A cuDNN handle, destroyed with the object.
class Handle {
 public:
  Handle() = default;
  ~Handle();
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  bool Init(std::string* err);
  bool Bind(void* stream, std::string* err);
  cudnnHandle_t get() const { return handle_; }

 private:
  cudnnHandle_t handle_ = nullptr;
};

// A tensor of the graph. Virtual tensors live only inside the fused kernels; by-value tensors are
// host scalars passed at execution.
struct TensorSpec {
  int64_t uid = 0;
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  std::vector<int64_t> dims, strides;
  bool is_virtual = false;
  bool by_value = false;
};

std::vector<int64_t> PackedStrides(const std::vector<int64_t>& dims);  // row-major, innermost last

// An operation graph under construction. It owns every descriptor it creates; errors name the
// reference (`label`), the step and the tensor or operation.
class GraphBuilder {
 public:
  explicit GraphBuilder(std::string label) : label_(std::move(label)) {}

  // The finalized tensor descriptor; nullptr (and `err`) on failure.
  cudnnBackendDescriptor_t Tensor(const std::string& name, const TensorSpec& spec, std::string* err);
  // y = mode(x[, b[, t]]); GEN_INDEX takes an axis.
  bool Pointwise(const std::string& name, cudnnPointwiseMode_t mode, cudnnDataType_t compute,
                 cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t t,
                 cudnnBackendDescriptor_t y, std::string* err, int64_t axis = -1);
  bool Matmul(const std::string& name, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b,
              cudnnBackendDescriptor_t c, std::string* err);
  bool Reduction(const std::string& name, cudnnReduceTensorOp_t op, cudnnBackendDescriptor_t x,
                 cudnnBackendDescriptor_t y, std::string* err);
  // Cross-correlation, stride 1, dilation 1, fp32 accumulation, zero padding `pads` on each side.
  bool ConvFprop(const std::string& name, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t w,
                 cudnnBackendDescriptor_t y, const std::vector<int64_t>& pads, std::string* err);
  bool Finalize(cudnnHandle_t handle, std::string* err);
  cudnnBackendDescriptor_t graph() const { return graph_.get(); }

 private:
  Desc* New(cudnnBackendDescriptorType_t type, const std::string& what, std::string* err);
  bool AddOperation(Desc* op, const std::string& what, std::string* err);

  std::string label_;
  std::vector<std::unique_ptr<Desc>> owned_;
  std::vector<cudnnBackendDescriptor_t> ops_;
  Desc graph_;
};

struct TuneOptions {
  int max_timed = 8;                        // engine configs timed (the first that finalize)
  size_t max_workspace = size_t(1) << 30;   // configs that want more are skipped
  int timed_runs = 5;                       // per config, after one warm-up; the median counts
};

// An execution plan chosen the way PyTorch's cudnn.benchmark does: engine configs from the mode-A
// heuristics, then the fallback list, the first `max_timed` that finalize each run and timed, the
// fastest kept. The workspace is allocated once, for the largest of the timed configs.
class TunedPlan {
 public:
  // `uids` / `pointers`: every non-virtual tensor (by-value ones point at host scalars that outlive
  // the plan). `key` identifies graph and shapes: a later Tune with the same key in this process
  // finalizes only the config that won before (the worker prepares one instance per input copy).
  bool Tune(const std::string& label, const std::string& key, cudnnHandle_t handle, cudnnBackendDescriptor_t graph,
            const std::vector<int64_t>& uids, const std::vector<void*>& pointers, const TuneOptions& options,
            std::string* err);
  // Runs the chosen plan on the handle's stream: no allocation, no synchronisation.
  bool Execute(cudnnHandle_t handle, std::string* err) const;
  const std::string& choice() const { return choice_; }  // e.g. "eng12_k2=3 (141.2 us; 8 timed)"

 private:
  bool BindWorkspace(size_t bytes, const std::vector<int64_t>& uids, const std::vector<void*>& pointers,
                     const std::string& label, std::string* err);

  std::unique_ptr<Desc> plan_;
  Desc variant_pack_;
  DeviceBuffer workspace_;
  std::string choice_;
};

}  // namespace cudnn_graph
}  // namespace forgek
