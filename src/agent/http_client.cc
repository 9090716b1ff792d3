// One HTTP POST over libcurl: bounded response body, connect and total timeouts, lower-cased headers.
#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <mutex>

#include "forgek/http.h"

namespace forgek {
namespace {

void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  HttpResponse* resp = nullptr;
  size_t max_bytes = 0;
  bool too_large = false;
};

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t n = size * count;
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

}  // namespace

bool HttpPost(const HttpRequest& req, const HttpLimits& limits, HttpResponse* resp, HttpFailure* failure,
              std::string* err) {
  InitCurlOnce();
  *resp = HttpResponse{};
  *failure = HttpFailure::none;
  CURL* curl = curl_easy_init();
  if (!curl) {
    *failure = HttpFailure::other;
    *err = "POST " + req.url + ": cannot create a curl handle";
    return false;
  }
  curl_slist* headers = nullptr;
  for (const auto& [name, value] : req.headers) headers = curl_slist_append(headers, (name + ": " + value).c_str());
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip for large prompts

  Transfer transfer{resp, limits.max_response_bytes, false};
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
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(limits.total_timeout_s * 1000));
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
    *err = "POST " + req.url + ": response body exceeds the limit of " + std::to_string(limits.max_response_bytes) +
           " bytes";
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
    *err = "POST " + req.url + ": " + why;
    return false;
  }
  resp->status = status;
  return true;
}

}  // namespace forgek
