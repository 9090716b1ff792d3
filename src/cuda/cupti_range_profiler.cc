// Hardware metrics with the CUPTI 13 Range Profiler API: per kernel (auto range, kernel replay)
// or over the whole work (user range, user replay).
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cstdint>
#include <mutex>

#include "cupti_status.h"
#include "forgek/cuda/cupti.h"

namespace forgek {
namespace {

// More passes than any sane metric set needs: a guard against a loop that never ends.
constexpr size_t kMaxPasses = 256;
// Kernels one per_kernel profile can hold; more are reported as an error, not dropped silently.
constexpr size_t kMaxKernelRanges = 256;
constexpr const char* kRangeName = "forgek";

bool RuntimeOk(cudaError_t status, const char* what, std::string* err) {
  if (status == cudaSuccess) return true;
  *err = std::string(what) + ": " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status);
  return false;
}

// cuptiProfilerInitialize once per process.
bool InitializeProfilerOnce(std::string* err) {
  static std::once_flag once;
  static CUptiResult status = CUPTI_SUCCESS;
  std::call_once(once, [] {
    CUpti_Profiler_Initialize_Params p = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    status = cuptiProfilerInitialize(&p);
  });
  return CuptiOk(status, "cuptiProfilerInitialize", err);
}

// The context the runtime made current. The worker shares the primary context between the
// runtime and the driver API; the driver entry point comes through cudart, so nothing here
// links libcuda.
bool CurrentContext(CUcontext* ctx, std::string* err) {
  if (!RuntimeOk(cudaFree(nullptr), "creating the CUDA context", err)) return false;
  using GetCurrent = CUresult (*)(CUcontext*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (!RuntimeOk(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &found),
                 "cudaGetDriverEntryPointByVersion(cuCtxGetCurrent)", err))
    return false;
  if (!fn || found != cudaDriverEntryPointSuccess) {
    *err = "the driver has no cuCtxGetCurrent";
    return false;
  }
  if (reinterpret_cast<GetCurrent>(fn)(ctx) != CUDA_SUCCESS || !*ctx) {
    *err = "no current CUDA context";
    return false;
  }
  return true;
}

}  // namespace

struct RangeProfiler::State {
  std::vector<std::string> metrics;
  std::vector<const char*> metric_names;  // points into `metrics`
  ProfileRange mode = ProfileRange::per_kernel;
  CUcontext ctx = nullptr;
  // The host object keeps pointing at this image: it lives as long as the host object.
  std::vector<uint8_t> availability;
  CUpti_Profiler_Host_Object* host = nullptr;
  CUpti_RangeProfiler_Object* range = nullptr;
  std::vector<uint8_t> config_image;
  std::vector<uint8_t> counter_data;
  size_t passes = 0;
  bool profiled = false;  // a profile has run on this object

