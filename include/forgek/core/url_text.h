// URLs as a user gives them: credentials found, an endpoint put into the path, and a form safe to print.
#pragma once

#include <string>

namespace forgek {

// Whether `url` carries a user name or password (scheme://user:pass@host/...).
bool UrlHasUserinfo(const std::string& url);

// `url` with what may be secret masked, for messages, logs and the store: the user:password@
// part becomes ***@, each query value *** (?key=***), a fragment #***. Host, port and path stay.
std::string RedactUrl(const std::string& url);

// The URL of `endpoint` ("/chat/completions") under `base`: appended to the path, before any
// ?query or #fragment of `base` (http://h/v1?api-version=1 -> http://h/v1/chat/completions?api-version=1).
std::string UrlWithPath(const std::string& base, const std::string& endpoint);

}  // namespace forgek
