// The run's first stage after picking its incumbent: profile it and analyse what the hardware shows,
// with each profile kept in the store by kernel binary, device and driver so the next run reuses it.
#pragma once

#include <string>
#include <vector>

#include "forgek/core/evaluation.h"
#include "forgek/knowledge/knowledge.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/profile.h"
#include "forgek/run/run.h"
#include "forgek/knowledge/store.h"
#include "forgek/seal/incumbent.h"

namespace forgek {

struct AnalysisInputs {
  const OperatorSpec* op = nullptr;
  std::string arch, device, driver;
  Evaluator* evaluator = nullptr;
  Store* store = nullptr;                // null: nothing cached, nothing recorded
  const KnowledgeBase* kb = nullptr;     // null: analysed without the knowledge base
  std::vector<std::string> configs;      // the run's configs, by name
};

struct IncumbentAnalysis {
  std::vector<KernelProfile> profiles;   // one per config
  std::string summary;                   // the observations as text for the agent
  int cached = 0, profiled = 0;          // configs whose profile came from the store / the GPU
  double profile_s = 0;                  // seconds spent profiling on the GPU (0 when all cached)
  // The slowest config's profile, as measured when it was made (a cached profile keeps its own
  // measurement, KernelProfile::wall_s); 0 when unknown.
  double profile_s_per_config = 0;
  std::vector<DegradedStage> degraded;   // what went wrong, the run goes on without it
};

// Where the store keeps the profile of `kernel` on `config`: a hash of what the profile depends on
// (the kernel's binary and launches, or the library call; the config's sizes and the operator's
// tensors and formulas; the device and its driver; the profile's format).
std::string AnalysisCacheKey(const OperatorSpec& op, const KernelUnderTest& kernel, const std::string& config,
                             const std::string& device, const std::string& driver);

// Profiles each config with the kernel serving it in `incumbent` (from the store when it holds that
// profile), analyses the profiles and records observations and hypotheses in the store.
IncumbentAnalysis AnalyzeIncumbent(const AnalysisInputs& in, const Incumbent& incumbent);

}  // namespace forgek