  ~State() {
    Disable();
    if (host) {
      CUpti_Profiler_Host_Deinitialize_Params p = {CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
      p.pHostObject = host;
      cuptiProfilerHostDeinitialize(&p);
    }
  }

  bool InitHost(std::string* err) {
    int device = 0;
    if (!RuntimeOk(cudaGetDevice(&device), "cudaGetDevice", err)) return false;
    CUpti_Device_GetChipName_Params chip = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    chip.deviceIndex = size_t(device);
    if (!CuptiOk(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName", err)) return false;

    // Counter availability must be read before the range profiler is enabled on the context.
    CUpti_Profiler_GetCounterAvailability_Params avail = {CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
    avail.ctx = ctx;
    if (!CuptiOk(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability (size)", err))
      return false;
    availability.assign(avail.counterAvailabilityImageSize, 0);
    avail.pCounterAvailabilityImage = availability.data();
    if (!CuptiOk(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability", err))
      return false;

    CUpti_Profiler_Host_Initialize_Params init = {CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    init.pChipName = chip.pChipName;
    init.pCounterAvailabilityImage = availability.data();
    if (!CuptiOk(cuptiProfilerHostInitialize(&init), "cuptiProfilerHostInitialize", err)) return false;
    host = init.pHostObject;
    return true;
  }

  // Names each metric the chip does not know, rather than CUPTI's bare "invalid metric".
  std::string UnknownMetrics() const {
    std::string unknown;
    for (const char* name : metric_names) {
      CUpti_Profiler_Host_GetMetricProperties_Params p = {CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
      p.pHostObject = host;
      p.pMetricName = name;
      if (cuptiProfilerHostGetMetricProperties(&p) != CUPTI_SUCCESS) unknown += (unknown.empty() ? "" : ", ") + std::string(name);
    }
    return unknown;
  }

  bool BuildConfig(std::string* err) {
    CUpti_Profiler_Host_ConfigAddMetrics_Params add = {CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    add.pHostObject = host;
    add.ppMetricNames = metric_names.data();
    add.numMetrics = metric_names.size();
    if (cuptiProfilerHostConfigAddMetrics(&add) != CUPTI_SUCCESS) {
      const std::string unknown = UnknownMetrics();
      if (!unknown.empty()) {
        *err = "metrics not available on this GPU: " + unknown;
        return false;
      }
      return CuptiOk(cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics", err);
    }
    CUpti_Profiler_Host_GetConfigImageSize_Params size = {CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    size.pHostObject = host;
    if (!CuptiOk(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize", err)) return false;
    config_image.resize(size.configImageSize);
    CUpti_Profiler_Host_GetConfigImage_Params image = {CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    image.pHostObject = host;
    image.configImageSize = config_image.size();
    image.pConfigImage = config_image.data();
    if (!CuptiOk(cuptiProfilerHostGetConfigImage(&image), "cuptiProfilerHostGetConfigImage", err)) return false;
    CUpti_Profiler_Host_GetNumOfPasses_Params num = {CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    num.configImageSize = config_image.size();
    num.pConfigImage = config_image.data();
    if (!CuptiOk(cuptiProfilerHostGetNumOfPasses(&num), "cuptiProfilerHostGetNumOfPasses", err)) return false;
    passes = num.numOfPasses;
    return true;
  }

  void Disable() {
    if (!range) return;
    CUpti_RangeProfiler_Disable_Params p = {CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    p.pRangeProfilerObject = range;
    cuptiRangeProfilerDisable(&p);
    range = nullptr;
  }

  bool Enable(std::string* err) {
    CUpti_RangeProfiler_Enable_Params p = {CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    p.ctx = ctx;
    if (!CuptiOk(cuptiRangeProfilerEnable(&p), "cuptiRangeProfilerEnable", err)) return false;
    range = p.pRangeProfilerObject;
    return true;
  }

  size_t MaxRanges() const { return mode == ProfileRange::per_kernel ? kMaxKernelRanges : 1; }

  // A fresh counter data image, and the configuration that writes into it.
  bool Configure(std::string* err) {
    CUpti_RangeProfiler_GetCounterDataSize_Params size = {CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    size.pRangeProfilerObject = range;
    size.pMetricNames = metric_names.data();
    size.numMetrics = metric_names.size();
    size.maxNumOfRanges = MaxRanges();
    size.maxNumRangeTreeNodes = uint32_t(MaxRanges());
    if (!CuptiOk(cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize", err))
      return false;
    counter_data.assign(size.counterDataSize, 0);
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params init = {
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    init.pRangeProfilerObject = range;
    init.counterDataSize = counter_data.size();
    init.pCounterData = counter_data.data();
    if (!CuptiOk(cuptiRangeProfilerCounterDataImageInitialize(&init), "cuptiRangeProfilerCounterDataImageInitialize",
                 err))
      return false;
    CUpti_RangeProfiler_SetConfig_Params set = {CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    set.pRangeProfilerObject = range;
    set.configSize = config_image.size();
    set.pConfig = config_image.data();
    set.counterDataImageSize = counter_data.size();
    set.pCounterDataImage = counter_data.data();
    const bool per_kernel = mode == ProfileRange::per_kernel;
    set.range = per_kernel ? CUPTI_AutoRange : CUPTI_UserRange;
    set.replayMode = per_kernel ? CUPTI_KernelReplay : CUPTI_UserReplay;
    set.maxRangesPerPass = MaxRanges();
    set.numNestingLevels = 1;
    set.minNestingLevel = 1;
    set.passIndex = 0;
    set.targetNestingLevel = per_kernel ? 0 : 1;
    return CuptiOk(cuptiRangeProfilerSetConfig(&set), "cuptiRangeProfilerSetConfig", err);
  }

  // One pass: start, (push the user range,) run the work, wait for it, (pop,) stop. With kernel
  // replay CUPTI replays each kernel inside the launch, so one pass submits everything.
  bool Pass(const ProfiledWork& work, bool* all_submitted, std::string* err) {
    const bool user_range = mode == ProfileRange::whole_work;
    CUpti_RangeProfiler_Start_Params start = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    start.pRangeProfilerObject = range;
    if (!CuptiOk(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart", err)) return false;
    bool ok = true;
    if (user_range) {
      CUpti_RangeProfiler_PushRange_Params push = {CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
      push.pRangeProfilerObject = range;
      push.pRangeName = kRangeName;
      ok = CuptiOk(cuptiRangeProfilerPushRange(&push), "cuptiRangeProfilerPushRange", err);
    }
    if (ok) {
      std::string work_err;
      ok = work(&work_err);
      if (!ok) *err = "profiled work failed: " + work_err;
      ok = ok && RuntimeOk(cudaDeviceSynchronize(), "synchronising the profiled pass", err);
      if (user_range) {
        CUpti_RangeProfiler_PopRange_Params pop = {CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
        pop.pRangeProfilerObject = range;
        ok = CuptiOk(cuptiRangeProfilerPopRange(&pop), "cuptiRangeProfilerPopRange", ok ? err : nullptr) && ok;
      }
    }
    // Stop even after a failure, so the profiler is left ready for the next Profile.
    CUpti_RangeProfiler_Stop_Params stop = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    stop.pRangeProfilerObject = range;
    ok = CuptiOk(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop", ok ? err : nullptr) && ok;
    *all_submitted = stop.isAllPassSubmitted != 0;
    return ok;
  }

  // Decodes the counters and evaluates every metric for every range (kernel) recorded.
  bool Evaluate(std::vector<MetricValues>* ranges, std::string* err) {
    CUpti_RangeProfiler_DecodeData_Params decode = {CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    decode.pRangeProfilerObject = range;
    if (!CuptiOk(cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData", err)) return false;
    if (decode.numOfRangeDropped > 0) {
      *err = std::to_string(decode.numOfRangeDropped) + " ranges dropped: the work launched more than " +
             std::to_string(MaxRanges()) + " kernels";
      return false;
    }
    CUpti_RangeProfiler_GetCounterDataInfo_Params info = {CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    info.pCounterDataImage = counter_data.data();
    info.counterDataImageSize = counter_data.size();
    if (!CuptiOk(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo", err))
      return false;
    if (info.numTotalRanges == 0) {
      *err = "the range profiler recorded no range (did the work launch a kernel?)";
      return false;
    }
    std::vector<double> values(metric_names.size(), 0.0);
    for (size_t r = 0; r < info.numTotalRanges; ++r) {
      CUpti_Profiler_Host_EvaluateToGpuValues_Params eval = {
          CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
      eval.pHostObject = host;
      eval.pCounterDataImage = counter_data.data();
      eval.counterDataImageSize = counter_data.size();
      eval.rangeIndex = r;
      eval.ppMetricNames = metric_names.data();
      eval.numMetrics = metric_names.size();
      eval.pMetricValues = values.data();
      if (!CuptiOk(cuptiProfilerHostEvaluateToGpuValues(&eval), "cuptiProfilerHostEvaluateToGpuValues", err))
        return false;
      MetricValues& out = ranges->emplace_back();
      for (size_t i = 0; i < metrics.size(); ++i) out[metrics[i]] = values[i];
    }
    return true;
  }
};

const std::vector<std::string>& RangeProfiler::DefaultMetrics() {
  static const std::vector<std::string> metrics = {
      "dram__throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
      "sm__inst_executed_pipe_tensor_op_gmma.sum",
      "sm__warps_active.avg.pct_of_peak_sustained_active",
      "lts__t_sectors_lookup_hit.sum",
      "lts__t_sectors_lookup_miss.sum",
      "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
      "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
      "dram__bytes_read.sum",
      "dram__bytes_write.sum",
      "gpu__time_duration.sum",
  };
  return metrics;
}

RangeProfiler::RangeProfiler() = default;
RangeProfiler::~RangeProfiler() = default;

size_t RangeProfiler::passes() const { return state_ ? state_->passes : 0; }

bool RangeProfiler::Init(const std::vector<std::string>& metrics, std::string* err, ProfileRange range) {
  if (metrics.empty()) {
    *err = "RangeProfiler::Init: no metrics given";
    return false;
  }
  state_.reset();  // one range profiler per context: release an earlier Init first
  auto state = std::make_unique<State>();
  state->mode = range;
  state->metrics = metrics;
  for (const std::string& m : state->metrics) state->metric_names.push_back(m.c_str());
  if (!CurrentContext(&state->ctx, err) || !InitializeProfilerOnce(err) || !state->InitHost(err) ||
      !state->BuildConfig(err) || !state->Enable(err))
    return false;
  state_ = std::move(state);
  return true;
}

bool RangeProfiler::Profile(const ProfiledWork& work, MetricValues* metrics, std::string* err,
                            std::vector<MetricValues>* per_kernel) {
  if (!state_) {
    *err = "RangeProfiler::Profile before a successful Init";
    return false;
  }
  if (!RuntimeOk(cudaDeviceSynchronize(), "synchronising before profiling", err)) return false;
  // A later profile configures the same range profiler object again; should CUPTI refuse a
  // second configuration, a freshly enabled object takes it.
  if (!state_->Configure(err)) {
    if (!state_->profiled) return false;
    state_->Disable();
    if (!state_->Enable(err) || !state_->Configure(err)) return false;
  }
  state_->profiled = true;
  bool all_submitted = false;
  for (size_t pass = 0; !all_submitted; ++pass) {
    if (pass == kMaxPasses) {
      *err = "the range profiler wanted more than " + std::to_string(kMaxPasses) + " passes";
      return false;
    }
    if (!state_->Pass(work, &all_submitted, err)) return false;
  }
  std::vector<MetricValues> ranges;
  if (!state_->Evaluate(&ranges, err)) return false;
  *metrics = state_->mode == ProfileRange::per_kernel ? AggregateKernelMetrics(ranges) : ranges.front();
  if (per_kernel) *per_kernel = std::move(ranges);
  return true;
}

}  // namespace forgek
