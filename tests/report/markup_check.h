// A strict reader of the report's HTML for tests: well-formed XML syntax (every tag closed or
// self-closed, attributes quoted, only the five XML entities and numeric references), elements with
// their parents, so that a test can check each <svg> and its marks without a browser.
#pragma once

#include <cctype>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace forgek::markup_check {

struct Element {
  std::string name;
  std::map<std::string, std::string> attrs;
  int parent = -1;  // index in the list, -1 for the root
};

inline bool Entity(const std::string& text, size_t at, std::string* err) {
  size_t end = text.find(';', at);
  if (end == std::string::npos || end - at > 10) {
    *err = "an & that starts no entity at " + std::to_string(at);
    return false;
  }
  const std::string e = text.substr(at + 1, end - at - 1);
  if (e == "amp" || e == "lt" || e == "gt" || e == "quot" || e == "apos") return true;
  if (e.size() > 1 && e[0] == '#' && e.find_first_not_of("0123456789", 1) == std::string::npos) return true;
  *err = "unknown entity &" + e + ";";
  return false;
}

// Parses `text`; false with `err` at the first problem.
inline bool Parse(const std::string& text, std::vector<Element>* out, std::string* err) {
  std::vector<int> open;
  size_t i = 0;
  if (text.compare(0, 15, "<!DOCTYPE html>") == 0) i = 15;
  while (i < text.size()) {
    if (text[i] == '&') {
      if (!Entity(text, i, err)) return false;
      ++i;
      continue;
    }
    if (text[i] != '<') {
      ++i;
      continue;
    }
    if (text.compare(i, 2, "</") == 0) {
      size_t end = text.find('>', i);
      if (end == std::string::npos) return *err = "an unclosed end tag", false;
      const std::string name = text.substr(i + 2, end - i - 2);
      if (open.empty() || (*out)[open.back()].name != name)
        return *err = "</" + name + "> closes " + (open.empty() ? "nothing" : "<" + (*out)[open.back()].name + ">"),
               false;
      open.pop_back();
      i = end + 1;
      continue;
    }
    Element e;
    e.parent = open.empty() ? -1 : open.back();
    size_t j = i + 1;
    while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '-')) ++j;
    e.name = text.substr(i + 1, j - i - 1);
    if (e.name.empty()) return *err = "a < that starts no tag at " + std::to_string(i), false;
    bool self_closed = false;
    for (;;) {
      while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      if (j >= text.size()) return *err = "an unclosed tag <" + e.name, false;
      if (text.compare(j, 2, "/>") == 0) {
        self_closed = true;
        j += 2;
        break;
      }
      if (text[j] == '>') {
        ++j;
        break;
      }
      size_t k = j;
      while (k < text.size() && text[k] != '=' && !std::isspace(static_cast<unsigned char>(text[k]))) ++k;
      const std::string key = text.substr(j, k - j);
      if (k + 1 >= text.size() || text[k] != '=' || text[k + 1] != '"')
        return *err = "attribute " + key + " of <" + e.name + "> is not name=\"value\"", false;
      size_t close = text.find('"', k + 2);
      if (close == std::string::npos) return *err = "an unclosed attribute " + key, false;
      const std::string value = text.substr(k + 2, close - k - 2);
      if (value.find('<') != std::string::npos) return *err = "a < inside attribute " + key, false;
      for (size_t a = value.find('&'); a != std::string::npos; a = value.find('&', a + 1))
        if (!Entity(value, a, err)) return false;
      if (e.attrs.count(key)) return *err = "attribute " + key + " twice in <" + e.name + ">", false;
      e.attrs[key] = value;
      j = close + 1;
    }
    out->push_back(e);
    if (!self_closed) open.push_back(static_cast<int>(out->size()) - 1);
    i = j;
  }
  if (!open.empty()) return *err = "<" + (*out)[open.back()].name + "> is never closed", false;
  return true;
}

// True when element `i` lies inside element `ancestor`.
inline bool Inside(const std::vector<Element>& els, int i, int ancestor) {
  for (int p = els[i].parent; p >= 0; p = els[p].parent)
    if (p == ancestor) return true;
  return false;
}

// The numbers of a coordinate attribute ("12.5", or "1,2 3,4" for points); false when one is not a
// finite number.
inline bool FiniteNumbers(const std::string& value, int* count) {
  std::string token;
  *count = 0;
  auto flush = [&]() {
    if (token.empty()) return true;
    char* end = nullptr;
    const double v = std::strtod(token.c_str(), &end);
    token.clear();
    ++*count;
    return end && *end == '\0' && v == v && v < 1e300 && v > -1e300;
  };
  for (char c : value) {
    if (c == ' ' || c == ',') {
      if (!flush()) return false;
    } else {
      token += c;
    }
  }
  return flush();
}

}  // namespace forgek::markup_check
