// softmax_main: calls a softmax_fp32 seal exported as C from C++, with the CUDA driver API alone.
// It checks the result against a softmax on the CPU and times the call (docs/using-seals.md).
/*
  Export the seal, then build from the repository root (the export in out/):

    forgek seal export SEAL_ID out --lang c
    cc -std=c11 -O2 -c out/forgek_softmax_fp32.c -I /usr/local/cuda/include
    c++ -std=c++17 -O2 examples/cpp/softmax_main.cc forgek_softmax_fp32.o -I out -I /usr/local/cuda/include \
        -L /usr/local/cuda/lib64/stubs -lcuda -lpthread -o softmax_main

  The stub libcuda only satisfies the linker; at run time the driver's libcuda.so.1 is loaded.

  Run: ./softmax_main                runs the sizes of kDefaultSizes below
       ./softmax_main 1000x2000 ...  runs the given sizes (ROWSxCOLS)
  Exit status 0 when every size the seal takes matched the CPU within the operator's tolerance (sizes
  it does not take are reported, and are no failure); 1 otherwise; 2 for bad arguments.
*/
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "driver_api.h"  // Check, DeviceBuffer, Gpu: beside this file
#include "forgek_softmax_fp32.h"  // brings <cuda.h>; its declarations are extern "C"

namespace {

// A size of the suite forgek timed the seal on, one outside it, and, to show how a refused size is
// handled, one the shipped softmax kernels do not take: more rows than a grid dimension or a 32-bit
// row index reaches.
const std::pair<int64_t, int64_t> kDefaultSizes[] = {{16384, 4096}, {333, 5000}, {3000000000, 4}};

// The operator's tolerance (operators/softmax_fp32/operator.json), against a softmax in double.
constexpr double kMaxAbs = 5e-6;
constexpr double kRelL2 = 2e-5;

// Calls timed per size, after one untimed call: the first call in a context loads the seal's module.
constexpr int kRepeats = 20;

using example::Check;
using example::DeviceBuffer;

// y = softmax(x) along each row of a rows x cols matrix, in double precision.
std::vector<double> CpuSoftmax(const std::vector<float>& x, int64_t rows, int64_t cols) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x.data() + r * cols;
    double* out = y.data() + r * cols;
    double max = in[0], sum = 0;
    for (int64_t c = 1; c < cols; ++c) max = std::fmax(max, in[c]);
    for (int64_t c = 0; c < cols; ++c) {
      out[c] = std::exp(in[c] - max);
      sum += out[c];
    }
    for (int64_t c = 0; c < cols; ++c) out[c] /= sum;
  }
  return y;
}

enum class Outcome { kMatched, kNotRun, kFailed };

