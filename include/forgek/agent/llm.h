// The llm and replay agents: prompts to a Chat Completions or Messages API, replies parsed into candidates.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "forgek/agent/agent.h"

namespace forgek {

enum class LlmProviderKind { openai, anthropic };
bool ParseLlmProvider(const std::string& s, LlmProviderKind* out);
const char* LlmProviderName(LlmProviderKind p);

struct LlmOptions {
  LlmProviderKind provider = LlmProviderKind::openai;
  std::string model;                 // required
  std::string base_url;              // "": see ResolveLlmBaseUrl
  std::string key_env;               // "": OPENAI_API_KEY / ANTHROPIC_API_KEY. The key is read from here only
  std::string prompts_dir;           // "": <knowledge>/prompts (FindDataDir("knowledge", "FORGEK_KNOWLEDGE"))
  std::string prices_path;           // "": <prompts_dir>/prices.json
  int max_output_tokens = 16384;
  std::optional<double> temperature; // sent only when set (reasoning models reject it)
  // Transport.
  int max_retries = 4;
  double retry_base_delay_s = 0.5;
  double retry_max_delay_s = 30;
  double max_retry_after_s = 60;
  double connect_timeout_s = 15;     // --http-connect-timeout
  double request_timeout_s = 600;    // --http-timeout: one request, the model's thinking included
  double low_speed_bytes_per_s = 16; // --http-low-speed: once a response has started, slower ...
  double low_speed_time_s = 30;      // ... than this over --http-low-speed-time seconds is cut
  size_t max_response_bytes = 8u << 20;
  // The run's end (--time; empty while unknown or without a time budget) and its Ctrl-C: no
  // request outlives either. Asked before every request.
  std::function<std::optional<std::chrono::steady_clock::time_point>()> deadline;
  std::function<bool()> stop_requested;
  int max_in_flight = 4;             // requests sent at once
  // Conversation.
  int max_repair_turns = 2;          // format repair messages per conversation (malformed replies)
  int max_feedback_turns = 4;        // turns per conversation that report an evaluation (docs/llm-agent.md)
  size_t conversation_tokens = 48000;  // estimated tokens a conversation may hold; older turns are dropped
  int parents = 2;                   // parents shown in a fresh request (the first is the one to improve)
  // Share of the run's attempts spent searching the families the model writes (params with lists
  // of values), with the builtin search, before the model is asked again. 0: never tune.
  double tune_share = 0.5;
  uint64_t tune_seed = 1;
  int recent_attempts = 8;           // attempts of the run quoted in a propose prompt
  size_t max_feedback_chars = 6000;  // feedback quoted in a repair turn, cut beyond this
  // Any one piece of operator or run text put into a prompt (the description, the incumbent's
  // source, the decisions, ...) is cut beyond this, with a visible marker (docs/limits.md).
  size_t max_prompt_field_chars = 65536;
  // Budget: 0 means no cap. A request that would start once a cap is reached is refused.
  double max_cost_usd = 0;
  int64_t max_tokens = 0;            // input + output tokens over the agent's life
};

// The API base URL: the explicit option, else $FORGEK_LLM_BASE_URL, else $OPENAI_BASE_URL or
// $ANTHROPIC_BASE_URL (by provider), else https://api.openai.com/v1 or https://api.anthropic.com.
// Trailing slashes are removed.
std::string ResolveLlmBaseUrl(const LlmOptions& opts);
// Whether `url` may be used as a base URL: http:// or https://, and no user:password@ part (a key
// belongs in the environment variable, never in a URL that is printed and stored). The error
// quotes the URL masked.
bool CheckLlmBaseUrl(const std::string& url, const std::string& key_env, std::string* err);
// The environment variable holding the key: the option, else OPENAI_API_KEY / ANTHROPIC_API_KEY.
std::string ResolveLlmKeyEnv(const LlmOptions& opts);

// Token and money spent so far.
using LlmSpend = AgentSpend;

// One request and its response, as recorded for the store and for replay. Never holds the key:
// request_headers carry it redacted, and the key's text is scrubbed from bodies and errors.
struct LlmExchange {
  std::string provider;          // openai | anthropic
  std::string model;
  std::string url;               // masked (RedactUrl): no user:password, no query values
  std::string purpose;           // propose | repair | format_repair
  std::vector<std::pair<std::string, std::string>> request_headers;  // key redacted
  std::string request_body;      // JSON
  long status = 0;               // HTTP status, 0 when no response came
  std::string response_body;
  std::string error;             // "" on success; else why the exchange failed
  int attempts = 0;              // HTTP requests sent, retries included
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  bool usage_estimated = false;  // the response carried no usage: tokens estimated from text length
  double cost_usd = 0;
  double latency_s = 0;
  int64_t started_unix_ms = 0;
  int64_t finished_unix_ms = 0;
};

std::string LlmExchangeToJson(const LlmExchange& x);
bool LlmExchangeFromJson(const std::string& text, LlmExchange* out, std::string* err);

// Receives every exchange, in a deterministic order (the order replay needs). Called from the
// thread that called Propose.
class ExchangeRecorder {
 public:
  virtual ~ExchangeRecorder() = default;
  virtual void Record(const LlmExchange& exchange) = 0;
};

// Proposes candidates by asking a model. One conversation per proposal: when the run reports
// that a proposal failed (compile_error, launch_error, crash, timeout, wrong), the next Propose
// continues that conversation with the feedback, up to max_repair_turns. A reply that holds no
// usable candidate gets a format repair turn within the same Propose.
//
// Reply format: the candidate is the one fenced code block tagged cuda/cu/c++/cpp/c (or untagged).
// With several such blocks, the single one holding a `/* forgek` manifest is taken; none or
// several with a manifest is an error fed back to the model.
//
// Propose returns false when a request fails fatally (authentication, permission, quota, a
// refused request, the budget cap) or when no proposal came out at all and something failed.
class LlmAgent : public Agent {
 public:
  // Checks the options, reads the key from the environment, loads prompts and prices. `recorder`
  // may be null and must outlive the agent.
  static std::unique_ptr<LlmAgent> Create(const LlmOptions& opts, ExchangeRecorder* recorder, std::string* err);
  ~LlmAgent() override;
  std::string Name() const override { return "llm"; }
  bool Propose(const ProposalContext& ctx, std::vector<Proposal>* out, std::string* err) override;
  LlmSpend Spent() const override;
  StopReason BudgetSpent() const override;
  bool WantsProfiles() const override { return true; }
  // Set once the model has nothing new (every reply repeated a kernel already tried): the rest of
  // the run tunes the families it wrote, and this says so.
  std::string Note() const override;

