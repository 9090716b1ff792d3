// The agent of a run, built from its choice; LLM exchanges recorded in the store for replay.
#include "forgek/run/agent_factory.h"

#include <spdlog/spdlog.h>

#include "forgek/agent/builtin_agent.h"

namespace forgek {

void StoreExchangeRecorder::SetRun(const std::string& run_id) {
  run_id_ = run_id;
  for (const LlmExchange& x : pending_) Write(x);
  pending_.clear();
}

void StoreExchangeRecorder::Record(const LlmExchange& x) {
  if (run_id_.empty())
    pending_.push_back(x);
  else
    Write(x);
}

void StoreExchangeRecorder::Write(const LlmExchange& x) {
  if (!store_) return;
  ExchangeRecord rec;
  rec.run_id = run_id_;
  rec.iteration = iteration_;
  rec.turn = x.purpose == "propose" ? 0 : 1;
  rec.provider = x.provider;
  rec.model = x.model;
  rec.request_json = LlmExchangeToJson(x);  // the whole exchange (headers redacted) for replay
  rec.response_json = x.response_body;
  rec.http_status = static_cast<int>(x.status);
  rec.prompt_tokens = x.input_tokens;
  rec.completion_tokens = x.output_tokens;
  rec.cost_usd = x.cost_usd;
  rec.latency_s = x.latency_s;
  rec.error = x.error;
  std::string err;
  if (!store_->AddExchange(&rec, &err)) spdlog::warn("LLM exchange not recorded: {}", err);
  ++iteration_;
}

std::unique_ptr<Agent> MakeAgent(const AgentChoice& choice, Store* store, ExchangeRecorder* recorder,
                                 std::string* err) {
  if (choice.kind == "builtin") {
    BuiltinAgentOptions o;
    o.seed = choice.seed;
    return std::make_unique<BuiltinAgent>(o);
  }
  if (choice.kind == "llm") return LlmAgent::Create(choice.llm, recorder, err);
  if (choice.kind != "replay") {
    *err = "unknown agent '" + choice.kind + "' (builtin, llm or replay)";
    return nullptr;
  }
  const std::string& from = choice.replay_from;
  if (!store) {
    *err = "--agent replay needs the knowledge store that holds run " + from;
    return nullptr;
  }
  std::vector<ExchangeRecord> records;
  if (!store->ListExchanges(from, &records, err)) return nullptr;
  if (records.empty()) {
    *err = "run " + from + " has no recorded LLM exchanges to replay";
    return nullptr;
  }
  std::vector<LlmExchange> exchanges;
  for (const ExchangeRecord& r : records) {
    LlmExchange x;
    if (!LlmExchangeFromJson(r.request_json, &x, err)) {
      *err = "exchange " + r.id + " of run " + from + " cannot be replayed: " + *err;
      return nullptr;
    }
    exchanges.push_back(std::move(x));
  }
  LlmOptions o = choice.llm;
  if (o.model.empty()) o.model = exchanges.front().model;
  return ReplayAgent::Create(o, std::move(exchanges), recorder, err);
}

}  // namespace forgek