// Runs the seal on random rows x cols input, times it and compares it with the CPU; prints one line.
Outcome RunSize(CUstream stream, int64_t rows, int64_t cols, std::mt19937& rng) {
  std::printf("%" PRId64 " x %" PRId64 ": ", rows, cols);

  // The plan says, without a driver call or any memory, whether a kernel of the seal takes these
  // sizes, which one, and how much workspace it needs. The call itself plans again and returns the
  // same status; asking first means nothing is allocated for sizes the seal does not take.
  forgek_softmax_fp32_launch_plan plan;
  forgek_softmax_fp32_status status = forgek_softmax_fp32_plan(rows, cols, &plan);
  if (status == FORGEK_SOFTMAX_FP32_UNSUPPORTED_SIZE) {
    // The message names the constraint or the limit that refused the sizes. A program would serve
    // them with another softmax here (a library's, or its own); this one reports them.
    std::printf("%s %s\n", forgek_softmax_fp32_status_name(status), plan.message);
    return Outcome::kNotRun;
  }
  if (status != FORGEK_SOFTMAX_FP32_OK) {
    std::printf("%s %s\n", forgek_softmax_fp32_status_name(status), plan.message);
    return Outcome::kFailed;
  }

  // The plan accepted the sizes, so rows * cols * 4 bytes fits in int64.
  const size_t count = static_cast<size_t>(rows) * static_cast<size_t>(cols);
  const size_t bytes = count * sizeof(float);
  size_t free_bytes = 0, total_bytes = 0;
  Check(cuMemGetInfo(&free_bytes, &total_bytes), "cuMemGetInfo");
  if (2 * bytes + plan.workspace_bytes > free_bytes) {
    std::printf("skipped: needs %zu MiB of device memory, %zu MiB are free\n",
                (2 * bytes + plan.workspace_bytes) >> 20, free_bytes >> 20);
    return Outcome::kNotRun;
  }

  std::vector<float> x(count), y(count);
  std::normal_distribution<float> normal(0.0f, 2.0f);  // the operator's own input distribution
  for (float& v : x) v = normal(rng);
  DeviceBuffer dx(bytes), dy(bytes);
  // The workspace allocated once and passed to every call; NULL would make each call take it from
  // the stream's memory pool. This seal's kernels may need none (plan.workspace_bytes is then 0).
  DeviceBuffer workspace(plan.workspace_bytes);
  Check(cuMemcpyHtoD(dx.get(), x.data(), bytes), "cuMemcpyHtoD");

  auto call = [&] {
    return forgek_softmax_fp32(stream, dx.ptr(), dy.ptr(), rows, cols, workspace.ptr(), plan.workspace_bytes);
  };
  // Every status but OK comes with the calling thread's message; a driver failure also with its CUresult.
  auto report = [](forgek_softmax_fp32_status failed) {
    std::printf("%s %s", forgek_softmax_fp32_status_name(failed), forgek_softmax_fp32_last_error());
    if (failed == FORGEK_SOFTMAX_FP32_CUDA_ERROR)
      std::printf(" (CUresult %d)", static_cast<int>(forgek_softmax_fp32_last_cuda_result()));
    std::printf("\n");
    return Outcome::kFailed;
  };
  status = call();  // untimed: loads the module into this context
  if (status != FORGEK_SOFTMAX_FP32_OK) return report(status);

  const double us =
      example::MicrosecondsPerCall(stream, kRepeats, [&] { return (status = call()) == FORGEK_SOFTMAX_FP32_OK; });
  if (status != FORGEK_SOFTMAX_FP32_OK) return report(status);

  // The calls were asynchronous on `stream`: the event above waited for them.
  Check(cuMemcpyDtoH(y.data(), dy.get(), bytes), "cuMemcpyDtoH");
  const std::vector<double> want = CpuSoftmax(x, rows, cols);
  double max_abs = 0, err2 = 0, ref2 = 0;
  for (size_t i = 0; i < count; ++i) {
    const double d = std::fabs(static_cast<double>(y[i]) - want[i]);
    // A NaN (say, an element left unwritten) counts as an infinite error.
    max_abs = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::fmax(max_abs, d);
    err2 += d * d;
    ref2 += want[i] * want[i];
  }
  const double rel_l2 = std::sqrt(err2 / ref2);
  const bool ok = max_abs <= kMaxAbs && rel_l2 <= kRelL2;
  std::printf("kernel %d (%s), max |error| %.3g, rel_l2 %.3g, %.1f us per call (%.0f GB/s): %s\n", plan.kernel,
              plan.kernel_label, max_abs, rel_l2, us, 2.0 * static_cast<double>(bytes) / (us * 1e3),
              ok ? "ok" : "MISMATCH");
  return ok ? Outcome::kMatched : Outcome::kFailed;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::pair<int64_t, int64_t>> sizes;
  for (int i = 1; i < argc; ++i) {
    int64_t rows = 0, cols = 0;
    if (std::sscanf(argv[i], "%" SCNd64 "x%" SCNd64, &rows, &cols) != 2) {
      std::fprintf(stderr, "usage: %s [ROWSxCOLS ...]\n", argv[0]);
      return 2;
    }
    sizes.emplace_back(rows, cols);
  }
  if (sizes.empty()) sizes.assign(std::begin(kDefaultSizes), std::end(kDefaultSizes));

  const example::Gpu gpu;  // device 0's primary context, current here, and a stream of our own
  std::printf("forgek_softmax_fp32 on %s\n", gpu.name);

  std::mt19937 rng(2024);
  bool failed = false;
  for (const auto& [rows, cols] : sizes) failed = RunSize(gpu.stream, rows, cols, rng) == Outcome::kFailed || failed;

  // The seal's module stays loaded in the context until it is unloaded: do so before the context goes.
  const forgek_softmax_fp32_status unloaded = forgek_softmax_fp32_unload(gpu.context);
  if (unloaded != FORGEK_SOFTMAX_FP32_OK) {
    std::printf("unload: %s %s\n", forgek_softmax_fp32_status_name(unloaded), forgek_softmax_fp32_last_error());
    failed = true;
  }
  return failed ? 1 : 0;
}
