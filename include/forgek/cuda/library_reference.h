// Expert references that are library calls (cuBLAS, cuBLASLt, cuDNN, CUB), named from operator.json.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "forgek/core/expr.h"
#include "forgek/core/operator_spec.h"

namespace forgek {

// A tensor the worker allocated for one config.
struct DeviceTensor {
  void* ptr = nullptr;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;  // outermost first
};

// One library call bound to one config's tensors. Lives in the worker (it holds a CUDA context).
class LibraryReference {
 public:
  virtual ~LibraryReference() = default;
  // Plans the call: handles, descriptors, algorithm choice, workspace. Called once per config,
  // outside timing. `scalars` holds the operator's scalar values by name.
  virtual bool Prepare(const Bindings& config, const std::map<std::string, DeviceTensor>& tensors,
                       const std::map<std::string, double>& scalars, std::string* err) = 0;
  // Enqueues the call on `stream` (a cudaStream_t / CUstream). No allocation, no sync.
  virtual bool Launch(void* stream, std::string* err) = 0;
  // The inputs were refilled (a new seed), outside timing. A call that plans from input values,
  // not only shapes (grouped GEMM reads its group sizes), plans again; the others need nothing.
  virtual bool InputsChanged(std::string*) { return true; }
};

// A vendor library as the loader found it, against the major version this build was compiled for.
struct LoadedLibrary {
  std::string check;        // short name for reports: "cublas", "cudnn"
  std::string name;         // "cuBLASLt", "cuDNN"
  std::string file;         // "libcublasLt", "libcudnn"
  size_t loaded_version = 0;  // e.g. 130100
  int built_major = 0;
};
// cuBLASLt and cuDNN versions (their version calls need no GPU).
std::vector<LoadedLibrary> LoadedLibraries();

// The ids this build provides ("cublas.gemm_bf16", "cub.scan_inclusive_f32", ...).
std::vector<std::string> LibraryReferenceIds();
bool HasLibraryReference(const std::string& id);
std::unique_ptr<LibraryReference> MakeLibraryReference(const std::string& id, std::string* err);

}  // namespace forgek
