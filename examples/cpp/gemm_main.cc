// gemm_main: calls a gemm_bf16 seal (one kernel or a dispatch) exported as C from C++, with the CUDA
// driver API alone. It checks the product against the CPU and times the call (docs/using-seals.md).
/*
  Export the seal, then build from the repository root (the export in out/):

    forgek seal export SEAL_ID out --lang c
    cc -std=c11 -O2 -c out/forgek_gemm_bf16.c -I /usr/local/cuda/include
    c++ -std=c++17 -O2 examples/cpp/gemm_main.cc forgek_gemm_bf16.o -I out -I /usr/local/cuda/include \
        -L /usr/local/cuda/lib64/stubs -lcuda -lpthread -o gemm_main

  Run: ./gemm_main                  runs the sizes of kDefaultSizes below
       ./gemm_main 3000x4096x4096 ...  runs the given sizes (MxNxK)
  Exit status 0 when every size the seal takes matched the CPU within the operator's tolerance (sizes
  it does not take are reported, and are no failure); 1 otherwise; 2 for bad arguments.

  A product of 8192^3 has 67 M elements of 8192 terms each: the CPU checks every element for having
  been written (no NaN or infinity) and a sample of kSampled elements, the corners of C included,
  against a double-precision sum of the same bf16 inputs.
*/
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <vector>

#include "driver_api.h"  // Check, DeviceBuffer, Gpu: beside this file
#include "forgek_gemm_bf16.h"  // brings <cuda.h>; its declarations are extern "C"

