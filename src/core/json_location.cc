// Mapping JSON paths to lines and columns for located diagnostics.
#include "forgek/core/json_location.h"

#include <set>

namespace forgek {

namespace {
// Deeper values are skipped without being indexed, which bounds the recursion of the scanner.
constexpr int kMaxIndexedDepth = 128;
}  // namespace

TextPosition PositionOfOffset(const std::string& text, size_t offset) {
  TextPosition p{1, 1};
  if (offset > text.size()) offset = text.size();
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

std::string JsonPathKey(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string JsonPathIndex(const std::string& parent, size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

std::string CleanJsonParseError(const std::string& what) {
  std::string msg = what;
  size_t bracket = msg.find("] ");
  if (msg.rfind("[json.exception", 0) == 0 && bracket != std::string::npos) msg = msg.substr(bracket + 2);
  if (msg.rfind("number overflow", 0) == 0) return "invalid JSON: " + msg + " (out of range)";
  size_t column = msg.find("column ");
  if (msg.rfind("parse error at line ", 0) == 0 && column != std::string::npos) {
    size_t colon = msg.find(": ", column);
    if (colon != std::string::npos) msg = msg.substr(colon + 2);
  } else if (msg.rfind("parse error: ", 0) == 0) {
    msg = msg.substr(13);
  }
  return "invalid JSON: " + msg;
}

size_t JsonErrorOffset(const std::string& text, size_t begin, size_t json_byte, const std::string& what) {
  if (json_byte > 0) return begin + json_byte - 1;
  size_t open = what.find('\'');
  size_t close = open == std::string::npos ? open : what.find('\'', open + 1);
  if (close == std::string::npos) return begin;
  size_t at = text.find(what.substr(open + 1, close - open - 1), begin);
  return at == std::string::npos ? begin : at;
}

JsonLocator::JsonLocator(const std::string& text, size_t begin, size_t end)
    : text_(text), pos_(begin), end_(std::min(end, text.size())) {
  SkipSpace();
  if (pos_ < end_) ScanValue("", 0);
}

void JsonLocator::SkipSpace() {
  while (pos_ < end_ && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
    ++pos_;
}

void JsonLocator::ScanString() {
  ++pos_;  // opening quote
  while (pos_ < end_ && text_[pos_] != '"') pos_ += text_[pos_] == '\\' ? 2 : 1;
  ++pos_;  // closing quote
}

// Skips one array or object without recursion (too deep to be worth indexing).
void JsonLocator::SkipNested() {
  int depth = 0;
  while (pos_ < end_) {
    char c = text_[pos_];
    if (c == '"') {
      ScanString();
      continue;
    }
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') --depth;
    ++pos_;
    if (depth == 0) return;
  }
}

void JsonLocator::ScanValue(const std::string& path, int depth) {
  values_.emplace(path, pos_);
  char c = text_[pos_];
  if (c == '"') {
    ScanString();
    return;
  }
  if (c != '{' && c != '[') {
    while (pos_ < end_ && text_[pos_] != ',' && text_[pos_] != ']' && text_[pos_] != '}' && text_[pos_] != ' ' &&
           text_[pos_] != '\n' && text_[pos_] != '\t' && text_[pos_] != '\r')
      ++pos_;
    return;
  }
  if (depth >= kMaxIndexedDepth) {
    SkipNested();
    return;
  }
  bool object = c == '{';
  char close = object ? '}' : ']';
  std::set<std::string> seen;
  ++pos_;
  for (size_t index = 0;; ++index) {
    SkipSpace();
    if (pos_ >= end_) return;
    if (text_[pos_] == close) {
      ++pos_;
      return;
    }
    std::string child;
    if (object) {
      size_t key_pos = pos_;
      ScanString();
      // Keys are taken verbatim between the quotes; escapes in keys are rare enough to ignore.
      std::string key = text_.substr(key_pos + 1, pos_ - key_pos - 2);
      child = JsonPathKey(path, key);
      if (!seen.insert(key).second) duplicate_keys_.emplace_back(child, PositionOfOffset(text_, key_pos));
      keys_.emplace(child, key_pos);
      SkipSpace();
      ++pos_;  // ':'
      SkipSpace();
    } else {
      child = JsonPathIndex(path, index);
    }
    ScanValue(child, depth + 1);
    SkipSpace();
    if (pos_ < end_ && text_[pos_] == ',') ++pos_;
  }
}

bool JsonLocator::Find(const std::map<std::string, size_t>& index, const std::string& path, size_t* offset) const {
  auto it = index.find(path);
  if (it == index.end()) return false;
  *offset = it->second;
  return true;
}

TextPosition JsonLocator::ValueAt(const std::string& path) const {
  std::string p = path;
  while (true) {
    size_t offset;
    if (Find(values_, p, &offset)) return PositionOfOffset(text_, offset);
    if (p.empty()) return {};
    size_t cut = p.find_last_of(".[");
    p = cut == std::string::npos ? "" : p.substr(0, cut);
  }
}

TextPosition JsonLocator::KeyAt(const std::string& path) const {
  size_t offset;
  if (Find(keys_, path, &offset)) return PositionOfOffset(text_, offset);
  return ValueAt(path);
}

TextPosition JsonLocator::InString(const std::string& path, size_t index) const {
  size_t offset;
  if (!Find(values_, path, &offset) || text_[offset] != '"') return ValueAt(path);
  size_t raw = offset + 1;
  for (size_t decoded = 0; decoded < index && raw < end_ && text_[raw] != '"'; ++decoded)
    raw += text_[raw] != '\\' ? 1 : (text_[raw + 1] == 'u' ? 6 : 2);
  return PositionOfOffset(text_, raw);
}

}  // namespace forgek
