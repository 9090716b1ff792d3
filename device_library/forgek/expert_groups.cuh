// forgek/expert_groups.cuh: the experts' row groups of a grouped (MoE) GEMM and a tile walk over them
// (namespace fk). A [T, K] holds each expert's rows one run after another; group_sizes (i32 [E], read on
// the device: the split changes with every input) gives the runs by grouped_gemm_bf16's rule:
// start[e] = min(sizes[0] + ... + sizes[e-1], T), end[e] = min(start[e] + sizes[e], T), and the last
// expert ends at T.
//   fk::ExpertSlot — {expert, row0 (its first row of A and C), rows, m_units (its m-units, below),
//                     slot (the slot's index among the expert's own)}
//   bool fk::expert_slot_of(slot, group_sizes, T, E, tile_rows, unit_tiles, slots_per_unit, &out) — the
//        experts' slots one expert after another: expert e has m_units = ceil(ceil(rows / tile_rows) /
//        unit_tiles) units of unit_tiles row tiles each (a unit of ClusterM tiles keeps a cluster inside
//        one expert; tiles of a unit past the expert's rows compute nothing that is stored), and
//        m_units * slots_per_unit slots (slots_per_unit: the N tiles of each unit, or 1). Fills `out`
//        for `slot`; false for a slot past the last expert's. O(E) reads of group_sizes (cached). The
//        units summed over experts never exceed ceil(ceil(T / tile_rows) / unit_tiles) + E (each expert
//        wastes less than one), a grid bound a manifest can state without the sizes.
#pragma once
#include <forgek/common.cuh>

namespace fk {

struct ExpertSlot {
  int expert;
  int row0;     // first row of the expert's run in A and C
  int rows;     // rows of the run (0 for an empty expert)
  int m_units;  // ceil(ceil(rows / tile_rows) / unit_tiles)
  int slot;     // the slot's index among the expert's m_units * slots_per_unit
};

FK_DEVICE bool expert_slot_of(int slot, const int* __restrict__ group_sizes, int T, int E, int tile_rows,
                              int unit_tiles, int slots_per_unit, ExpertSlot* out)
{
  long long start = 0;  // 64-bit: a running sum of arbitrary i32 sizes
  for (int e = 0; e < E; ++e) {
    const long long s = start < 0 ? 0 : (start < T ? start : (long long)T);
    long long end = (e == E - 1) ? T : s + group_sizes[e];
    end = end < s ? s : (end < T ? end : (long long)T);
    const int rows = (int)(end - s);
    const int m_units = ceil_div(ceil_div(rows, tile_rows), unit_tiles);
    const int slots = m_units * slots_per_unit;
    if (slot < slots) {
      *out = ExpertSlot{e, (int)s, rows, m_units, slot};
      return true;
    }
    slot -= slots;
    start += group_sizes[e];
  }
  return false;
}

}  // namespace fk
