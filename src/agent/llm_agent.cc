// The llm agent: conversations per proposal, parallel request rounds, repair turns, budget and records.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "agent/llm_session.h"
#include "agent/prompt_builder.h"
#include "agent/reply_parser.h"
#include "forgek/hash.h"
#include "forgek/paths.h"

namespace forgek {
namespace {

int64_t NowUnixMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

bool NeedsRepair(Outcome o) {
  return o == Outcome::compile_error || o == Outcome::launch_error || o == Outcome::crash ||
         o == Outcome::timeout || o == Outcome::wrong;
}

bool EqualsIgnoreCase(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

}  // namespace

// One request of a round: which conversation, and what came back.
struct LlmAgent::Impl::Turn {
  std::shared_ptr<LlmConversationState> state;
  std::string purpose;  // propose | repair | format_repair
  bool sent = false;    // an exchange happened (false when the budget refused it)
  LlmExchange exchange;
  bool ok = false;
  LlmReply reply;
  std::string error;
  bool fatal = false;   // stop the run: no retry or waiting helps
};

bool LlmAgent::Impl::Init(const LlmOptions& options, ExchangeRecorder* rec, bool need_key, std::string* err) {
  opts = options;
  recorder = rec;
  if (opts.model.empty()) {
    *err = "llm agent: no model given";
    return false;
  }
  if (opts.max_in_flight < 1 || opts.max_retries < 0 || opts.max_repair_turns < 0 || opts.connect_timeout_s <= 0 ||
      opts.request_timeout_s <= 0 || opts.low_speed_bytes_per_s < 0 || opts.low_speed_time_s <= 0 ||
      opts.max_response_bytes == 0 || opts.max_output_tokens < 1 ||
      opts.retry_base_delay_s < 0 || opts.max_cost_usd < 0 || opts.max_tokens < 0) {
    *err = "llm agent: an option is out of range (in-flight >= 1, retries/repairs/caps >= 0, timeouts and limits > 0)";
    return false;
  }
  base_url = ResolveLlmBaseUrl(opts);
  if (base_url.rfind("http://", 0) != 0 && base_url.rfind("https://", 0) != 0) {
    *err = "llm agent: base URL '" + base_url + "' must start with http:// or https://";
    return false;
  }
  key_env = ResolveLlmKeyEnv(opts);
  if (need_key) {
    const char* value = std::getenv(key_env.c_str());
    if (!value || !*value) {
      *err = "llm agent: environment variable " + key_env + " is not set (the API key is read from the environment only)";
      return false;
    }
    key = value;
    // A control character (\r\n) would end the auth header and inject another; the key itself is
    // never quoted in the error.
    auto control = std::find_if(key.begin(), key.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
    size_t bad = control == key.end() ? std::string::npos : static_cast<size_t>(control - key.begin());
    if (bad != std::string::npos) {
      key.clear();
      *err = "llm agent: the API key in " + key_env + " holds a control character (at character " +
             std::to_string(bad + 1) + "); remove line breaks and other control characters from it";
      return false;
    }
  }
  std::string dir = opts.prompts_dir;
  if (dir.empty()) {
    std::string knowledge = FindDataDir("knowledge", "FORGEK_KNOWLEDGE");
    if (knowledge.empty()) {
      *err = "llm agent: no knowledge/ folder found for the prompt templates (set FORGEK_KNOWLEDGE)";
      return false;
    }
    dir = knowledge + "/prompts";
  }
  if (!prompts.Load(dir, err)) return false;
  if (!prices.Load(opts.prices_path.empty() ? dir + "/prices.json" : opts.prices_path, err)) return false;
  bool fallback = false;
  prices.Find(opts.model, &fallback);
  if (fallback) spdlog::warn("llm: model {} is not in the price table; costs use the fallback price", opts.model);

  provider = MakeLlmProvider(opts.provider);
  HttpLimits limits;
  limits.connect_timeout_s = opts.connect_timeout_s;
  limits.total_timeout_s = opts.request_timeout_s;
  limits.max_response_bytes = opts.max_response_bytes;
  limits.low_speed_bytes_per_s = opts.low_speed_bytes_per_s;
  limits.low_speed_time_s = opts.low_speed_time_s;
  limits.abort = opts.stop_requested;
  RetryPolicy policy{opts.max_retries, opts.retry_base_delay_s, opts.retry_max_delay_s, opts.max_retry_after_s};
  send = [limits, policy, deadline = opts.deadline](const HttpRequest& req) {
    HttpLimits bounded = limits;
    if (deadline) bounded.deadline = deadline();
    return HttpPostWithRetries(req, bounded, policy);
  };
  return true;
}

LlmSpend LlmAgent::Impl::Spent() const {
  std::lock_guard<std::mutex> lock(mu_);
  return spent_;
}

bool LlmAgent::Impl::BudgetAllows(std::string* err) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (opts.max_cost_usd > 0 && spent_.cost_usd >= opts.max_cost_usd) {
    *err = fmt::format("LLM budget spent: ${:.4f} of the ${:.4f} cost cap (--max-cost); no further request is sent",
                       spent_.cost_usd, opts.max_cost_usd);
    return false;
  }
  int64_t tokens = spent_.input_tokens + spent_.output_tokens;
  if (opts.max_tokens > 0 && tokens >= opts.max_tokens) {
    *err = fmt::format("LLM budget spent: {} of the {} token cap (--max-tokens); no further request is sent", tokens,
                       opts.max_tokens);
    return false;
  }
  return true;
}

std::string LlmAgent::Impl::StatusError(const HttpResponse& resp, const std::string& url, int attempts) const {
  std::string message = RedactSecret(ApiErrorMessage(resp.body), key);
  long status = resp.status;
  if (status == 401) {
    return fmt::format("authentication failed (HTTP 401 from {}): check ${}: {}", url, key_env, message);
  }
  if (status == 403) {
    return fmt::format("permission denied (HTTP 403 from {}): check that the key in ${} may use model {}: {}", url,
                       key_env, opts.model, message);
  }
  if (IsQuotaExhausted(resp)) {
    return fmt::format("quota, billing or credit limit reached (HTTP 429 from {}), not retried: {}", url, message);
  }
  if (IsRetryableStatus(resp)) {
    return fmt::format("HTTP {} from {} after {} attempt(s): {}", status, url, attempts, message);
  }
  return fmt::format("request refused (HTTP {} from {}): {}", status, url, message);
}

void LlmAgent::Impl::RunTurn(Turn* turn) {
  if (!BudgetAllows(&turn->error)) {
    turn->fatal = true;
    return;
  }
  HttpRequest req = provider->BuildRequest(base_url, opts, turn->state->conv, key);
  LlmExchange& x = turn->exchange;
  x.provider = LlmProviderName(opts.provider);
  x.model = opts.model;
  x.url = req.url;
  x.purpose = turn->purpose;
  for (const auto& [name, value] : req.headers) {
    x.request_headers.emplace_back(name, EqualsIgnoreCase(name, provider->KeyHeader()) ? "[redacted]" : value);
  }
  x.request_body = RedactSecret(req.body, key);
  x.started_unix_ms = NowUnixMs();
  auto start = std::chrono::steady_clock::now();

  HttpOutcome o = send(req);

  x.latency_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  x.finished_unix_ms = NowUnixMs();
  x.attempts = o.attempts;
  x.status = o.responded ? o.response.status : 0;
  x.response_body = RedactSecret(o.response.body, key);
  turn->sent = true;

  std::string why;
  if (!o.responded) {
    turn->error = RedactSecret(o.error, key);
    // Ctrl-C or the run's time budget: no repair turn or further request helps.
    turn->fatal = o.failure == HttpFailure::aborted || o.failure == HttpFailure::deadline;
  } else if (o.response.status < 200 || o.response.status >= 300) {
    turn->error = StatusError(o.response, req.url, o.attempts);
    turn->fatal = !IsRetryableStatus(o.response);
  } else if (!provider->ParseReply(o.response.body, &turn->reply, &why)) {
    turn->error = fmt::format("malformed response from {} ({}): {}", x.provider, req.url, why);
  } else {
    turn->ok = true;
    turn->reply.text = RedactSecret(turn->reply.text, key);
  }
  x.error = turn->error;
  if (turn->ok) {
    x.usage_estimated = !turn->reply.has_usage;
    // Without usage in the response, about four characters make a token: enough to keep the caps.
    x.input_tokens = turn->reply.has_usage ? turn->reply.input_tokens : static_cast<int64_t>(req.body.size() / 4);
    x.output_tokens = turn->reply.has_usage ? turn->reply.output_tokens : static_cast<int64_t>(turn->reply.text.size() / 4);
    x.cost_usd = prices.Cost(opts.model, x.input_tokens, x.output_tokens);
  }
  std::lock_guard<std::mutex> lock(mu_);
  spent_.requests += 1;
  spent_.input_tokens += x.input_tokens;
  spent_.output_tokens += x.output_tokens;
  spent_.cost_usd += x.cost_usd;
}

void LlmAgent::Impl::RunAll(const std::vector<Turn*>& turns) {
  size_t workers = std::min<size_t>(static_cast<size_t>(opts.max_in_flight), turns.size());
  if (workers <= 1) {
    for (Turn* t : turns) RunTurn(t);
    return;
  }
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      for (size_t i = next++; i < turns.size(); i = next++) RunTurn(turns[i]);
    });
  }
  for (auto& t : threads) t.join();
}

