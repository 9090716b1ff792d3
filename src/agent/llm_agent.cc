// The llm agent: conversations per proposal, parallel request rounds, repair turns, budget and records.
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "llm_parents.h"
#include "llm_session.h"
#include "prompt_builder.h"
#include "reply_parser.h"
#include "forgek/core/hash.h"
#include "forgek/core/paths.h"
#include "forgek/core/json_parse.h"
#include "forgek/core/token_count.h"
#include "forgek/core/url_text.h"
#include "forgek/core/utf8_text.h"

namespace forgek {
namespace {

constexpr char kRepeatProblem[] =
    "this candidate is identical to one already tried in this run; propose a different kernel";

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
      opts.max_response_bytes == 0 || opts.max_output_tokens < 1 || opts.retry_base_delay_s < 0 ||
      opts.max_cost_usd < 0 || opts.max_tokens < 0 || opts.max_feedback_turns < 0 || opts.parents < 0 ||
      opts.conversation_tokens == 0) {
    *err = "llm agent: an option is out of range (in-flight >= 1, retries/repairs/caps >= 0, timeouts and limits > 0)";
    return false;
  }
  if (!(opts.tune_share >= 0 && opts.tune_share < 1)) {
    *err = fmt::format("llm agent: --tune-share must be at least 0 and below 1, not {}", opts.tune_share);
    return false;
  }
  BuiltinAgentOptions tune;
  tune.seed = opts.tune_seed;
  tune.prior_count = 0;
  tuner_ = std::make_unique<BuiltinAgent>(tune);
  base_url = ResolveLlmBaseUrl(opts);
  key_env = ResolveLlmKeyEnv(opts);
  if (!CheckLlmBaseUrl(base_url, key_env, err)) {
    *err = "llm agent: " + *err;
    return false;
  }
  shown_url = RedactUrl(base_url);
  if (need_key && !ReadKey(err)) return false;
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

bool LlmAgent::Impl::ReadKey(std::string* err) {
  const char* value = std::getenv(key_env.c_str());
  if (!value) {
    *err = "llm agent: environment variable " + key_env + " is not set (the API key is read from the environment only)";
    return false;
  }
  if (!*value) {
    *err = "llm agent: environment variable " + key_env + " is empty: set it to the API key";
    return false;
  }
  key = value;
  // A control character (\r\n) would end the auth header and inject another; a space or a byte
  // beyond ASCII is no key's (a paste gone wrong). The key itself is never quoted in the error.
  auto bad = std::find_if(key.begin(), key.end(), [](unsigned char c) { return c <= 0x20 || c >= 0x7f; });
  if (bad == key.end()) return true;
  unsigned char c = static_cast<unsigned char>(*bad);
  const char* what = c == ' '   ? "a space"
                     : c < 0x20 || c == 0x7f ? "a control character"
                                             : "a byte beyond ASCII";
  *err = fmt::format("llm agent: the API key in {} holds {} (at character {}); an API key is printable ASCII "
                     "without spaces: remove line breaks, spaces and other characters from it",
                     key_env, what, bad - key.begin() + 1);
  key.clear();
  return false;
}

LlmSpend LlmAgent::Impl::Spent() const {
  std::lock_guard<std::mutex> lock(mu_);
  return spent_;
}

StopReason LlmAgent::Impl::BudgetSpent(std::string* why) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (opts.max_cost_usd > 0 && spent_.cost_usd >= opts.max_cost_usd) {
    if (why) {
      *why = fmt::format("LLM budget spent: ${:.4f} of the ${:.4f} cost cap (--max-cost); no further request is sent",
                         spent_.cost_usd, opts.max_cost_usd);
    }
    return StopReason::max_cost;
  }
  int64_t tokens = SaturatingAdd(spent_.input_tokens, spent_.output_tokens);
  if (opts.max_tokens > 0 && tokens >= opts.max_tokens) {
    if (why) {
      *why = fmt::format("LLM budget spent: {} of the {} token cap (--max-tokens); no further request is sent", tokens,
                         opts.max_tokens);
    }
    return StopReason::max_tokens;
  }
  return StopReason::none;
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
  if (BudgetSpent(&turn->error) != StopReason::none) {
    turn->fatal = true;
    return;
  }
  HttpRequest req = provider->BuildRequest(base_url, opts, turn->state->conv, key);
  LlmExchange& x = turn->exchange;
  x.provider = LlmProviderName(opts.provider);
  x.model = opts.model;
  x.url = RedactUrl(req.url);
  x.purpose = turn->purpose;
  for (const auto& [name, value] : req.headers) {
    x.request_headers.emplace_back(name, EqualsIgnoreCase(name, provider->KeyHeader()) ? "[redacted]" : value);
  }
  x.request_body = RedactSecret(req.body, key);
  x.started_unix_ms = NowUnixMs();
  auto start = std::chrono::steady_clock::now();

