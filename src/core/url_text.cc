// URL helpers: userinfo detection, masking of secrets for printing, endpoint paths before the query.
#include "forgek/core/url_text.h"

namespace forgek {
namespace {

// Where the authority (host part) of `url` starts and ends; npos start when there is no scheme.
void Authority(const std::string& url, size_t* begin, size_t* end) {
  size_t scheme = url.find("://");
  if (scheme == std::string::npos) {
    *begin = *end = std::string::npos;
    return;
  }
  *begin = scheme + 3;
  *end = url.find_first_of("/?#", *begin);
  if (*end == std::string::npos) *end = url.size();
}

}  // namespace

bool UrlHasUserinfo(const std::string& url) {
  size_t begin = 0, end = 0;
  Authority(url, &begin, &end);
  return begin != std::string::npos && url.find('@', begin) < end;
}

std::string RedactUrl(const std::string& url) {
  size_t begin = 0, end = 0;
  Authority(url, &begin, &end);
  std::string out;
  size_t rest = 0;
  if (begin != std::string::npos) {
    size_t at = url.rfind('@', end == 0 ? 0 : end - 1);
    out = url.substr(0, begin);
    if (at != std::string::npos && at >= begin && at < end) {
      out += "***@";
      out += url.substr(at + 1, end - at - 1);
    } else {
      out += url.substr(begin, end - begin);
    }
    rest = end;
  }
  size_t query = url.find_first_of("?#", rest);
  out += url.substr(rest, query == std::string::npos ? std::string::npos : query - rest);
  if (query == std::string::npos) return out;
  size_t fragment = url.find('#', query);
  if (url[query] == '?') {
    std::string q = url.substr(query + 1, fragment == std::string::npos ? std::string::npos : fragment - query - 1);
    out += '?';
    size_t from = 0;
    while (from <= q.size()) {
      size_t amp = q.find('&', from);
      std::string param = q.substr(from, amp == std::string::npos ? std::string::npos : amp - from);
      size_t eq = param.find('=');
      // A bare parameter may itself be the secret: only a named one keeps its name.
      if (!param.empty()) out += eq == std::string::npos ? std::string("***") : param.substr(0, eq) + "=***";
      if (amp == std::string::npos) break;
      out += '&';
      from = amp + 1;
    }
  }
  if (fragment != std::string::npos) out += "#***";
  return out;
}

std::string UrlWithPath(const std::string& base, const std::string& endpoint) {
  size_t begin = 0, end = 0;
  Authority(base, &begin, &end);
  size_t query = base.find_first_of("?#", begin == std::string::npos ? 0 : end);
  std::string head = base.substr(0, query);
  while (!head.empty() && head.back() == '/' && (begin == std::string::npos || head.size() > end)) head.pop_back();
  return head + endpoint + (query == std::string::npos ? std::string() : base.substr(query));
}

}  // namespace forgek
