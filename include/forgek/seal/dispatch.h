// A dispatch: per config, the kernel that serves it (the fastest candidate a run measured there, or
// the incumbent), plus a fallback for shapes outside the table (docs/seal-format.md "Dispatch seals").
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "forgek/core/evaluation.h"
#include "forgek/verdict/verdict.h"

namespace forgek {

// A direction in the words of a summary: "faster beyond noise", "the same within noise", ...
std::string DirectionWords(Direction d);

// A candidate a run measured against its incumbent.
struct DispatchCandidate {
  std::string label;  // "attempt 7"
  EvalResult result;  // its search measurement (every config, or some)
};

// The kernel chosen for one config.
struct DispatchChoice {
  std::string config;
  int candidate = -1;       // index into the candidates; -1: the incumbent serves the config
  TimeComparison best;      // the fastest correct candidate's comparison here (timed false: none)
  int best_candidate = -1;  // which candidate that was (-1: none measured correct here)
  std::string reason;       // "attempt 7: 1.210x, faster beyond noise"; "best 0.988x (attempt 3), slower beyond noise"
};

struct Dispatch {
  std::vector<DispatchChoice> configs;  // in the operator's config order
  int fallback = -1;                    // the best-geomean candidate that is slower nowhere; -1: the incumbent
  std::string fallback_reason;
  // The candidates that serve at least one config or the fallback, ascending.
  std::vector<int> Kernels() const;
  // True when a candidate serves at least one config (else there is nothing to seal).
  bool AnyCandidate() const;
  // True when more than one kernel (counting the incumbent) serves the table.
  bool Mixed() const;
};

// Per config, the fastest candidate whose measurement there was correct and faster than the
// incumbent beyond noise (CompareConfig with `min_effect`); the incumbent wherever none was.
// Candidates whose evaluation failed anywhere (wrong on a config, a crash) serve no config: a
// dispatch serves only kernels that were correct on every config they were measured on.
Dispatch AssembleDispatch(const std::vector<std::string>& configs, const std::vector<DispatchCandidate>& candidates,
                          double min_effect);

// The confirmation of a dispatch: each group of configs served by one kernel is measured by
// `measure` (kernel index, -1 for the incumbent, and its configs) on fresh seeds against the
// incumbent; the parts are merged into one result in the operator's config order, which the
// sealing rule (DecideSeal) then judges. A failed part makes the merged outcome that part's.
using MeasurePart = std::function<EvalResult(int kernel, const std::vector<std::string>& configs)>;
EvalResult ConfirmDispatch(const Dispatch& dispatch, const MeasurePart& measure);

// Results merged from parts measured separately: configs in `order`, geomean and outcome recomputed
// with the verdict module's rule; the first failed part's outcome and detail win.
EvalResult MergeResults(const std::vector<EvalResult>& parts, const std::vector<std::string>& order);

}  // namespace forgek
