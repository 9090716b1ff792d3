// Splitting a batch's time budget across operators by their headroom: an operator whose incumbent
// is near the speed of light gets little, one far from it (or one that keeps improving) gets more.
#pragma once

#include <map>
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

// ---- A batch's time split (`forgek batch --time` / `--time-per-op`) ----

// Per operator, the geomean SOL % of its rows in the JSON of `forgek --json ops bench`
// ({"rows": [{"operator": NAME, "sol_pct": X}, ...]}; rows without a positive sol_pct are left
// out). False with `err` naming what is not that JSON ("rows[3].operator is not a string").
bool BenchSolFromJson(const std::string& text, std::map<std::string, double>* out, std::string* err);

// The split of `total_s` seconds across `ops` (in their order): each operator's headroom from the
// store (HeadroomFromStore, with `bench_sol_pct` where the store knows none), then SplitBudget
// with `floor_s` each. False with `err` on a store error.
bool SplitBatchTime(Store& store, const std::vector<std::string>& ops, const std::string& arch, double total_s,
                    double floor_s, const std::map<std::string, double>& bench_sol_pct, std::vector<BudgetShare>* out,
                    std::string* err);

// What one run of a batch is given: its share as `--time` (whole seconds; 0: no time budget) and
// `--iterations`. A run with a share ends by its time, so it gets no count (0) unless the batch was
// given one (`iterations_given`).
struct BatchRunBudget {
  long long time_s = 0;
  int iterations = 0;
};
BatchRunBudget RunBudgetOf(const std::vector<BudgetShare>& shares, const std::string& op, int iterations,
                           bool iterations_given);

}  // namespace forgek
