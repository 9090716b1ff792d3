// The toy operator of the run-loop tests: a family that gets faster with its params, one that
// never compiles, a golden kernel, and a time model for the scripted evaluator.
#pragma once

#include <string>

#include "forgek/compile/compile.h"
#include "forgek/core/evaluation.h"
#include "forgek/core/operator_spec.h"
#include "test_util.h"
#include "toy_operator.h"

namespace forgek {

// A family whose TILE param makes it faster, one that never compiles, one with a wrong instance.
inline constexpr const char* kFastFamily = R"CU(/* forgek
{ "name": "tiled", "mechanisms": ["vector_16B"],
  "params": {"TILE": [1, 2, 4, 8], "UNROLL": [1, 2]},
  "launches": [{"kernel": "scale", "grid": ["ceil_div(N, 256)"], "block": [256], "args": ["x", "y", "N"]}] }
*/
extern "C" __global__ void scale(const float* x, float* y, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) y[i] = x[i] * TILE * UNROLL;
}
)CU";
inline constexpr const char* kGolden = R"CU(/* forgek
{ "name": "golden", "launches": [{"kernel": "golden", "grid": ["ceil_div(N, 128)"], "block": [128], "args": ["x", "y", "N"]}] }
*/
extern "C" __global__ void golden(const float* x, float* y, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) y[i] = x[i];
}
)CU";
inline constexpr const char* kBrokenFamily = R"CU(/* forgek
{ "name": "broken", "mechanisms": ["warp_shuffle_reduction"], "params": {"W": [1, 2]},
  "launches": [{"kernel": "broken", "grid": [1], "block": [32], "args": ["x", "y", "N"]}] }
*/
extern "C" __global__ void broken(const float* x, float* y, int N) { y[0] = x[0] + undeclared_name; }
)CU";

struct LoopFixture {
  TempDir dir;
  OperatorSpec op;
  LoopFixture() {
    WriteFile(dir.file("toy/families/tiled.cu"), kFastFamily);
    WriteFile(dir.file("toy/families/broken.cu"), kBrokenFamily);
    WriteFile(dir.file("toy/golden.cu"), kGolden);
    op = ToyOperator(dir.file("toy"), {"families/tiled.cu", "families/broken.cu"});
  }
};

// The reference takes 100 us; the tiled family gets faster with TILE*UNROLL, down to 100/(1+0.1*16).
inline double Model(const KernelUnderTest& k, const std::string&) {
  if (!k.library.empty()) return 100.0;
  double work = static_cast<double>(k.params.at("TILE") * k.params.at("UNROLL"));
  return 100.0 / (1.0 + 0.1 * work);
}

inline CompilerOptions TestCompilerOptions(const TempDir& dir) {
  CompilerOptions o;
  o.cache_dir = dir.file("cache");
  o.threads = 2;
  return o;
}

}  // namespace forgek
