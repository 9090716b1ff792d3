// The variables of the propose and repair prompts, rendered from a proposal context.
#pragma once

#include <string>

#include "agent/prompt_template.h"
#include "forgek/agent.h"
#include "forgek/llm.h"

namespace forgek {

// Everything propose.md may name: operator, tensors, configs (with shapes), hardware, incumbent
// analysis and source, decisions, recent attempts, the candidate format, and which of `variants`
// parallel proposals this one is (1-based `variant`).
TemplateVars ProposeVariables(const ProposalContext& ctx, const LlmOptions& opts, const PromptTemplates& prompts,
                              int variant, int variants);

// repair.md's variables for an evaluated proposal that failed: outcome and feedback (cut to
// max_feedback_chars).
TemplateVars RepairVariables(const AttemptSummary& attempt, const LlmOptions& opts);

// format_repair.md's variables: what was wrong with the reply.
TemplateVars FormatRepairVariables(const std::string& problem, const LlmOptions& opts);

}  // namespace forgek
