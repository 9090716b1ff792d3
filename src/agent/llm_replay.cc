// The replay agent: the llm agent's engine with recorded responses in place of the network.
#include <spdlog/spdlog.h>

#include "llm_session.h"
#include "forgek/core/url_text.h"

namespace forgek {

struct ReplayAgent::State {
  std::vector<LlmExchange> exchanges;
  size_t next = 0;
};

ReplayAgent::ReplayAgent(std::unique_ptr<LlmAgent::Impl> impl, std::shared_ptr<State> state)
    : impl_(std::move(impl)), state_(std::move(state)) {}
ReplayAgent::~ReplayAgent() = default;

std::unique_ptr<ReplayAgent> ReplayAgent::Create(const LlmOptions& opts, std::vector<LlmExchange> exchanges,
                                                 ExchangeRecorder* recorder, std::string* err) {
  LlmOptions replay_opts = opts;
  if (!exchanges.empty()) {
    const LlmExchange& first = exchanges.front();
    if (replay_opts.model.empty()) replay_opts.model = first.model;
    LlmProviderKind kind;
    if (ParseLlmProvider(first.provider, &kind)) replay_opts.provider = kind;
  }
  if (replay_opts.model.empty()) {
    *err = "replay agent: no recorded exchanges and no model given";
    return nullptr;
  }
  if (replay_opts.base_url.empty() && !exchanges.empty()) {
    // The recorded URL minus its endpoint (its query kept), so that replayed requests name the same
    // place. A recording from before URLs were masked may hold a user:password: not reused.
    const std::string& url = exchanges.front().url;
    size_t query = url.find_first_of("?#");
    std::string path = url.substr(0, query);
    for (const char* endpoint : {"/chat/completions", "/v1/messages"}) {
      size_t at = path.rfind(endpoint);
      if (at != std::string::npos && at + std::string(endpoint).size() == path.size() && !UrlHasUserinfo(url)) {
        replay_opts.base_url = path.substr(0, at) + (query == std::string::npos ? "" : url.substr(query));
      }
    }
  }
  replay_opts.max_in_flight = 1;  // requests in the recorded order
  auto impl = std::make_unique<LlmAgent::Impl>();
  if (!impl->Init(replay_opts, recorder, /*need_key=*/false, err)) return nullptr;

  auto state = std::make_shared<State>();
  state->exchanges = std::move(exchanges);
  impl->recorded_tune = [state](LlmExchange* x) {
    if (state->next >= state->exchanges.size() || state->exchanges[state->next].purpose != "tune") {
      spdlog::warn("replay: the recording holds no tuning round here; the search proposes instead");
      return false;
    }
    *x = state->exchanges[state->next++];
    return true;
  };
  impl->send = [state](const HttpRequest& req) {
    HttpOutcome o;
    while (state->next < state->exchanges.size() && state->exchanges[state->next].purpose == "tune") {
      spdlog::warn("replay: recorded tuning round {} skipped (the replayed run asked the model instead)",
                   state->next + 1);
      ++state->next;
    }
    if (state->next >= state->exchanges.size()) {
      o.failure = HttpFailure::other;
      o.error = "replay: the recording holds no more exchanges (" + std::to_string(state->exchanges.size()) +
                " replayed)";
      return o;
    }
    size_t index = state->next++;
    const LlmExchange& x = state->exchanges[index];
    if (x.request_body != req.body) {
      spdlog::warn("replay: request {} differs from the recorded one (prompts or context changed); "
                   "replaying the recorded response",
                   index + 1);
    }
    o.attempts = x.attempts;
    o.responded = x.status != 0;
    o.response.status = x.status;
    o.response.body = x.response_body;
    o.failure = o.responded ? HttpFailure::none : HttpFailure::other;
    o.error = x.error;
    return o;
  };
  return std::unique_ptr<ReplayAgent>(new ReplayAgent(std::move(impl), std::move(state)));
}

bool ReplayAgent::Propose(const ProposalContext& ctx, std::vector<Proposal>* out, std::string* err) {
  return impl_->Propose(ctx, out, err);
}

LlmSpend ReplayAgent::Spent() const { return impl_->Spent(); }

StopReason ReplayAgent::BudgetSpent() const { return impl_->BudgetSpent(nullptr); }

std::string ReplayAgent::Note() const { return impl_->Note(); }

size_t ReplayAgent::Remaining() const { return state_->exchanges.size() - state_->next; }

}  // namespace forgek
