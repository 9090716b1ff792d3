// Random uneven partitions of an integer total (the `partition` init of MoE group sizes).
#include "forgek/core/partition.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace forgek {
namespace {

// Uniform in (0, 1]: never 0, so its logarithm is finite.
double Uniform01(uint64_t seed, uint64_t index) {
  return (static_cast<double>(DeriveSeed(seed, index) >> 11) + 1.0) * 0x1.0p-53;
}

}  // namespace

uint64_t DeriveSeed(uint64_t seed, uint64_t index) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::string PartitionProblem(int64_t total, int64_t parts, int64_t multiple, int64_t min) {
  if (parts < 1) return "needs at least one element to partition";
  if (multiple < 1) return "multiple must be at least 1, got " + std::to_string(multiple);
  if (min < 0) return "min must be non-negative, got " + std::to_string(min);
  if (total < 0) return "total must be non-negative, got " + std::to_string(total);
  if (total % multiple != 0)
    return "total " + std::to_string(total) + " is not a multiple of " + std::to_string(multiple);
  const int64_t min_units = (min + multiple - 1) / multiple;
  if (min_units > 0 && parts > total / multiple / min_units)
    return std::to_string(parts) + " parts of at least " + std::to_string(min_units * multiple) +
           " exceed total " + std::to_string(total);
  return "";
}

bool MakePartition(int64_t total, int64_t parts, int64_t multiple, int64_t min, uint64_t seed,
                   std::vector<int64_t>* out, std::string* err) {
  if (std::string why = PartitionProblem(total, parts, multiple, min); !why.empty()) {
    *err = "partition: " + why;
    return false;
  }
  // Work in units of `multiple`; each part gets its minimum, the rest is shared by weight.
  const int64_t min_units = (min + multiple - 1) / multiple;
  const int64_t free_units = total / multiple - parts * min_units;
  std::vector<double> weight(parts);
  for (int64_t i = 0; i < parts; ++i) weight[i] = -std::log(Uniform01(seed, i));
  const double sum = std::accumulate(weight.begin(), weight.end(), 0.0);
  std::vector<int64_t> units(parts);
  std::vector<double> fraction(parts);
  int64_t given = 0;
  for (int64_t i = 0; i < parts; ++i) {
    const double share = static_cast<double>(free_units) * weight[i] / sum;
    units[i] = std::min(free_units - given, static_cast<int64_t>(std::floor(share)));
    fraction[i] = share - static_cast<double>(units[i]);
    given += units[i];
  }
  // Largest remainders take the units rounding left over (fewer than `parts` of them).
  std::vector<int64_t> order(parts);
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return fraction[a] > fraction[b]; });
  for (int64_t k = 0; given < free_units; k = (k + 1) % parts, ++given) ++units[order[k]];
  out->resize(parts);
  for (int64_t i = 0; i < parts; ++i) (*out)[i] = (min_units + units[i]) * multiple;
  return true;
}

}  // namespace forgek
