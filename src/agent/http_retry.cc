// Retries of an HTTP POST: which failures are transient, how long to wait, Retry-After headers.
#include <curl/curl.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>

#include "forgek/core/url_text.h"
#include "forgek/agent/http.h"

namespace forgek {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// A plain non-negative decimal number ("1", "0.25"); false for anything else (an HTTP date).
bool ParseSeconds(const std::string& text, double* out) {
  if (text.empty()) return false;
  size_t used = 0;
  try {
    *out = std::stod(text, &used);
  } catch (...) {
    return false;
  }
  return used == text.size() && std::isfinite(*out);
}

double NowUnixSeconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

double UnitRandom() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

const char* FailureName(HttpFailure f) {
  switch (f) {
    case HttpFailure::connect: return "connection error";
    case HttpFailure::timeout: return "timeout";
    case HttpFailure::too_large: return "oversized response";
    case HttpFailure::aborted: return "interrupted";
    case HttpFailure::deadline: return "time budget spent";
    case HttpFailure::other: return "transport error";
    case HttpFailure::none: break;
  }
  return "no failure";
}

}  // namespace

std::optional<double> RetryAfterSeconds(const std::map<std::string, std::string>& headers, double now_unix_s) {
  double value = 0;
  if (auto it = headers.find("retry-after-ms"); it != headers.end() && ParseSeconds(it->second, &value)) {
    if (value > 0) return value / 1000.0;
  }
  auto it = headers.find("retry-after");
  if (it == headers.end()) return std::nullopt;
  if (ParseSeconds(it->second, &value)) return value > 0 ? std::optional<double>(value) : std::nullopt;
  time_t date = curl_getdate(it->second.c_str(), nullptr);
  if (date < 0) return std::nullopt;
  double wait = static_cast<double>(date) - now_unix_s;
  return wait > 0 ? std::optional<double>(wait) : std::nullopt;
}

bool IsQuotaExhausted(const HttpResponse& resp) {
  if (resp.status != 429) return false;
  std::string body = Lower(resp.body);
  for (const char* word : {"insufficient_quota", "billing", "credit", "exceeded your current quota"}) {
    if (body.find(word) != std::string::npos) return true;
  }
  return false;
}

bool IsRetryableStatus(const HttpResponse& resp) {
  if (auto it = resp.headers.find("x-should-retry"); it != resp.headers.end()) {
    std::string v = Lower(it->second);
    if (v == "true") return true;
    if (v == "false") return false;
  }
  if (resp.status == 408 || resp.status == 409) return true;
  if (resp.status == 429) return !IsQuotaExhausted(resp);
  return resp.status >= 500 && resp.status <= 599;
}

double BackoffSeconds(const RetryPolicy& policy, int retry, double unit_random) {
  double delay = std::min(policy.base_delay_s * std::pow(2.0, retry), policy.max_delay_s);
  return delay * (1.0 - 0.25 * unit_random);
}

HttpOutcome HttpPostWithRetries(const HttpRequest& req, const HttpLimits& limits, const RetryPolicy& policy) {
  HttpOutcome out;
  const std::string shown_url = RedactUrl(req.url);  // never the user:password or query values
  for (int retry = 0;; ++retry) {
    ++out.attempts;
    out.error.clear();
    out.responded = HttpPost(req, limits, &out.response, &out.failure, &out.error);
    bool transient = out.responded ? IsRetryableStatus(out.response)
                                   : (out.failure == HttpFailure::connect || out.failure == HttpFailure::timeout);
    if ((out.responded && out.response.status < 300) || !transient || retry >= policy.max_retries) return out;

    double wait = BackoffSeconds(policy, retry, UnitRandom());
    if (out.responded) {
      auto asked = RetryAfterSeconds(out.response.headers, NowUnixSeconds());
      if (asked && *asked <= policy.max_retry_after_s) wait = *asked;
    }
    std::string why = out.responded ? "HTTP " + std::to_string(out.response.status) : FailureName(out.failure);
    auto wake = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                        std::chrono::duration<double>(wait));
    if (limits.deadline && wake >= *limits.deadline) {
      spdlog::warn("POST {}: {}; no retry: the run's time budget ends before the next attempt", shown_url, why);
      return out;
    }
    spdlog::warn("POST {}: {}; retry {}/{} in {:.2f} s", shown_url, why, retry + 1, policy.max_retries, wait);
    // The wait is cut short by an abort (Ctrl-C), checked every 50 ms.
    while (std::chrono::steady_clock::now() < wake) {
      if (limits.abort && limits.abort()) {
        out.responded = false;
        out.failure = HttpFailure::aborted;
        out.error = "POST " + shown_url + ": interrupted while waiting to retry";
        return out;
      }
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          wake - std::chrono::steady_clock::now(), std::chrono::milliseconds(50)));
    }
  }
}

}  // namespace forgek