  HttpOutcome o = send(req);
  // A provider (or a proxy before it) may answer in any encoding: a Latin-1 error page was recorded as
  // it came and then failed every JSON dump (the run's summary, exports, replays). Made valid UTF-8
  // here, before anything parses, quotes, records or prints it; replays of older records pass here too.
  o.response.body = ValidUtf8(o.response.body);
  o.error = ValidUtf8(o.error);

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
    turn->error = StatusError(o.response, x.url, o.attempts);
    turn->fatal = !IsRetryableStatus(o.response);
  } else if (!provider->ParseReply(o.response.body, &turn->reply, &why)) {
    turn->error = fmt::format("malformed response from {} ({}): {}", x.provider, x.url, why);
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
  spent_.input_tokens = SaturatingAdd(spent_.input_tokens, x.input_tokens);
  spent_.output_tokens = SaturatingAdd(spent_.output_tokens, x.output_tokens);
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

namespace {

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 160 ? line.substr(0, 157) + "..." : line;
}

// A tuning round as recorded: [{"family": key, "params": {...}, "rationale": text}, ...].
std::string TunedToRecord(const std::vector<Proposal>& tuned) {
  nlohmann::json j = nlohmann::json::array();
  for (const Proposal& p : tuned) {
    nlohmann::json params = nlohmann::json::object();
    for (const auto& [name, value] : p.params) params[name] = value;
    j.push_back({{"family", p.family}, {"params", params}, {"rationale", p.rationale}});
  }
  return j.dump();
}

bool TunedFromRecord(const std::string& text, const std::vector<Candidate>& families, std::vector<Proposal>* out,
                     std::string* err) {
  nlohmann::json j = ParseJsonLenient(text);
  if (!j.is_array()) {
    *err = "replay: a recorded tuning round is not a JSON array";
    return false;
  }
  for (const nlohmann::json& item : j) {
    if (!item.is_object() || !item.contains("family") || !item["family"].is_string() || !item.contains("params") ||
        !item["params"].is_object()) {
      *err = "replay: a recorded tuning round has an entry without a family name and params";
      return false;
    }
    std::string key = item["family"].get<std::string>();
    auto family = std::find_if(families.begin(), families.end(), [&](const Candidate& f) { return f.path == key; });
    if (family == families.end()) {
      *err = "replay: the recorded tuning round names family " + key + ", which the replayed model did not write";
      return false;
    }
    Proposal p;
    p.candidate = *family;
    p.family = key;
    for (auto it = item["params"].begin(); it != item["params"].end(); ++it) {
      if (!it.value().is_number_integer()) {
        *err = "replay: param " + it.key() + " of a recorded tuning round is not an integer";
        return false;
      }
      p.params[it.key()] = it.value().get<int64_t>();
    }
    if (item.contains("rationale") && item["rationale"].is_string()) p.rationale = item["rationale"].get<std::string>();
    out->push_back(std::move(p));
  }
  return true;
}

size_t ConversationChars(const LlmConversation& c) {
  size_t n = c.system.size();
  for (const LlmMessage& m : c.messages) n += m.content.size();
  return n;
}

}  // namespace

