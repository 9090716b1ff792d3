// `forgek report`: what the store knows, gathered once into a Report that every printer reads
// (markdown, JSON, CSV, HTML: report_print.h), as nvbench keeps its data apart from its printers.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "forgek/core/operator_spec.h"
#include "forgek/knowledge/store.h"
#include "forgek/report/config_row.h"
#include "forgek/report/torch_compare.h"

namespace forgek {

// Which part of the store: one run (its id, or a unique prefix of at least 4 characters), one
// operator, or everything (both empty). Never both.
struct ReportSelection {
  std::string run_id;
  std::string op;
};

// One operator on one arch over the selected runs.
struct OperatorRow {
  std::string op, arch;
  int runs = 0;
  int attempts = 0, timed_attempts = 0;  // every attempt; those correct and timed (faster/same/slower)
  double cost_usd = 0;                   // what the LLM requests of those runs cost
  int64_t tokens = 0;                    // their input and output tokens
  std::string seal;                      // the seal serving it now, "" for none
  double speedup = 0;                    // geomean over its configs of expert / sealed (0: unknown)
  double sol_pct = 0;                    // geomean of its configs' SOL % (0: unknown)
};

// One attempt of a run on the convergence plot: the geomean of its times over the run's configs,
// and the best such geomean so far. Only attempts correct and timed on all of those configs count:
// a geomean over fewer configs is not comparable.
struct ConvergencePoint {
  int attempt = 0;  // 1-based, as the run's text counts them
  double us = 0, best_us = 0;
};

struct RunSeries {
  std::string id, op, arch, device, agent, status, incumbent, created_at;
  int attempts = 0;
  double cost_usd = 0;
  std::string seal;                  // the seal this run made, "" for none
  std::string seal_reason;           // why it sealed or not, as the run said
  std::vector<std::string> configs;  // the configs its geomeans run over
  double incumbent_us = 0;           // geomean of the incumbent's times over those configs (0: unknown)
  std::vector<ConvergencePoint> points;
};

// A seal's config on the roofline: arithmetic intensity (the operator's flops over its bytes, as
// SOL % counts them) against the throughput its sealed time reaches.
struct RooflinePoint {
  std::string config;
  double flops = 0, bytes = 0, time_us = 0;
  double intensity = 0;  // FLOP per byte
  double tflops = 0;     // flops / time
};

struct SealSummary {
  std::string id, op, arch, device, run_id, parent, created_at;
  double geomean_speedup = 0;  // over the incumbent it replaced
  std::vector<std::string> mechanisms;
  std::string compute_dtype;   // whose tensor peak bounds its arithmetic ("" without the operator's folder)
  std::vector<RooflinePoint> roofline;
  std::string note;            // why it has fewer roofline points than configs
};

// A device's bounds from the store's peaks: the bandwidth roof and one compute ceiling per dtype
// that bounds a reported seal.
struct ComputeCeiling {
  std::string dtype;
  double tflops = 0;
};
struct DeviceBounds {
  std::string name, arch;
  double bandwidth_gbps = 0;
  double launch_floor_us = 0;
  bool calibrated = false;
  std::vector<ComputeCeiling> ceilings;
};

// The nightly history of one seal (`forgek regress`), oldest first.
struct SealHistory {
  std::string seal_id, op;
  std::vector<SealCheckRecord> checks;
};

// Decisions by verdict (hypothesis, validated, refuted) after a run, in the order runs started.
// `touched`: decisions that have evidence from this run; `known`: those with evidence from this or
// an earlier selected run. The verdicts are today's: the store keeps no history of them.
struct KnowledgeStep {
  std::string run_id, op, created_at;
  std::map<std::string, int> touched, known;
};

struct Report {
  std::string scope;         // "the whole store", "run <id>", "operator <name>"
  std::string store_path, generated_at;
  std::vector<OperatorRow> operators;
  std::vector<ConfigRow> configs;    // per operator and config: also the scoreboard's rows
  std::vector<RunSeries> runs;       // oldest first
  std::vector<SealSummary> seals;    // newest first
  std::vector<DeviceBounds> devices;
  std::vector<SealHistory> nightly;
  std::vector<KnowledgeStep> knowledge;
  std::vector<std::string> notes;    // what the report could not show, and why
  std::vector<TorchSource> torch;    // the comparisons against PyTorch shown beside the configs

  // True when the selection holds nothing at all (a fresh store, an operator never run).
  bool Empty() const { return runs.empty() && seals.empty() && nightly.empty(); }
};

// Finds the run of `sel.run_id` (full id or unique prefix): *found=false when there is none;
// false with `err` for an ambiguous prefix or a store error.
bool FindReportRun(Store& store, const std::string& id_or_prefix, RunRecord* out, bool* found, std::string* err);

// Gathers the report of `sel` from `store`. `operators` holds the specs it knows by name (for the
// roofline's flops and bytes); an operator without one is reported without roofline points, with a
// note. A run id that names no run is an error; an operator without anything recorded is an empty
// report that says so.
bool BuildReport(Store& store, const ReportSelection& sel, const std::map<std::string, OperatorSpec>& operators,
                 Report* out, std::string* err);

// Sets beside each config row what `comparisons` timed of it, matched by operator and config name;
// a row whose operator the report serves with another seal gets a note. What matches no row is
// listed in the report's notes. False, with the report untouched, when two comparisons (or one and
// a comparison attached before) time the same operator and config: which to show would be a guess.
bool AttachTorchComparisons(const std::vector<TorchComparison>& comparisons, Report* report, std::string* err);

}  // namespace forgek