bool LlmAgent::Impl::Propose(const ProposalContext& ctx, std::vector<Proposal>* out, std::string* err) {
  out->clear();
  if (!ctx.op) {
    *err = "llm agent: the proposal context has no operator";
    return false;
  }
  std::vector<std::unique_ptr<Turn>> turns;
  std::set<const LlmConversationState*> repairing;

  // Conversations whose last proposal failed continue with the feedback.
  for (const AttemptSummary& attempt : ctx.history) {
    if (!seen_attempts_.insert(attempt.candidate_hash).second) continue;
    auto it = conversation_of_.find(attempt.candidate_hash);
    if (it == conversation_of_.end() || !NeedsRepair(attempt.outcome)) continue;
    auto state = it->second;
    if (state->repairs >= opts.max_repair_turns || static_cast<int>(turns.size()) >= ctx.max_candidates ||
        !repairing.insert(state.get()).second) {
      continue;
    }
    std::string text;
    if (!prompts.Render("repair.md", RepairVariables(attempt, opts), &text, err)) return false;
    state->conv.messages.push_back({"user", text});
    state->repairs++;
    turns.push_back(std::make_unique<Turn>(Turn{state, "repair"}));
  }

  // Fresh conversations fill the remaining slots.
  int fresh = std::max(0, ctx.max_candidates - static_cast<int>(turns.size()));
  for (int i = 0; i < fresh; ++i) {
    TemplateVars vars = ProposeVariables(ctx, opts, prompts, i + 1, fresh);
    auto state = std::make_shared<LlmConversationState>();
    std::string text;
    if (!prompts.Render("system.md", vars, &state->conv.system, err) || !prompts.Render("propose.md", vars, &text, err)) {
      return false;
    }
    state->conv.messages.push_back({"user", text});
    turns.push_back(std::make_unique<Turn>(Turn{state, "propose"}));
  }

  std::set<std::string> tried;
  for (const auto& a : ctx.history) tried.insert(a.candidate_hash);
  std::string first_error, fatal_error;
  std::vector<Turn*> pending;
  for (auto& t : turns) pending.push_back(t.get());

  while (!pending.empty()) {
    spdlog::info("llm: {} request(s) to {} at {}", pending.size(), opts.model, base_url);
    RunAll(pending);
    std::vector<Turn*> next;
    for (Turn* t : pending) {
      if (t->sent && recorder) recorder->Record(t->exchange);
      if (t->sent) {
        spdlog::debug("llm: {} exchange: status {}, {} + {} tokens, ${:.4f}, {:.2f} s", t->purpose,
                      t->exchange.status, t->exchange.input_tokens, t->exchange.output_tokens, t->exchange.cost_usd,
                      t->exchange.latency_s);
      }
      if (!t->ok) {
        spdlog::warn("llm: {}", t->error);
        std::string& slot = t->fatal ? fatal_error : first_error;
        if (slot.empty()) slot = t->error;
        continue;
      }
      auto& state = t->state;
      state->conv.messages.push_back({"assistant", t->reply.text});
      Proposal proposal;
      std::string problem;
      if (ParseReplyCandidate(t->reply.text, *ctx.op, &proposal, &problem)) {
        std::string hash = CandidateHash(proposal.candidate.source, proposal.params);
        if (tried.insert(hash).second) {
          conversation_of_[hash] = state;
          out->push_back(std::move(proposal));
          continue;
        }
        problem = "this candidate is identical to one already tried in this run; propose a different kernel";
      } else if (provider->StoppedAtTokenLimit(t->reply.stop_reason)) {
        problem += fmt::format(" (the reply stopped at the output limit of {} tokens: be more concise)",
                               opts.max_output_tokens);
      }
      if (state->repairs >= opts.max_repair_turns) {
        spdlog::warn("llm: reply dropped after {} repair turn(s): {}", state->repairs, problem);
        if (first_error.empty()) {
          first_error = fmt::format("no usable candidate after {} repair turn(s): {}", state->repairs, problem);
        }
        continue;
      }
      std::string text;
      if (!prompts.Render("format_repair.md", FormatRepairVariables(problem, opts), &text, err)) return false;
      state->conv.messages.push_back({"user", text});
      state->repairs++;
      turns.push_back(std::make_unique<Turn>(Turn{state, "format_repair"}));
      next.push_back(turns.back().get());
    }
    if (!fatal_error.empty()) break;
    pending = std::move(next);
  }

  LlmSpend spent = Spent();
  spdlog::info("llm: {} proposal(s); spent so far {} request(s), {} + {} tokens, ${:.4f}", out->size(), spent.requests,
               spent.input_tokens, spent.output_tokens, spent.cost_usd);
  if (out->empty() && !(fatal_error.empty() && first_error.empty())) {
    *err = fatal_error.empty() ? first_error : fatal_error;
    return false;
  }
  return true;
}

LlmAgent::LlmAgent(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LlmAgent::~LlmAgent() = default;

std::unique_ptr<LlmAgent> LlmAgent::Create(const LlmOptions& opts, ExchangeRecorder* recorder, std::string* err) {
  auto impl = std::make_unique<Impl>();
  if (!impl->Init(opts, recorder, /*need_key=*/true, err)) return nullptr;
  return std::unique_ptr<LlmAgent>(new LlmAgent(std::move(impl)));
}

bool LlmAgent::Propose(const ProposalContext& ctx, std::vector<Proposal>* out, std::string* err) {
  return impl_->Propose(ctx, out, err);
}

LlmSpend LlmAgent::Spent() const { return impl_->Spent(); }

}  // namespace forgek
