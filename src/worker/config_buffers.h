// One config's tensors on the GPU: seeded input copies, candidate outputs, golden outputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernel_binding.h"

namespace forgek::worker {

struct TensorBuffers {
  WireTensor spec;
  std::vector<DeviceBuffer> copies;  // inputs and inouts: rotated copies, [0] filled from the seed
  DeviceBuffer pristine;             // inouts: copy 0 as generated, to restore before each run
  DeviceBuffer out;                  // outputs: what the kernel under test writes
  DeviceBuffer truth;                // outputs and inouts: what the golden writes (f32 for floats)
  bool IsResult() const { return spec.role != TensorRole::input; }
  DType truth_dtype() const {
    return spec.role == TensorRole::output && DTypeIsFloat(spec.dtype) ? DType::f32 : spec.dtype;
  }
};

class ConfigBuffers {
 public:
  bool Allocate(GpuContext* gpu, const WireConfig& config, GpuError* err);
  // Fills copy 0 of every input and inout from `seed` and saves the inouts' pristine state.
  bool Fill(uint64_t seed, GpuError* err);
  // Makes `count` copies of the inputs (copy 0 duplicated), for rotation while timing.
  bool EnsureCopies(int count, GpuError* err);
  int copies() const;
  int64_t input_bytes() const;  // one copy of every input and inout

  // Poisons every output the kernel under test writes, and restores inouts of `copy` (all copies
  // when -1) from the pristine state.
  bool ResetResults(int copy, GpuError* err);
  // Poisons the golden's outputs and loads its inouts with the pristine state.
  bool ResetTruth(GpuError* err);

  TensorBindings GoldenBindings() const;
  TensorBindings CandidateBindings(int copy) const;

  // Compares what the kernel under test left with the truth; true when correct. The inout of
  // `copy` is what is compared for inouts.
  bool Check(int copy, CorrectnessReport* report, GpuError* err);

  std::vector<TensorBuffers>& tensors() { return tensors_; }

 private:
  GpuContext* gpu_ = nullptr;
  const WireConfig* config_ = nullptr;
  std::vector<TensorBuffers> tensors_;
};

// The decision for an exact output under tolerance.max_mismatch_fraction: it passes when at most
// floor(fraction * elements) elements differ and none of them is NaN/Inf or still poisoned
// (never written). `mismatches` counts every differing element, those included.
bool ExactMismatchesPass(int64_t mismatches, int64_t non_finite, int64_t unwritten, int64_t elements,
                         double fraction);
int64_t AllowedMismatches(int64_t elements, double fraction);

// "C[3, 17]" for flat index 3*N+17 of a tensor of shape [M, N].
std::string FormatIndex(const std::string& name, const std::vector<int64_t>& shape, int64_t flat);

}  // namespace forgek::worker
