// LLM exchanges as JSON, for the store and for replay files.
#include <nlohmann/json.hpp>

#include "forgek/core/json_parse.h"
#include "forgek/agent/llm.h"

namespace forgek {

using nlohmann::json;

std::string LlmExchangeToJson(const LlmExchange& x) {
  json headers = json::array();
  for (const auto& [name, value] : x.request_headers) headers.push_back({name, value});
  json j = {{"provider", x.provider},
            {"model", x.model},
            {"url", x.url},
            {"purpose", x.purpose},
            {"request_headers", headers},
            {"request_body", x.request_body},
            {"status", x.status},
            {"response_body", x.response_body},
            {"error", x.error},
            {"attempts", x.attempts},
            {"input_tokens", x.input_tokens},
            {"output_tokens", x.output_tokens},
            {"usage_estimated", x.usage_estimated},
            {"cost_usd", x.cost_usd},
            {"latency_s", x.latency_s},
            {"started_unix_ms", x.started_unix_ms},
            {"finished_unix_ms", x.finished_unix_ms}};
  // Bodies may hold arbitrary bytes (a broken reply): never throw on invalid UTF-8.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool LlmExchangeFromJson(const std::string& text, LlmExchange* out, std::string* err) {
  json j;
  JsonParseError parse_error;
  if (!ParseJsonLimited(text, &j, &parse_error)) {
    *err = "exchange: " + parse_error.message;
    return false;
  }
  if (!j.is_object()) {
    *err = "exchange: not a JSON object";
    return false;
  }
  LlmExchange x;
  try {
    x.provider = j.at("provider").get<std::string>();
    x.model = j.at("model").get<std::string>();
    x.url = j.value("url", "");
    x.purpose = j.value("purpose", "");
    for (const auto& h : j.value("request_headers", json::array())) {
      x.request_headers.emplace_back(h.at(0).get<std::string>(), h.at(1).get<std::string>());
    }
    x.request_body = j.value("request_body", "");
    x.status = j.value("status", 0L);
    x.response_body = j.value("response_body", "");
    x.error = j.value("error", "");
    x.attempts = j.value("attempts", 0);
    x.input_tokens = j.value("input_tokens", int64_t{0});
    x.output_tokens = j.value("output_tokens", int64_t{0});
    x.usage_estimated = j.value("usage_estimated", false);
    x.cost_usd = j.value("cost_usd", 0.0);
    x.latency_s = j.value("latency_s", 0.0);
    x.started_unix_ms = j.value("started_unix_ms", int64_t{0});
    x.finished_unix_ms = j.value("finished_unix_ms", int64_t{0});
  } catch (const json::exception& e) {
    *err = std::string("exchange: ") + e.what();
    return false;
  }
  *out = std::move(x);
  return true;
}

}  // namespace forgek