namespace {

struct Size {
  int64_t m, n, k;
};

// gemm_bf16's suite (operators/gemm_bf16/operator.json), two sizes outside it (a large M that is no
// multiple of a tile, and a decode-sized M), and one no shipped kernel takes (N is no multiple of 64).
const Size kDefaultSizes[] = {{4096, 4096, 4096}, {8192, 8192, 8192}, {64, 8192, 8192}, {64, 14336, 4096},
                              {3000, 4096, 4096}, {32, 4096, 2048},   {100, 100, 64}};

// The operator's tolerance (operators/gemm_bf16/operator.json), against sums in double precision.
constexpr double kMaxAbs = 4.0;
constexpr double kRelL2 = 0.005;

constexpr int kSampled = 4096;  // elements of C checked against the CPU
constexpr int kRepeats = 10;    // calls timed per size, after one untimed call that loads the module

using example::Check;
using example::DeviceBuffer;

// bf16 <-> float by their bits: bf16 is the upper half of an IEEE float.
uint16_t ToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}
float FromBf16(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

enum class Outcome { kMatched, kNotRun, kFailed };

// Runs the seal on random normal(0, 1) bf16 inputs (the operator's distribution), times it and
// checks it; prints one line.
Outcome RunSize(CUstream stream, const Size& s, std::mt19937& rng) {
  std::printf("%" PRId64 " x %" PRId64 " x %" PRId64 ": ", s.m, s.n, s.k);
  forgek_gemm_bf16_launch_plan plan;
  forgek_gemm_bf16_status status = forgek_gemm_bf16_plan(s.m, s.n, s.k, &plan);
  if (status == FORGEK_GEMM_BF16_UNSUPPORTED_SIZE) {
    // A program would serve these sizes with another GEMM here (cuBLAS, or its own).
    std::printf("%s %s\n", forgek_gemm_bf16_status_name(status), plan.message);
    return Outcome::kNotRun;
  }
  if (status != FORGEK_GEMM_BF16_OK) {
    std::printf("%s %s\n", forgek_gemm_bf16_status_name(status), plan.message);
    return Outcome::kFailed;
  }

  const size_t a_count = static_cast<size_t>(s.m * s.k), b_count = static_cast<size_t>(s.k * s.n),
               c_count = static_cast<size_t>(s.m * s.n);
  std::vector<uint16_t> a(a_count), b(b_count), c(c_count);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (uint16_t& v : a) v = ToBf16(normal(rng));
  for (uint16_t& v : b) v = ToBf16(normal(rng));
  DeviceBuffer da(a_count * 2), db(b_count * 2), dc(c_count * 2), workspace(plan.workspace_bytes);
  Check(cuMemcpyHtoD(da.get(), a.data(), a_count * 2), "cuMemcpyHtoD");
  Check(cuMemcpyHtoD(db.get(), b.data(), b_count * 2), "cuMemcpyHtoD");
  // NaN in every element first, so that one the seal leaves unwritten shows. cuMemsetD16 runs on the
  // legacy stream, which a non-blocking stream does not wait for: synchronise before the call.
  Check(cuMemsetD16(dc.get(), 0x7fc0, c_count), "cuMemsetD16");
  Check(cuCtxSynchronize(), "cuCtxSynchronize");

  auto call = [&] {
    return forgek_gemm_bf16(stream, da.ptr(), db.ptr(), dc.ptr(), s.m, s.n, s.k, workspace.ptr(),
                            plan.workspace_bytes);
  };
  auto report = [](forgek_gemm_bf16_status failed) {
    std::printf("%s %s", forgek_gemm_bf16_status_name(failed), forgek_gemm_bf16_last_error());
    if (failed == FORGEK_GEMM_BF16_CUDA_ERROR)
      std::printf(" (CUresult %d)", static_cast<int>(forgek_gemm_bf16_last_cuda_result()));
    std::printf("\n");
    return Outcome::kFailed;
  };
  status = call();  // untimed: loads the module into this context
  if (status != FORGEK_GEMM_BF16_OK) return report(status);
  Check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  Check(cuMemcpyDtoH(c.data(), dc.get(), c_count * 2), "cuMemcpyDtoH");  // the first call's output

  const double us =
      example::MicrosecondsPerCall(stream, kRepeats, [&] { return (status = call()) == FORGEK_GEMM_BF16_OK; });
  if (status != FORGEK_GEMM_BF16_OK) return report(status);

  // Every element written; a sample (the four corners first) against double-precision sums.
  size_t unwritten = 0;
  for (uint16_t v : c) unwritten += !std::isfinite(FromBf16(v));
  std::uniform_int_distribution<int64_t> row(0, s.m - 1), col(0, s.n - 1);
  double max_abs = 0, err2 = 0, ref2 = 0;
  for (int i = 0; i < kSampled; ++i) {
    const int64_t r = i < 4 ? ((i & 1) ? s.m - 1 : 0) : row(rng), j = i < 4 ? ((i & 2) ? s.n - 1 : 0) : col(rng);
    double want = 0;
    for (int64_t l = 0; l < s.k; ++l)
      want += static_cast<double>(FromBf16(a[r * s.k + l])) * FromBf16(b[l * s.n + j]);
    const double d = std::fabs(static_cast<double>(FromBf16(c[r * s.n + j])) - want);
    max_abs = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::fmax(max_abs, d);
    err2 += d * d;
    ref2 += want * want;
  }
  const double rel_l2 = std::sqrt(err2 / ref2);
  const double tflops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) / (us * 1e6);
  const bool ok = unwritten == 0 && max_abs <= kMaxAbs && rel_l2 <= kRelL2;
  std::printf("kernel %d (%s), %zu unwritten, max |error| %.3g, rel_l2 %.3g over %d sampled, %.1f us per call "
              "(%.0f TFLOP/s): %s\n",
              plan.kernel, plan.kernel_label, unwritten, max_abs, rel_l2, kSampled, us, tflops, ok ? "ok" : "MISMATCH");
  return ok ? Outcome::kMatched : Outcome::kFailed;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Size> sizes;
  for (int i = 1; i < argc; ++i) {
    Size s{};
    if (std::sscanf(argv[i], "%" SCNd64 "x%" SCNd64 "x%" SCNd64, &s.m, &s.n, &s.k) != 3 || s.m < 1 || s.n < 1 ||
        s.k < 1) {
      std::fprintf(stderr, "usage: %s [MxNxK ...]\n", argv[0]);
      return 2;
    }
    sizes.push_back(s);
  }
  if (sizes.empty()) sizes.assign(std::begin(kDefaultSizes), std::end(kDefaultSizes));

  const example::Gpu gpu;  // device 0's primary context, current here, and a stream of our own
  std::printf("forgek_gemm_bf16 on %s\n", gpu.name);

  std::mt19937 rng(2024);
  bool failed = false;
  for (const Size& s : sizes) failed = RunSize(gpu.stream, s, rng) == Outcome::kFailed || failed;

  const forgek_gemm_bf16_status unloaded = forgek_gemm_bf16_unload(gpu.context);
  if (unloaded != FORGEK_GEMM_BF16_OK) {
    std::printf("unload: %s %s\n", forgek_gemm_bf16_status_name(unloaded), forgek_gemm_bf16_last_error());
    failed = true;
  }
  return failed ? 1 : 0;
}
