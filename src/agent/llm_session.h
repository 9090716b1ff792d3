// The engine shared by the llm and replay agents: conversations, request rounds, parsing, accounting.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "agent/llm_prices.h"
#include "agent/llm_provider.h"
#include "agent/prompt_template.h"
#include "forgek/http.h"
#include "forgek/llm.h"

namespace forgek {

// One conversation, which produced one proposal at a time; repaired with feedback.
struct LlmConversationState {
  LlmConversation conv;
  int repairs = 0;  // repair messages sent so far (format and evaluation feedback)
};

// Sends one request, retries included (HTTP for the llm agent, a recording for replay).
using LlmSend = std::function<HttpOutcome(const HttpRequest&)>;

struct LlmAgent::Impl {
  LlmOptions opts;
  std::unique_ptr<LlmProvider> provider;
  std::string base_url;
  std::string key_env;
  std::string key;  // in memory only: never logged, recorded or put in a message
  PromptTemplates prompts;
  PriceTable prices;
  ExchangeRecorder* recorder = nullptr;
  LlmSend send;

  // Checks options, loads prompts and prices, and (when `need_key`) reads the key.
  bool Init(const LlmOptions& options, ExchangeRecorder* rec, bool need_key, std::string* err);
  bool Propose(const ProposalContext& ctx, std::vector<Proposal>* out, std::string* err);
  LlmSpend Spent() const;

 private:
  struct Turn;
  bool BudgetAllows(std::string* err) const;
  void RunTurn(Turn* turn);
  void RunAll(const std::vector<Turn*>& turns);
  std::string StatusError(const HttpResponse& resp, const std::string& url, int attempts) const;

  mutable std::mutex mu_;  // guards spent_ (turns run on several threads)
  LlmSpend spent_;
  std::map<std::string, std::shared_ptr<LlmConversationState>> conversation_of_;  // by candidate hash
  std::set<std::string> seen_attempts_;  // attempts whose feedback was already handled
};

}  // namespace forgek
