// The table of library references and the CUDA plumbing their implementations share.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "forgek/cuda/library_reference.h"

namespace forgek {

using LibraryFactory = std::unique_ptr<LibraryReference> (*)();
using LibraryTable = std::map<std::string, LibraryFactory>;

// One function per library file adds that library's ids (explicit calls, not static
// initialisers: a static library drops objects nothing refers to).
void AddCublasReferences(LibraryTable* table);
void AddCublasLtReferences(LibraryTable* table);
void AddCudnnReferences(LibraryTable* table);
void AddCubReferences(LibraryTable* table);

// True on cudaSuccess; else fills `err` with "<what>: <cuda error name>: <description>".
bool CudaOk(cudaError_t status, const char* what, std::string* err);

// Median microseconds of `runs` (at least 1) executions of `body` on `stream`, timed with CUDA
// events, after `warmup` untimed ones. `body` enqueues one execution and reports its own failure
// (into the caller's error string); false on a failure of `body` or of CUDA (then in `err`).
bool MedianEventTimeUs(cudaStream_t stream, int warmup, int runs, const std::function<bool()>& body, double* us,
                       std::string* err);

// Device memory owned by a reference (workspaces, pointer arrays), freed with it.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Makes the buffer at least `bytes` long (contents are not kept).
  bool Reserve(size_t bytes, std::string* err);
  void* get() const { return ptr_; }
  size_t size() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace forgek
