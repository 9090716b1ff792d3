// The steps of BuildReport (report.h), one file each, over the records of the selection read once.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "forgek/knowledge/store.h"
#include "forgek/report/report.h"

namespace forgek::report_build {

// A selected run with what the steps read of it.
struct RunData {
  RunRecord run;
  std::vector<AttemptRecord> attempts;  // iteration order
  double cost_usd = 0;
  int64_t tokens = 0;
};

// The records a report is made of.
struct Scope {
  std::vector<RunData> runs;                // oldest first
  std::vector<SealRecord> seals;            // newest first
  std::vector<SealCheckRecord> checks;      // oldest first
  std::vector<std::pair<std::string, std::string>> operators;  // (op, arch) in the order first seen
};

// Reads the runs, attempts, LLM spend, seals and nightly rows of `sel`; `label` names the scope.
bool LoadScope(Store& store, const ReportSelection& sel, Scope* scope, std::string* label, std::string* err);

// Per run: attempts, spend, seal and the convergence series.
std::vector<RunSeries> RunSeriesOf(const Scope& scope);

// Per operator and config, and per operator (the scoreboard and the operators table).
bool ConfigRowsOf(Store& store, const Scope& scope, const std::map<std::string, OperatorSpec>& operators,
                  std::vector<ConfigRow>* rows, std::vector<OperatorRow>* ops, std::vector<std::string>* notes,
                  std::string* err);

// Per seal its summary and roofline points; the bounds of the devices they were timed on.
bool SealsOf(Store& store, const Scope& scope, const std::map<std::string, OperatorSpec>& operators,
             std::vector<SealSummary>* seals, std::vector<DeviceBounds>* devices, std::vector<std::string>* notes,
             std::string* err);

// The nightly history grouped per seal, in the order each seal was first checked.
std::vector<SealHistory> NightlyOf(const Scope& scope);

// Decisions by verdict after each selected run.
bool KnowledgeOf(Store& store, const Scope& scope, std::vector<KnowledgeStep>* steps, std::string* err);

// Shared by the steps.
// The parsed metadata of a seal (an object; empty when it is not JSON).
nlohmann::json SealMetadata(const SealRecord& seal);
// metadata.configs' row of `config`, or null.
nlohmann::json SealConfig(const nlohmann::json& metadata, const std::string& config);
// Fields of stored JSON read without trusting their types (an imported store may hold anything):
// the number at `key` (0 when absent or not a number), the string at `key` (`fallback` otherwise).
double NumberAt(const nlohmann::json& j, const std::string& key);
std::string StringAt(const nlohmann::json& j, const std::string& key, const std::string& fallback = "");
// A string field of a run's summary_json ("seal", "seal_reason"); "" when absent.
std::string SummaryField(const RunRecord& run, const std::string& key);
// The dtype whose tensor peak bounds an operator's arithmetic: its first float input (the rule
// the worker evaluator applies for SOL %).
// The median and relative noise (half the p10-p90 spread over the median) of `values` (> 0).
void MedianAndNoise(std::vector<double> values, double* median, double* noise);

}  // namespace forgek::report_build
