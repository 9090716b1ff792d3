// Where each value of a JSON text sits, by JSON path, so that diagnostics can name a line and column.
#pragma once

#include <cstddef>
#include <map>
#include <utility>
#include <string>
#include <vector>

namespace forgek {

struct TextPosition {
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based, in bytes
};

// The line and column of byte `offset` of `text`.
TextPosition PositionOfOffset(const std::string& text, size_t offset);

// JSON paths as diagnostics print them: JsonPathKey("tensors[2]", "shape") is "tensors[2].shape",
// JsonPathIndex("tensors[2].shape", 1) is "tensors[2].shape[1]"; the root is "".
std::string JsonPathKey(const std::string& parent, const std::string& key);
std::string JsonPathIndex(const std::string& parent, size_t index);

// The message of a nlohmann parse error without its "[json.exception...] parse error at line L,
// column C: " prefix, whose position is relative to the JSON rather than to the file.
std::string CleanJsonParseError(const std::string& what);

// The offset in `text` (whose JSON starts at `begin`) that a nlohmann exception points at: the byte
// of a parse error, or the first occurrence of the number a number-overflow error quotes.
size_t JsonErrorOffset(const std::string& text, size_t begin, size_t json_byte, const std::string& what);

// An index from JSON path to byte offset over a JSON text that is already known to be valid
// (parse it with nlohmann first). Positions are reported relative to the whole `text`, so JSON
// embedded in a larger file (a candidate's manifest comment) is located in that file.
class JsonLocator {
 public:
  JsonLocator(const std::string& text, size_t begin, size_t end);

  // The value at `path`, or its closest indexed ancestor when `path` is absent (a missing field is
  // reported at the object that lacks it).
  TextPosition ValueAt(const std::string& path) const;
  // The key of the member at `path`; falls back to ValueAt for array elements and the root.
  TextPosition KeyAt(const std::string& path) const;
  // Byte `index` (0-based) of the contents of the string value at `path`, counting each escape
  // sequence as one byte; falls back to ValueAt when the value is not a string.
  TextPosition InString(const std::string& path, size_t index) const;
  // Members whose key already appeared earlier in the same object: path and the repeated key's position.
  const std::vector<std::pair<std::string, TextPosition>>& duplicate_keys() const { return duplicate_keys_; }

 private:
  void ScanValue(const std::string& path, int depth);
  void ScanString();
  void SkipSpace();
  void SkipNested();
  bool Find(const std::map<std::string, size_t>& index, const std::string& path, size_t* offset) const;

  const std::string& text_;
  size_t pos_;
  size_t end_;
  std::map<std::string, size_t> values_;
  std::map<std::string, size_t> keys_;
  std::vector<std::pair<std::string, TextPosition>> duplicate_keys_;
};

}  // namespace forgek
