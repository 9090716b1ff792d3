// One config of an operator as the report and the suite scoreboard show it: what the expert takes,
// what serves the config now, the best measured, and the kernel and mechanisms behind it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "forgek/report/torch_compare.h"

namespace forgek {

// Every time is a median in microseconds and every noise a relative one (half the p10-p90 spread
// over the median); 0 means unknown, and every printer shows it as such ("-", empty, null).
struct ConfigRow {
  std::string op, arch, config;  // arch "" where the source knows none (a batch's run summaries)
  double expert_us = 0, expert_noise = 0;
  // What serves the config now, the next run's incumbent: the newest seal's time, else the
  // incumbent the runs were timed against (the expert reference on a fresh store).
  double sealed_us = 0, sealed_noise = 0;
  double best_us = 0, best_noise = 0;  // the fastest correct time any attempt measured (report only)
  double speedup = 0;                  // expert / sealed
  double sol_pct = 0;                  // of what serves the config: % of the calibrated bound
  double datasheet_sol_pct = 0;        // the same against the datasheet's peaks (0: not known)
  double floor_us = 0;                 // the launch floor inside the bound (0: unknown)
  std::string kernel;                  // the kernel serving the config, or "expert reference"
  std::vector<std::string> mechanisms;
  std::string seal;                    // seal id, "" where nothing sealed
  std::string note;                    // why nothing sealed, or why the operator has no numbers
  int attempts = 0;                    // attempts timed correct on this config (report only)
  std::optional<TorchBeside> torch;    // what `report --torch` read of it (report only)
};

}  // namespace forgek
