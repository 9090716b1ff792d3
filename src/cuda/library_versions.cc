// Versions of the vendor libraries the worker calls, as loaded at run time.
#include <cublasLt.h>
#include <cudnn.h>

#include "forgek/cuda/library_reference.h"

namespace forgek {

std::vector<LoadedLibrary> LoadedLibraries() {
  return {{"cublas", "cuBLASLt", "libcublasLt", cublasLtGetVersion(), CUBLAS_VER_MAJOR},
          {"cudnn", "cuDNN", "libcudnn", cudnnGetVersion(), CUDNN_MAJOR}};
}

}  // namespace forgek
