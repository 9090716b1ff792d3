// Random uneven partitions of an integer total (MoE group sizes): the `partition` init.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace forgek {

// An independent 64-bit value per (seed, index) (splitmix64 of seed + index-th golden step):
// the worker's per-tensor seeds and the partition's per-part draws.
uint64_t DeriveSeed(uint64_t seed, uint64_t index);

// Why (total, parts, multiple, min) admits no partition, or "" when it does: every part a
// multiple of `multiple` (>= 1) and at least `min` (>= 0), `parts` (>= 1) of them summing to
// `total` (>= 0, a multiple of `multiple`).
std::string PartitionProblem(int64_t total, int64_t parts, int64_t multiple, int64_t min);

// Fills `out` with `parts` values as above, drawn from `seed`: the share of what is left above
// the minimum follows a flat Dirichlet, so parts are uneven and differ from seed to seed. The
// same seed always gives the same partition. False with `err` when PartitionProblem objects.
bool MakePartition(int64_t total, int64_t parts, int64_t multiple, int64_t min, uint64_t seed,
                   std::vector<int64_t>* out, std::string* err);

}  // namespace forgek
