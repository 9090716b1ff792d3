// The engine shared by the llm and replay agents: conversations, request rounds, parsing, accounting.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "llm_prices.h"
#include "llm_provider.h"
#include "prompt_template.h"
#include "forgek/agent/builtin_agent.h"
#include "forgek/agent/http.h"
#include "forgek/agent/llm.h"

namespace forgek {

// One conversation, which produces one proposal at a time and hears how each one did.
struct LlmConversationState {
  LlmConversation conv;
  int repairs = 0;          // format repair messages sent so far (malformed replies)
  int feedback_turns = 0;   // evaluation reports sent so far
  std::string parent;       // candidate hash the next proposal changes ("" for none)
  std::vector<std::string> log;  // one line per evaluated proposal, for the note on dropped turns
  double pending_cost = 0;  // spent since the conversation's last proposal
  int64_t pending_tokens = 0;
};

// Sends one request, retries included (HTTP for the llm agent, a recording for replay).
using LlmSend = std::function<HttpOutcome(const HttpRequest&)>;

struct LlmAgent::Impl {
  LlmOptions opts;
  std::unique_ptr<LlmProvider> provider;
  std::string base_url;
  std::string shown_url;  // base_url as messages and logs print it (RedactUrl)
  std::string key_env;
  std::string key;  // in memory only: never logged, recorded or put in a message
  PromptTemplates prompts;
  PriceTable prices;
  ExchangeRecorder* recorder = nullptr;
  LlmSend send;
  // Replay only: takes the next recorded exchange when it is a tuning round ("tune"), so that a
  // replayed run proposes the recorded instances whatever the search would pick from new times.
  std::function<bool(LlmExchange*)> recorded_tune;

  // Checks options, loads prompts and prices, and (when `need_key`) reads the key.
  bool Init(const LlmOptions& options, ExchangeRecorder* rec, bool need_key, std::string* err);
  bool Propose(const ProposalContext& ctx, std::vector<Proposal>* out, std::string* err);
  LlmSpend Spent() const;
  // The cap that is spent ("max-cost", "max-tokens", with what it means in `why` when given), or "".
  StopReason BudgetSpent(std::string* why) const;
  // Agent::Note: what the run does since the model ran out of ideas, or "".
  std::string Note() const { return note_; }

 private:
  struct Turn;
  // Instances of the families the model wrote, searched by the builtin search while the run's
  // share of tuned attempts is below opts.tune_share (every slot of the round when `whole_round`:
  // the model has nothing new); false with `err` on a search failure.
  bool ProposeTuned(const ProposalContext& ctx, bool whole_round, std::vector<Proposal>* out, std::string* err);
  // The model's round brought only repeats of kernels already tried: from now on every round
  // tunes its families (none left: `out` stays empty and the run ends exhausted).
  bool OutOfIdeas(const ProposalContext& ctx, std::vector<Proposal>* out, std::string* err);
  // Appends `text` as the next user message, first dropping the oldest exchanges (and saying so)
  // when the conversation would exceed opts.conversation_tokens.
  void AppendUserTurn(LlmConversationState* state, std::string text) const;
  // Reads the key from the environment variable key_env: set, not empty, printable ASCII.
  bool ReadKey(std::string* err);
  void RunTurn(Turn* turn);
  void RunAll(const std::vector<Turn*>& turns);
  std::string StatusError(const HttpResponse& resp, const std::string& url, int attempts) const;

  mutable std::mutex mu_;  // guards spent_ (turns run on several threads)
  LlmSpend spent_;
  std::map<std::string, std::shared_ptr<LlmConversationState>> conversation_of_;  // by candidate hash
  std::set<std::string> seen_attempts_;  // attempts whose feedback was already handled
  int fresh_conversations_ = 0;          // counts the parent rule's requests (llm_parents.h)
  std::vector<Candidate> invented_;      // families the model wrote, path = family key
  std::set<std::string> tuned_;          // candidate hashes the search proposed
  bool out_of_ideas_ = false;            // the model only repeats itself: rounds tune its families
  std::string out_of_ideas_when_;        // "the model had nothing new after attempt 4 (...)"
  std::string note_;                     // says so (Agent::Note)
  std::unique_ptr<BuiltinAgent> tuner_;
};

}  // namespace forgek