void LlmAgent::Impl::AppendUserTurn(LlmConversationState* state, std::string text) const {
  auto& messages = state->conv.messages;
  // About four characters make a token. The first request (the task) and the latest reply stay.
  int dropped = 0;
  while (messages.size() >= 3 && (ConversationChars(state->conv) + text.size()) / 4 > opts.conversation_tokens) {
    messages.erase(messages.begin() + 1, messages.begin() + 3);
    dropped += 2;
  }
  if (dropped > 0) {
    std::string note = fmt::format("({} earlier messages of this conversation were dropped to stay within its token "
                                   "budget. Your proposals so far:",
                                   dropped);
    for (const std::string& line : state->log) note += "\n- " + line;
    text = note + ")\n\n" + text;
  }
  messages.push_back({"user", std::move(text)});
}

bool LlmAgent::Impl::ProposeTuned(const ProposalContext& ctx, bool whole_round, std::vector<Proposal>* out,
                                  std::string* err) {
  if (opts.tune_share <= 0 || invented_.empty()) return true;
  int tuned = 0;
  for (const AttemptSummary& a : ctx.history) tuned += tuned_.count(a.candidate_hash) ? 1 : 0;
  // Tuned attempts are kept at tune_share of all: n more keep (tuned + n) <= s * (total + n).
  double s = opts.tune_share, total = static_cast<double>(ctx.history.size());
  int slots = static_cast<int>(std::floor((s * total - tuned) / (1 - s) + 1e-9));
  slots = whole_round ? ctx.max_candidates : std::min(slots, ctx.max_candidates);
  if (slots <= 0) return true;
  ProposalContext tune_ctx;
  tune_ctx.op = ctx.op;
  tune_ctx.arch = ctx.arch;
  tune_ctx.hardware = ctx.hardware;
  tune_ctx.history = ctx.history;
  tune_ctx.families = invented_;
  tune_ctx.max_candidates = slots;
  LlmExchange recorded;
  if (recorded_tune && recorded_tune(&recorded)) {
    if (!TunedFromRecord(recorded.response_body, invented_, out, err)) return false;
  } else if (!tuner_->Propose(tune_ctx, out, err)) {
    return false;
  }
  if (recorder && !out->empty()) {
    // The round is recorded among the exchanges (no request, no cost) for replay.
    LlmExchange x;
    x.provider = LlmProviderName(opts.provider);
    x.model = opts.model;
    x.purpose = "tune";
    x.status = 200;
    x.response_body = TunedToRecord(*out);
    x.started_unix_ms = x.finished_unix_ms = NowUnixMs();
    recorder->Record(x);
  }
  for (Proposal& p : *out) {
    // The parent is the family's best instance so far (its first when none was timed).
    const AttemptSummary* parent = nullptr;
    for (const AttemptSummary& a : ctx.history) {
      if (a.family != p.family) continue;
      if (!parent || (OutcomeTimed(a.outcome) && a.geomean_speedup > parent->geomean_speedup)) parent = &a;
    }
    if (parent) p.parent = parent->candidate_hash;
    p.rationale = "search of the model's family: " + p.rationale;
    p.change = p.rationale;
    tuned_.insert(CandidateHash(p.candidate.source, p.params));
  }
  if (!out->empty()) spdlog::info("llm: {} instance(s) of the model's families from the search", out->size());
  return true;
}

