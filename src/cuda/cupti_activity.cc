// Kernel activity records through CUPTI: every launch's name, shape, resources and duration.
#include <cupti_activity.h>
#include <cuda_runtime_api.h>
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "cupti_status.h"
#include "forgek/cuda/cupti.h"

namespace forgek {
namespace {

constexpr size_t kActivityBufferBytes = 8u << 20;
constexpr size_t kActivityAlignment = 8;

// CUPTI's buffer callbacks are plain functions, so the records they deliver land here.
struct ActivityState {
  std::mutex mutex;
  bool active = false;
  std::vector<std::pair<uint64_t, KernelLaunchRecord>> completed;  // (start ns, record)
  size_t dropped = 0;
};

ActivityState& State() {
  static ActivityState state;
  return state;
}

std::string Demangle(const char* name) {
  if (!name) return "";
  if (name[0] != '_' || name[1] != 'Z') return name;  // library kernels come unmangled
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string text = status == 0 && out ? out : name;
  std::free(out);
  return text;
}

KernelLaunchRecord ToRecord(const CUpti_ActivityKernel10& k) {
  KernelLaunchRecord r;
  r.name = Demangle(k.name);
  r.grid[0] = k.gridX, r.grid[1] = k.gridY, r.grid[2] = k.gridZ;
  r.block[0] = k.blockX, r.block[1] = k.blockY, r.block[2] = k.blockZ;
  r.cluster[0] = k.clusterX, r.cluster[1] = k.clusterY, r.cluster[2] = k.clusterZ;
  r.registers_per_thread = k.registersPerThread;
  r.static_smem_bytes = k.staticSharedMemory;
  r.dynamic_smem_bytes = k.dynamicSharedMemory;
  r.local_memory_per_thread = k.localMemoryPerThread;
  r.duration_us = k.end > k.start ? double(k.end - k.start) * 1e-3 : 0.0;
  return r;
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kActivityAlignment, kActivityBufferBytes));
  *size = *buffer ? kActivityBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t, size_t valid) {
  ActivityState& state = State();
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    CUpti_Activity* record = nullptr;
    while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
      if (!state.active) continue;
      if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
        const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        state.completed.emplace_back(kernel->start, ToRecord(*kernel));
      }
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS) state.dropped += dropped;
  }
  std::free(buffer);
}

}  // namespace

ActivityCollector::ActivityCollector() = default;

ActivityCollector::~ActivityCollector() { Disable(); }

bool ActivityCollector::Enable(std::string* err) {
  if (enabled_) return true;
  ActivityState& state = State();
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    if (state.active) {
      *err = "another ActivityCollector is recording (CUPTI activity is process-wide)";
      return false;
    }
    state.active = true;
    state.completed.clear();
    state.dropped = 0;
  }
  if (!CuptiOk(cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted), "cuptiActivityRegisterCallbacks",
               err) ||
      !CuptiOk(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable(CONCURRENT_KERNEL)",
               err)) {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.active = false;
    return false;
  }
  enabled_ = true;
  return true;
}

bool ActivityCollector::Take(std::vector<KernelLaunchRecord>* out, std::string* err) {
  if (!enabled_) {
    *err = "ActivityCollector::Take before Enable";
    return false;
  }
  // Records of kernels still running would arrive after the flush.
  const cudaError_t sync = cudaDeviceSynchronize();
  if (sync != cudaSuccess) {
    *err = std::string("cudaDeviceSynchronize before the activity flush: ") + cudaGetErrorName(sync);
    return false;
  }
  if (!CuptiOk(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll", err)) return false;
  ActivityState& state = State();
  std::lock_guard<std::mutex> lock(state.mutex);
  std::stable_sort(state.completed.begin(), state.completed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [start, record] : state.completed) out->push_back(std::move(record));
  state.completed.clear();
  if (state.dropped > 0) {
    *err = std::to_string(state.dropped) + " kernel activity records were dropped (CUPTI buffers full)";
    state.dropped = 0;
    return false;
  }
  return true;
}

void ActivityCollector::Disable() {
  if (!enabled_) return;
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  ActivityState& state = State();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.active = false;
  state.completed.clear();
  enabled_ = false;
}

}  // namespace forgek
