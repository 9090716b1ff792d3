// The worker's own GPU helpers (input generation, poisoning, comparison, L2 flush, clock probe,
// copy bandwidth), compiled by nvcc into the binary and launched through the runtime API on the
// driver's primary context. Streams are CUstream / cudaStream_t passed as void*.
#pragma once

#include <cstdint>
#include <string>

namespace forgek::cuda {

// Element types the helpers understand; mirrors forgek::DType (kept separate so this header
// needs nothing from core).
enum class ElemType : int { f64, f32, f16, bf16, e4m3, e5m2, i8, u8, i32, u32, i64 };

enum class InitDist : int { normal, uniform, int_range, probs };

struct InitParams {
  InitDist dist = InitDist::normal;
  double a = 0, b = 1;    // normal: mean, stddev; uniform: lo, hi; int_range: lo, hi (exclusive)
  int64_t row = 1;        // probs: length of the last axis
};

// Fills `n` elements at `ptr` with values drawn from a counter-based hash of (seed, index): the
// same seed gives the same tensor on any launch configuration. Float values that round to zero
// are nudged away from it, so a tensor is never all zeros.
bool FillRandom(void* ptr, ElemType type, int64_t n, uint64_t seed, const InitParams& init, void* stream,
                std::string* err);

// Writes the NaN pattern of `type` (an unlikely value for integers) over `n` elements, so that
// elements a kernel never writes cannot pass the comparison.
bool Poison(void* ptr, ElemType type, int64_t n, void* stream, std::string* err);

// Compares `n` candidate elements (`cand_type`) with the truth (`truth_type`: f32 for float
// outputs, the inout's own dtype for float inouts, the same integer type otherwise), accumulating in
// fp64 on the GPU.
struct CompareStats {
  double sum_sq_diff = 0, sum_sq_truth = 0, max_abs = 0;
  int64_t bad = 0;          // non-finite candidate values, or |diff| > max_abs_tol (or != when exact)
  int64_t non_finite = 0;   // NaN / Inf in the candidate
  int64_t unwritten = 0;    // integer candidates still holding the poison pattern (and unlike the truth)
  int64_t first_bad = -1;   // smallest index of a bad element, -1 when none
  static constexpr int kSamples = 8;
  int64_t sample_index[kSamples];  // some bad elements (the first one included)
  double sample_cand[kSamples], sample_truth[kSamples];
  int samples = 0;
};
bool Compare(const void* cand, ElemType cand_type, const void* truth, ElemType truth_type, int64_t n,
             double max_abs_tol, bool exact, void* stream, CompareStats* out, std::string* err);

// Writes every byte of an L2-sized buffer so the next kernel starts with a cold L2.
bool FlushL2(void* buffer, int64_t bytes, void* stream, std::string* err);

// Measures the SM clock in MHz: a short spin on one SM comparing clock64 with globaltimer.
bool MeasureSmClockMhz(void* stream, double* mhz, std::string* err);

// A float4 grid-stride copy of `bytes` (a multiple of 16) from src to dst.
bool CopyFloat4(void* dst, const void* src, int64_t bytes, void* stream, std::string* err);

// Spins on the GPU for about `us` microseconds (hides launch latency before a timed region).
bool Spin(double us, void* stream, std::string* err);

// Enqueues `launches` launches of a kernel that does nothing (one block of 32 threads): what a
// launch costs when the kernel itself costs nothing (the launch floor, see worker/calibrate.cc).
bool LaunchEmpty(int launches, void* stream, std::string* err);

}  // namespace forgek::cuda
