// One HTTP POST over libcurl: bounded response body, connect/total/low-speed limits, a deadline and an
// abort flag, lower-cased headers.
#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>

#include "forgek/core/url_text.h"
#include "forgek/agent/http.h"

namespace forgek {
namespace {

void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

using Clock = std::chrono::steady_clock;

struct Transfer {
  HttpResponse* resp = nullptr;
  size_t max_bytes = 0;
  bool too_large = false;
  // Low-speed watch: bytes (headers and body) received, and the window they are counted over.
  const HttpLimits* limits = nullptr;
  size_t received = 0;
  bool started = false;
  Clock::time_point window_start;
  size_t window_bytes = 0;
  HttpFailure stopped = HttpFailure::none;  // why the progress callback ended the transfer

  void Received(size_t n) {
    if (!started) {
      started = true;
      window_start = Clock::now();
    }
    received += n;
  }
};

// Called by curl about once a second even while idle, and on every chunk.
int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  const HttpLimits& limits = *t->limits;
  if (limits.abort && limits.abort()) {
    t->stopped = HttpFailure::aborted;
    return 1;
  }
  Clock::time_point now = Clock::now();
  if (limits.deadline && now >= *limits.deadline) {
    t->stopped = HttpFailure::deadline;
    return 1;
  }
  if (t->started && limits.low_speed_time_s > 0 &&
      now - t->window_start >= std::chrono::duration<double>(limits.low_speed_time_s)) {
    double rate = static_cast<double>(t->received - t->window_bytes) / limits.low_speed_time_s;
    if (rate < limits.low_speed_bytes_per_s) {
      t->stopped = HttpFailure::timeout;
      return 1;
    }
    t->window_start = now;
    t->window_bytes = t->received;
  }
  return 0;
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t n = size * count;
  t->Received(n);
  if (t->resp->body.size() + n > t->max_bytes) {
    t->too_large = true;
    return 0;  // curl aborts the transfer with CURLE_WRITE_ERROR
  }
  t->resp->body.append(data, n);
  return n;
}

std::string Trim(std::string s) {
  auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  while (!s.empty() && space(s.back())) s.pop_back();
  size_t i = 0;
  while (i < s.size() && space(s[i])) ++i;
  return s.substr(i);
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t n = size * count;
  t->Received(n);
  std::string line(data, n);
  if (line.rfind("HTTP/", 0) == 0) {
    t->resp->headers.clear();  // a new response (after 100 Continue): forget the previous headers
    return n;
  }
  size_t colon = line.find(':');
  if (colon == std::string::npos) return n;
  std::string name = Trim(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  t->resp->headers[name] = Trim(line.substr(colon + 1));
  return n;
}

HttpFailure Classify(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return HttpFailure::connect;
    case CURLE_OPERATION_TIMEDOUT:
      return HttpFailure::timeout;
    case CURLE_FILESIZE_EXCEEDED:
      return HttpFailure::too_large;
    default:
      return HttpFailure::other;
  }
}

// A redirect is not followed (it would send the key to wherever it points), and callers report a
// refused request by quoting its body, which a redirect usually leaves empty ("request refused
// (HTTP 307 ...): " and nothing more). Where it pointed, its query values masked like every URL
// forgek prints, goes before the body, so the report says where the API moved.
void DescribeRedirect(HttpResponse* resp) {
  auto location = resp->headers.find("location");
  std::string note = location == resp->headers.end() || location->second.empty()
                         ? "redirected, without a Location header; not followed"
                         : "redirected to " + RedactUrl(location->second) +
                               "; not followed (a redirect would send the API key there): if that is the API, "
                               "give it as the base URL";
  resp->body = resp->body.empty() ? note : note + "; the response said: " + resp->body;
}

}  // namespace

bool HttpPost(const HttpRequest& req, const HttpLimits& limits, HttpResponse* resp, HttpFailure* failure,
              std::string* err) {
  InitCurlOnce();
  // Messages name the URL without its user:password or query values, which may be secrets.
  const std::string shown_url = RedactUrl(req.url);
  *resp = HttpResponse{};
  *failure = HttpFailure::none;
  // The request's own limit, shortened to what is left before the deadline.
  double total_s = limits.total_timeout_s;
  bool deadline_bound = false;  // the deadline, not total_timeout_s, sets curl's timeout
  if (limits.deadline) {
    double left = std::chrono::duration<double>(*limits.deadline - Clock::now()).count();
    if (left <= 0) {
      *failure = HttpFailure::deadline;
      *err = "POST " + shown_url + ": not sent: the run's time budget is spent";
      return false;
    }
    deadline_bound = left < total_s;
    total_s = std::min(total_s, left);
  }
  if (limits.abort && limits.abort()) {
    *failure = HttpFailure::aborted;
    *err = "POST " + shown_url + ": not sent: interrupted";
    return false;
  }
  CURL* curl = curl_easy_init();
  if (!curl) {
    *failure = HttpFailure::other;
    *err = "POST " + shown_url + ": cannot create a curl handle";
    return false;
  }
  curl_slist* headers = nullptr;
  for (const auto& [name, value] : req.headers) headers = curl_slist_append(headers, (name + ": " + value).c_str());
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip for large prompts

  Transfer transfer;
  transfer.resp = resp;
  transfer.max_bytes = limits.max_response_bytes;
  transfer.limits = &limits;
  char curl_error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, req.body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_error);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM: we run on several threads
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(limits.connect_timeout_s * 1000));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, std::max(1L, static_cast<long>(std::ceil(total_s * 1000))));
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(limits.max_response_bytes));
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // gzip if offered; the cap applies after decoding
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);   // a redirect would resend the key elsewhere

  CURLcode code = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);

  if (transfer.too_large || code == CURLE_FILESIZE_EXCEEDED) {
    *failure = HttpFailure::too_large;
    *err = "POST " + shown_url + ": response body exceeds the limit of " + std::to_string(limits.max_response_bytes) +
           " bytes";
    resp->body.clear();
    return false;
  }
  if (code == CURLE_ABORTED_BY_CALLBACK && transfer.stopped != HttpFailure::none) {
    *failure = transfer.stopped;
    resp->body.clear();
    if (transfer.stopped == HttpFailure::aborted) {
      *err = "POST " + shown_url + ": interrupted";
    } else if (transfer.stopped == HttpFailure::deadline) {
      *err = "POST " + shown_url + ": cut at the run's time budget";
    } else {
      *err = fmt::format("POST {}: stalled: the response arrived slower than {:g} bytes/s over {:g} s", shown_url,
                         limits.low_speed_bytes_per_s, limits.low_speed_time_s);
    }
    return false;
  }
  if (code == CURLE_OPERATION_TIMEDOUT && deadline_bound) {
    // curl may fire a millisecond early; the caller's budget check must see the deadline passed.
    std::this_thread::sleep_until(*limits.deadline);
    *failure = HttpFailure::deadline;
    *err = "POST " + shown_url + ": cut at the run's time budget";
    resp->body.clear();
    return false;
  }
  if (code != CURLE_OK) {
    *failure = Classify(code);
    std::string why = curl_error[0] ? curl_error : curl_easy_strerror(code);
    if (*failure == HttpFailure::timeout) {
      why = fmt::format("timed out (connect limit {:g} s, total limit {:g} s): {}", limits.connect_timeout_s,
                        limits.total_timeout_s, why);
    }
    *err = "POST " + shown_url + ": " + why;
    return false;
  }
  resp->status = status;
  if (status >= 300 && status < 400) DescribeRedirect(resp);
  return true;
}

}  // namespace forgek
