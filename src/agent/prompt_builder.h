// The variables of the propose and repair prompts, rendered from a proposal context.
#pragma once

#include <string>

#include "llm_parents.h"
#include "prompt_template.h"
#include "forgek/agent/agent.h"
#include "forgek/agent/llm.h"

namespace forgek {

// Everything propose.md may name: operator, tensors, configs (with shapes), hardware, incumbent
// analysis and source, decisions, recent attempts, the candidate format, and which of `variants`
// parallel proposals this one is (1-based `variant`).
// `parents` fills {{parents}} (their sources, per-config times, SOL %) and {{task}} (improve the
// first parent, or write a new architecture, and which).
TemplateVars ProposeVariables(const ProposalContext& ctx, const LlmOptions& opts, const PromptTemplates& prompts,
                              int variant, int variants, const ParentChoice& parents);

// feedback.md's variables for an evaluated proposal that was correct and timed: per-config times
// against the incumbent with each verdict, the geomean verdict, SOL %, the incumbent's analysis,
// and for an instance of a family the model wrote, every instance the search tried.
TemplateVars FeedbackVariables(const AttemptSummary& attempt, const ProposalContext& ctx, const LlmOptions& opts);

// The parents section of a propose prompt, and the task it sets (prompt_parents.cc).
std::string ParentsText(const ParentChoice& choice, const LlmOptions& opts);
std::string TaskText(const ParentChoice& choice);

// `text` cut to `max_chars`, saying how much was cut.
std::string CutText(const std::string& text, size_t max_chars);
// "BM=128, STAGES=4".
std::string ParamsText(const ParamAssignment& params);

// repair.md's variables for an evaluated proposal that failed: outcome and feedback (cut to
// max_feedback_chars).
TemplateVars RepairVariables(const AttemptSummary& attempt, const LlmOptions& opts);

// format_repair.md's variables: what was wrong with the reply.
TemplateVars FormatRepairVariables(const std::string& problem, const LlmOptions& opts);

}  // namespace forgek
