// HTTP POST over libcurl with bounded bodies, timeouts, and retries with backoff for the LLM agent.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace forgek {

struct HttpRequest {
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  // sent as "name: value"
  std::string body;
};

struct HttpResponse {
  long status = 0;                             // 0 when no response came
  std::map<std::string, std::string> headers;  // names in lower case; the last value wins
  std::string body;
};

struct HttpLimits {
  double connect_timeout_s = 15;
  double total_timeout_s = 600;                // the whole exchange, body included
  size_t max_response_bytes = 8u << 20;         // a longer body fails the request
  // Once the response has started (its first byte), fewer than low_speed_bytes_per_s on average
  // over any low_speed_time_s seconds cuts the request. The wait for the first byte is not
  // counted: a model may think for minutes before it answers (total_timeout_s bounds that).
  double low_speed_bytes_per_s = 16;
  double low_speed_time_s = 30;
  // No request, retry or backoff outlives this point (the run's --time budget).
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Polled during transfers and backoff waits (several times a second): true ends the request.
  std::function<bool()> abort;
};

// Why a POST brought no usable response. Connection problems, timeouts and stalls are worth a
// retry; an oversized body, a malformed URL, an abort or a passed deadline are not.
enum class HttpFailure { none, connect, timeout, too_large, aborted, deadline, other };

// One POST. True when an HTTP response arrived (any status); false with `failure` and `err` when
// none did. `err` names the URL and the cause, never a header value.
bool HttpPost(const HttpRequest& req, const HttpLimits& limits, HttpResponse* resp, HttpFailure* failure,
              std::string* err);

struct RetryPolicy {
  int max_retries = 4;             // retries after the first attempt
  double base_delay_s = 0.5;       // first backoff; doubles with every retry
  double max_delay_s = 30;         // cap of the computed backoff
  double max_retry_after_s = 60;   // a server's Retry-After above this is ignored (backoff instead)
};

// The delay a server asks for: `retry-after-ms` (milliseconds), else `retry-after` (seconds or an
// HTTP date, relative to `now_unix_s`). Empty when absent, unparsable or not positive.
std::optional<double> RetryAfterSeconds(const std::map<std::string, std::string>& headers, double now_unix_s);

// A 429 that no waiting cures: the account's quota, billing or credit is exhausted.
bool IsQuotaExhausted(const HttpResponse& resp);

// Whether a response is worth another attempt: 408, 409, 429 (unless quota), 5xx (529 included),
// overridden by an `x-should-retry: true|false` header.
bool IsRetryableStatus(const HttpResponse& resp);

// The backoff before retry number `retry` (0-based): base * 2^retry capped at max, minus up to
// 25% jitter drawn from `unit_random` in [0, 1).
double BackoffSeconds(const RetryPolicy& policy, int retry, double unit_random);

struct HttpOutcome {
  bool responded = false;          // an HTTP response is in `response` (any status)
  HttpResponse response;
  HttpFailure failure = HttpFailure::none;
  std::string error;               // when !responded
  int attempts = 0;                // requests sent, retries included
};

// HttpPost with retries per `policy` on connection errors, timeouts and retryable statuses,
// honouring Retry-After. Returns the last outcome; never retries 4xx other than 408/409/429.
HttpOutcome HttpPostWithRetries(const HttpRequest& req, const HttpLimits& limits, const RetryPolicy& policy);

}  // namespace forgek
