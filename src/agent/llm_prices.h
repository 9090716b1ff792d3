// Model prices (USD per million tokens) from knowledge/prompts/prices.json, for cost accounting.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace forgek {

struct ModelPrice {
  double input_per_mtok = 0;
  double output_per_mtok = 0;
};

class PriceTable {
 public:
  // {"fallback": {"input_per_mtok": x, "output_per_mtok": y}, "models": {"name": {...}, ...}}.
  // Errors name the file and the field.
  bool Load(const std::string& path, std::string* err);
  bool Parse(const std::string& path, const std::string& text, std::string* err);

  // The model's price: an exact name, else the longest listed name the model starts with (dated
  // versions: "gpt-4o-2024-08-06" -> "gpt-4o"), also after a "vendor/" prefix; else the fallback.
  ModelPrice Find(const std::string& model, bool* is_fallback = nullptr) const;
  double Cost(const std::string& model, int64_t input_tokens, int64_t output_tokens) const;

 private:
  ModelPrice fallback_;
  std::map<std::string, ModelPrice> models_;
};

}  // namespace forgek