  struct Impl;

 private:
  explicit LlmAgent(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Replays recorded exchanges in order, without network, through the same prompts and parsing as
// LlmAgent: with the options and contexts of the recorded run it yields the same proposals.
// Provider and model default to those of the first exchange. A request that differs from the
// recorded one is logged (the prompts or context changed) but the recorded response is still used.
class ReplayAgent : public Agent {
 public:
  static std::unique_ptr<ReplayAgent> Create(const LlmOptions& opts, std::vector<LlmExchange> exchanges,
                                             ExchangeRecorder* recorder, std::string* err);
  ~ReplayAgent() override;
  std::string Name() const override { return "replay"; }
  bool Propose(const ProposalContext& ctx, std::vector<Proposal>* out, std::string* err) override;
  size_t Remaining() const;  // exchanges not yet replayed
  LlmSpend Spent() const override;
  StopReason BudgetSpent() const override;
  bool WantsProfiles() const override { return true; }
  // Set once the model has nothing new (every reply repeated a kernel already tried): the rest of
  // the run tunes the families it wrote, and this says so.
  std::string Note() const override;

 private:
  struct State;
  ReplayAgent(std::unique_ptr<LlmAgent::Impl> impl, std::shared_ptr<State> state);
  std::unique_ptr<LlmAgent::Impl> impl_;
  std::shared_ptr<State> state_;
};

}  // namespace forgek
