// The registry of library references: ids to factories, and their shared CUDA plumbing.
#include "library_registry.h"

#include <algorithm>
#include <vector>

#include "library_cudnn_graph.h"

namespace forgek {
namespace {

const LibraryTable& Table() {
  static const LibraryTable table = [] {
    LibraryTable t;
    AddCublasReferences(&t);
    AddCublasLtReferences(&t);
    AddCudnnReferences(&t);
    AddCudnnGraphReferences(&t);
    AddCubReferences(&t);
    return t;
  }();
  return table;
}

}  // namespace

std::vector<std::string> LibraryReferenceIds() {
  std::vector<std::string> ids;
  for (const auto& [id, factory] : Table()) ids.push_back(id);
  return ids;  // sorted: the table is a map
}

bool HasLibraryReference(const std::string& id) { return Table().count(id) != 0; }

std::unique_ptr<LibraryReference> MakeLibraryReference(const std::string& id, std::string* err) {
  auto it = Table().find(id);
  if (it == Table().end()) {
    std::string known;
    for (const auto& [name, factory] : Table()) known += (known.empty() ? "" : ", ") + name;
    if (err) *err = "unknown library reference '" + id + "' (this build provides: " + known + ")";
    return nullptr;
  }
  return it->second();
}

bool CudaOk(cudaError_t status, const char* what, std::string* err) {
  if (status == cudaSuccess) return true;
  if (err) *err = std::string(what) + ": " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status);
  return false;
}

bool MedianEventTimeUs(cudaStream_t stream, int warmup, int runs, const std::function<bool()>& body, double* us,
                       std::string* err) {
  struct Events {
    cudaEvent_t start = nullptr, stop = nullptr;
    ~Events() {
      if (start) cudaEventDestroy(start);
      if (stop) cudaEventDestroy(stop);
    }
  } ev;
  if (!CudaOk(cudaEventCreate(&ev.start), "cudaEventCreate", err) ||
      !CudaOk(cudaEventCreate(&ev.stop), "cudaEventCreate", err))
    return false;
  for (int i = 0; i < warmup; ++i)
    if (!body()) return false;
  if (warmup > 0 && !CudaOk(cudaStreamSynchronize(stream), "warm-up", err)) return false;
  std::vector<double> times;
  for (int r = 0; r < std::max(runs, 1); ++r) {
    float ms = 0;
    if (!CudaOk(cudaEventRecord(ev.start, stream), "cudaEventRecord", err) || !body() ||
        !CudaOk(cudaEventRecord(ev.stop, stream), "cudaEventRecord", err) ||
        !CudaOk(cudaEventSynchronize(ev.stop), "timed run", err) ||
        !CudaOk(cudaEventElapsedTime(&ms, ev.start, ev.stop), "cudaEventElapsedTime", err))
      return false;
    times.push_back(ms * 1000.0);
  }
  std::sort(times.begin(), times.end());
  *us = times[times.size() / 2];
  return true;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}

bool DeviceBuffer::Reserve(size_t bytes, std::string* err) {
  if (bytes <= bytes_ && ptr_) return true;
  if (ptr_) cudaFree(ptr_);
  ptr_ = nullptr;
  bytes_ = 0;
  if (!CudaOk(cudaMalloc(&ptr_, bytes ? bytes : 1), "cudaMalloc", err)) {
    ptr_ = nullptr;
    return false;
  }
  bytes_ = bytes;
  return true;
}

}  // namespace forgek
