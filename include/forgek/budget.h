// Splitting a batch's time budget across operators by their headroom: an operator whose incumbent
// is near the speed of light gets little, one far from it (or one that keeps improving) gets more.
#pragma once

#include <string>
#include <vector>

namespace forgek {

class Store;

struct OperatorHeadroom {
  std::string op;
  double sol_pct = -1;             // the incumbent's SOL % (geomean over configs); < 0: unknown
  std::string sol_source;          // where it came from: "seal 3f2a...", "run attempts", "ops bench", ""
  int runs_without_gain = 0;       // finished runs since its last seal (all of them when never sealed)
  bool improved_last_run = false;  // the latest run sealed
};

struct BudgetShare {
  std::string op;
  double seconds = 0;
  double weight = 0;  // headroom x recency
  std::string why;    // "SOL 95.4% (seal 3f2a...): headroom 4.6%; 2 runs without gain"
};

// Each operator first gets `floor_s` (the fixed costs of a run: incumbent analysis, confirmation);
// the rest of `total_s` goes in proportion to weight = headroom x recency, where headroom =
// 1 - SOL (clamped to [kMinHeadroom, 1]; 0.5 when unknown) and recency = 1 / (1 + 0.5 x runs
// without gain), x 1.5 when the latest run improved. When `total_s` does not cover every floor,
// the split is equal. Shares are in the order of `ops` and add up to `total_s`.
constexpr double kMinHeadroom = 0.02;
std::vector<BudgetShare> SplitBudget(const std::vector<OperatorHeadroom>& ops, double total_s, double floor_s);

// An operator's headroom from the store (its latest seal's SOL, else the incumbent's SOL in its
// best timed attempt) and its run history; `bench_sol_pct` (< 0: none), e.g. from `ops bench`,
// fills in when the store knows nothing.
bool HeadroomFromStore(Store& store, const std::string& op, const std::string& arch, double bench_sol_pct,
                       OperatorHeadroom* out, std::string* err);

}  // namespace forgek
