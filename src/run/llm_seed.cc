// The seed of an imported operator asked of the LLM agent: proposal, compile check, repair turns.
#include "forgek/run/llm_seed.h"

#include <spdlog/spdlog.h>

#include "forgek/compile/compile.h"
#include "forgek/core/candidate.h"
#include "forgek/core/hash.h"
#include "forgek/core/paths.h"

namespace forgek {

bool AskLlmSeed(const OperatorSpec& op, const LlmSeedOptions& opts, std::string* source, std::string* err) {
  std::unique_ptr<LlmAgent> agent = LlmAgent::Create(opts.llm, nullptr, err);
  if (!agent) return false;
  CompilerOptions copts;
  copts.cache_dir = opts.cache_dir;
  copts.pch_dir = opts.pch_dir;
  copts.threads = 1;
  Compiler compiler(copts);
  ProposalContext ctx;
  ctx.op = &op;
  ctx.arch = opts.arch;
  ctx.max_candidates = 1;
  std::string last;
  for (int reply = 0; reply < opts.replies; ++reply) {
    std::vector<Proposal> proposals;
    if (!agent->Propose(ctx, &proposals, err)) {
      *err = "the LLM agent: " + *err;
      return false;
    }
    if (proposals.empty()) {
      *err = "the LLM agent proposed no new kernel" + (last.empty() ? std::string() : "; the last reply: " + last);
      return false;
    }
    const Proposal& p = proposals.front();
    // The instance the reference runs: each param at its first value.
    ParamAssignment first;
    for (const ParamSpec& s : p.candidate.manifest.params) first[s.name] = s.values.empty() ? 0 : s.values.front();
    CompileRequest req;
    req.name = "seed.cu";
    req.source = p.candidate.source;
    req.arch = opts.arch;
    req.options = ParamDefines(first);
    const CompileResult compiled = compiler.CompileNow(req);
    if (compiled.ok) {
      spdlog::info("ops import: reply {} of the model compiles for {}: it is the seed", reply + 1, opts.arch);
      *source = p.candidate.source;
      return true;
    }
    last = "it does not compile for " + opts.arch + ":\n" + compiled.Summary();
    spdlog::warn("ops import: reply {} of the model does not compile; asking again", reply + 1);
    AttemptSummary a;
    a.iteration = reply;
    a.candidate_hash = CandidateHash(p.candidate.source, p.params);
    a.params = p.params;
    a.source = p.candidate.source;
    a.outcome = Outcome::compile_error;
    a.feedback = compiled.Summary();
    ctx.history.push_back(std::move(a));
  }
  *err = "no seed after " + std::to_string(opts.replies) + " replies of the model; the last: " + last;
  return false;
}

}  // namespace forgek