bool LlmAgent::Impl::Propose(const ProposalContext& ctx, std::vector<Proposal>* out, std::string* err) {
  out->clear();
  if (!ctx.op) {
    *err = "llm agent: the proposal context has no operator";
    return false;
  }
  // A model with nothing new is not asked again: its families are tuned for the rest of the run.
  if (out_of_ideas_) {
    if (!ProposeTuned(ctx, /*whole_round=*/true, out, err)) return false;
    if (out->empty()) note_ = out_of_ideas_when_ + ": the search tuned the families it wrote until none had an "
                                                    "untried instance";
    return true;
  }
  // The search tunes the model's families first, while their share of the run is below tune_share.
  if (!ProposeTuned(ctx, /*whole_round=*/false, out, err)) return false;
  if (!out->empty()) return true;

  std::vector<std::unique_ptr<Turn>> turns;

  // Conversations whose proposal was evaluated hear what happened: failures first (they need a
  // fix), then the fastest; a slot stays free for a fresh conversation when the batch has two.
  struct Continuation {
    const AttemptSummary* attempt;
    std::shared_ptr<LlmConversationState> state;
  };
  std::vector<Continuation> continuations;
  for (const AttemptSummary& attempt : ctx.history) {
    if (!seen_attempts_.insert(attempt.candidate_hash).second) continue;
    auto it = conversation_of_.find(attempt.candidate_hash);
    if (it == conversation_of_.end() || !(NeedsRepair(attempt.outcome) || OutcomeTimed(attempt.outcome))) continue;
    it->second->log.push_back(fmt::format("attempt {}: {}{}", attempt.iteration + 1, OutcomeName(attempt.outcome),
                                          OutcomeTimed(attempt.outcome)
                                              ? fmt::format(" {:.3f}x", attempt.geomean_speedup)
                                              : std::string()));
    if (it->second->feedback_turns >= opts.max_feedback_turns) continue;
    continuations.push_back({&attempt, it->second});
  }
  std::stable_sort(continuations.begin(), continuations.end(), [](const Continuation& x, const Continuation& y) {
    bool fx = NeedsRepair(x.attempt->outcome), fy = NeedsRepair(y.attempt->outcome);
    if (fx != fy) return fx;
    return x.attempt->geomean_speedup > y.attempt->geomean_speedup;
  });
  const int continue_slots = ctx.max_candidates > 1 ? ctx.max_candidates - 1 : 1;
  std::set<const LlmConversationState*> continuing;
  for (const Continuation& c : continuations) {
    if (static_cast<int>(turns.size()) >= continue_slots || !continuing.insert(c.state.get()).second) continue;
    const bool failed = NeedsRepair(c.attempt->outcome);
    std::string text;
    if (failed ? !prompts.Render("repair.md", RepairVariables(*c.attempt, opts), &text, err)
               : !prompts.Render("feedback.md", FeedbackVariables(*c.attempt, ctx, opts), &text, err))
      return false;
    AppendUserTurn(c.state.get(), std::move(text));
    c.state->feedback_turns++;
    c.state->parent = c.attempt->candidate_hash;
    turns.push_back(std::make_unique<Turn>(Turn{c.state, failed ? "repair" : "feedback"}));
  }

  // Fresh conversations fill the remaining slots, each with parents chosen by the rule.
  std::vector<ParentProgram> population = ParentPopulation(ctx);
  int fresh = std::max(0, ctx.max_candidates - static_cast<int>(turns.size()));
  for (int i = 0; i < fresh; ++i) {
    ParentChoice choice = ChooseParents(population, fresh_conversations_++, opts.parents);
    TemplateVars vars = ProposeVariables(ctx, opts, prompts, i + 1, fresh, choice);
    auto state = std::make_shared<LlmConversationState>();
    if (!choice.new_architecture && !choice.parents.empty()) state->parent = choice.parents.front()->hash;
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
  // Replies dropped only because they repeated kernels already tried: the model has nothing new
  // to offer, which ends the run as exhausted, not as a failure.
  int failed_turns = 0, dropped = 0, dropped_as_repeats = 0;
  std::vector<Turn*> pending;
  for (auto& t : turns) pending.push_back(t.get());

  while (!pending.empty()) {
    spdlog::info("llm: {} request(s) to {} at {}", pending.size(), opts.model, shown_url);
    RunAll(pending);
    std::vector<Turn*> next;
    for (Turn* t : pending) {
      if (t->sent && recorder) recorder->Record(t->exchange);
      if (t->sent) {
        spdlog::debug("llm: {} exchange: status {}, {} + {} tokens, ${:.4f}, {:.2f} s", t->purpose,
                      t->exchange.status, t->exchange.input_tokens, t->exchange.output_tokens, t->exchange.cost_usd,
                      t->exchange.latency_s);
        t->state->pending_cost += t->exchange.cost_usd;
        t->state->pending_tokens = SaturatingAdd(
            t->state->pending_tokens, SaturatingAdd(t->exchange.input_tokens, t->exchange.output_tokens));
      }
      if (!t->ok) {
        spdlog::warn("llm: {}", t->error);
        ++failed_turns;
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
          proposal.parent = state->parent;
          proposal.change = FirstLine(proposal.rationale);
          proposal.cost_usd = state->pending_cost;
          proposal.tokens = state->pending_tokens;
          state->pending_cost = 0;
          state->pending_tokens = 0;
          if (!proposal.family.empty() &&
              std::none_of(invented_.begin(), invented_.end(),
                           [&](const Candidate& f) { return f.path == proposal.family; })) {
            Candidate family = proposal.candidate;
            family.path = proposal.family;
            invented_.push_back(std::move(family));
            spdlog::info("llm: the model wrote family {}; the search tunes it", proposal.family);
          }
          out->push_back(std::move(proposal));
          continue;
        }
        problem = std::string(kRepeatProblem);
      } else if (provider->StoppedAtTokenLimit(t->reply.stop_reason)) {
        problem += fmt::format(" (the reply stopped at the output limit of {} tokens: be more concise)",
                               opts.max_output_tokens);
      }
      if (state->repairs >= opts.max_repair_turns) {
        spdlog::warn("llm: reply dropped after {} repair turn(s): {}", state->repairs, problem);
        ++dropped;
        if (problem == kRepeatProblem) ++dropped_as_repeats;
        if (first_error.empty()) {
          first_error = fmt::format("no usable candidate after {} repair turn(s): {}", state->repairs, problem);
        }
        continue;
      }
      std::string text;
      if (!prompts.Render("format_repair.md", FormatRepairVariables(problem, opts), &text, err)) return false;
      AppendUserTurn(state.get(), std::move(text));
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
  if (out->empty() && failed_turns == 0 && dropped > 0 && dropped == dropped_as_repeats) {
    spdlog::warn("llm: every reply repeated a kernel already tried, through {} repair turn(s): nothing new to offer",
                 opts.max_repair_turns);
    return OutOfIdeas(ctx, out, err);
  }
  if (out->empty() && !(fatal_error.empty() && first_error.empty())) {
    *err = fatal_error.empty() ? first_error : fatal_error;
    return false;
  }
  return true;
}

bool LlmAgent::Impl::OutOfIdeas(const ProposalContext& ctx, std::vector<Proposal>* out, std::string* err) {
  out_of_ideas_ = true;
  out_of_ideas_when_ = fmt::format("the model had nothing new after attempt {} (every reply repeated a kernel "
                                   "already tried)",
                                   ctx.history.size());
  const std::string& when = out_of_ideas_when_;
  // The families it wrote may still have instances the search has not tried: the rest of the
  // budget goes to them rather than ending the run early.
  if (!ProposeTuned(ctx, /*whole_round=*/true, out, err)) return false;
  if (out->empty()) {
    note_ = when + (opts.tune_share <= 0 ? std::string(" and tuning is off (--tune-share 0)")
                    : invented_.empty()    ? std::string(" and wrote no family the search could tune")
                                           : std::string(" and its families have no untried instance"));
  } else {
    note_ = when + ": the search tunes the families it wrote for the rest of the run";
  }
  spdlog::info("llm: {}", note_);
  return true;  // an empty proposal list: the run ends as exhausted
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

StopReason LlmAgent::BudgetSpent() const { return impl_->BudgetSpent(nullptr); }

std::string LlmAgent::Note() const { return impl_->Note(); }

}  // namespace forgek
