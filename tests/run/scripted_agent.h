// An agent for run-loop tests: proposes a fixed list of instances of one family, in order, and
// keeps what each call was shown (`seen(ctx)` runs on every context it is given).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "forgek/agent/agent.h"
#include "forgek/core/candidate.h"

namespace forgek {

class ScriptedAgent : public Agent {
 public:
  ScriptedAgent(Candidate family, std::string family_key, std::vector<ParamAssignment> script)
      : family_(std::move(family)), key_(std::move(family_key)), script_(std::move(script)) {}

  std::string Name() const override { return "scripted"; }
  bool Propose(const ProposalContext& ctx, std::vector<Proposal>* out, std::string*) override {
    out->clear();
    if (seen) seen(ctx);
    while (next_ < script_.size() && static_cast<int>(out->size()) < ctx.max_candidates) {
      Proposal p;
      p.candidate = family_;
      p.params = script_[next_++];
      p.family = key_;
      p.rationale = "scripted";
      out->push_back(std::move(p));
    }
    return true;
  }
  bool WantsProfiles() const override { return wants_profiles; }

  bool wants_profiles = false;
  std::function<void(const ProposalContext&)> seen;

 private:
  Candidate family_;
  std::string key_;
  std::vector<ParamAssignment> script_;
  size_t next_ = 0;
};

}  // namespace forgek
