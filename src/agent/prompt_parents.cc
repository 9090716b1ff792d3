// Prompt text about measured programs: the parents of a request and the feedback on a proposal.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "prompt_builder.h"
#include "forgek/core/device_library.h"

namespace forgek {
namespace {

constexpr size_t kMaxParentSource = 16000;  // characters of a parent's source shown
constexpr size_t kMaxInstancesShown = 8;    // instances of a searched family listed in feedback
constexpr size_t kMaxBottleneck = 1500;     // characters of a profile's analysis shown

std::string ConfigTable(const std::vector<ConfigTime>& configs) {
  if (configs.empty()) return "";
  std::string out = "| config | this kernel us | incumbent us | speedup | SOL % | verdict |\n|---|---|---|---|---|---|\n";
  for (const ConfigTime& c : configs) {
    double speedup = c.candidate_us > 0 ? c.incumbent_us / c.candidate_us : 0;
    out += fmt::format("| {} | {:.2f} | {:.2f} | {:.3f}x | {:.1f} | {} |\n", c.config, c.candidate_us, c.incumbent_us,
                       speedup, c.sol_pct, c.verdict.empty() ? "-" : c.verdict);
  }
  return out;
}

std::string WhatItIs(const std::string& family, const ParamAssignment& params) {
  std::string what = family.empty() ? "free-form kernel" : "family " + family;
  if (!params.empty()) what += " with " + ParamsText(params);
  return what;
}

std::string ParentText(const ParentProgram& p, char letter, const LlmOptions& opts) {
  (void)opts;
  std::string out = fmt::format("### Parent {}: {} ({})\n", letter, p.label, WhatItIs(p.family, p.params));
  std::string verdict = p.outcome.empty() ? "" : p.outcome + ", ";
  out += fmt::format("Measured: {}geomean {:.3f}x vs {} incumbent, {:.1f}% of speed-of-light (geomean).\n", verdict,
                     p.geomean_speedup, p.this_run ? "this run's" : "its run's", p.sol_pct);
  std::string table = ConfigTable(p.configs);
  if (!table.empty()) out += "\n" + table;
  if (!p.bottleneck.empty()) out += "\nIts profile: " + CutText(p.bottleneck, kMaxBottleneck) + "\n";
  out += "\n```cuda\n" + CutText(CollapseDeviceLibrary(p.source), kMaxParentSource);
  if (out.back() != '\n') out += "\n";
  return out + "```\n";
}

}  // namespace

std::string ParentsText(const ParentChoice& choice, const LlmOptions& opts) {
  if (choice.parents.empty()) return "(none yet: no correct, timed program in this run or in earlier runs)";
  std::string out;
  char letter = 'A';
  for (const ParentProgram* p : choice.parents) out += (out.empty() ? "" : "\n") + ParentText(*p, letter++, opts);
  return out;
}

std::string TaskText(const ParentChoice& choice) {
  if (choice.parents.empty()) {
    return "Task: write a first kernel (a new architecture): nothing correct has been measured yet.";
  }
  if (choice.new_architecture) {
    return "Task: write a NEW ARCHITECTURE, a different approach from the parents above (other "
           "mechanisms, another decomposition of the work); use them as inspiration only.";
  }
  return "Task: IMPROVE PARENT A. Keep what works, change what its per-config times and SOL % point "
         "at; other parents are inspiration. Say in one line what you changed against parent A.";
}

TemplateVars FeedbackVariables(const AttemptSummary& a, const ProposalContext& ctx, const LlmOptions& opts) {
  std::string results = fmt::format("Geomean {:.3f}x vs the incumbent: `{}`. {}\n", a.geomean_speedup,
                                    OutcomeName(a.outcome), a.feedback);
  std::string table = ConfigTable(a.configs);
  if (!table.empty()) results += "\n" + table;
  if (!a.bottleneck.empty()) results += "\nIts profile (a new best is profiled): " + CutText(a.bottleneck, kMaxBottleneck) + "\n";

  // An instance of a family the model wrote: every instance the search tried, best first.
  if (a.family.rfind(kInventedFamilyPrefix, 0) == 0) {
    std::vector<const AttemptSummary*> instances;
    for (const AttemptSummary& h : ctx.history)
      if (h.family == a.family) instances.push_back(&h);
    std::stable_sort(instances.begin(), instances.end(), [](const AttemptSummary* x, const AttemptSummary* y) {
      return x->geomean_speedup > y->geomean_speedup;
    });
    results += fmt::format("\nThe search tried {} instance(s) of your family, best first:\n", instances.size());
    for (size_t i = 0; i < instances.size() && i < kMaxInstancesShown; ++i) {
      const AttemptSummary& h = *instances[i];
      results += fmt::format("- {}: {}", ParamsText(h.params), OutcomeName(h.outcome));
      if (OutcomeTimed(h.outcome)) results += fmt::format(" {:.3f}x", h.geomean_speedup);
      results += "\n";
    }
  }
  std::string instruction;
  if (a.outcome == Outcome::faster) {
    instruction = "It beats the incumbent beyond noise. Make it faster still: what limits it now?";
  } else {
    instruction = fmt::format(
        "It is not faster than the incumbent beyond noise (it is `{}`). Use the per-config times and SOL % to find "
        "why, and change the kernel (tile or block sizes, vector width, the work per thread, the mechanism).",
        OutcomeName(a.outcome));
  }
  return {{"iteration", std::to_string(a.iteration + 1)},  // "attempt N", numbered from 1
          {"outcome", OutcomeName(a.outcome)},
          {"results", CutText(results, opts.max_feedback_chars)},
          {"incumbent_summary", ctx.incumbent_summary.empty() ? "(none)" : CutText(ctx.incumbent_summary, 1500)},
          {"instruction", instruction}};
}

}  // namespace forgek
