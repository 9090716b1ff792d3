// Loading the price table and finding a model's price in it.
#include "forgek/core/json_parse.h"
#include "llm_prices.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace forgek {
namespace {

bool ReadPrice(const std::string& path, const std::string& field, const nlohmann::json& j, ModelPrice* out,
               std::string* err) {
  if (!j.is_object()) {
    *err = path + ": " + field + ": expected an object with input_per_mtok and output_per_mtok";
    return false;
  }
  for (const char* key : {"input_per_mtok", "output_per_mtok"}) {
    if (!j.contains(key) || !j[key].is_number() || j[key].get<double>() < 0) {
      *err = path + ": " + field + "." + key + ": expected a non-negative number (USD per million tokens)";
      return false;
    }
  }
  out->input_per_mtok = j["input_per_mtok"].get<double>();
  out->output_per_mtok = j["output_per_mtok"].get<double>();
  return true;
}

}  // namespace

bool PriceTable::Load(const std::string& path, std::string* err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *err = path + ": cannot read the price table";
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return Parse(path, text.str(), err);
}

bool PriceTable::Parse(const std::string& path, const std::string& text, std::string* err) {
  auto doc = ParseJsonLenient(text);
  if (doc.is_discarded() || !doc.is_object()) {
    *err = path + ": not a JSON object";
    return false;
  }
  ModelPrice fallback;
  if (!doc.contains("fallback")) {
    *err = path + ": fallback: missing (the price of models not listed)";
    return false;
  }
  if (!ReadPrice(path, "fallback", doc["fallback"], &fallback, err)) return false;
  std::map<std::string, ModelPrice> models;
  if (doc.contains("models")) {
    if (!doc["models"].is_object()) {
      *err = path + ": models: expected an object of model name -> price";
      return false;
    }
    for (const auto& [name, price] : doc["models"].items()) {
      if (!ReadPrice(path, "models." + name, price, &models[name], err)) return false;
    }
  }
  fallback_ = fallback;
  models_ = std::move(models);
  return true;
}

ModelPrice PriceTable::Find(const std::string& model, bool* is_fallback) const {
  for (const std::string& name : {model, model.substr(model.rfind('/') + 1)}) {
    if (auto it = models_.find(name); it != models_.end()) {
      if (is_fallback) *is_fallback = false;
      return it->second;
    }
    const ModelPrice* best = nullptr;
    size_t best_len = 0;
    for (const auto& [listed, price] : models_) {
      if (listed.size() > best_len && name.compare(0, listed.size(), listed) == 0) {
        best = &price;
        best_len = listed.size();
      }
    }
    if (best) {
      if (is_fallback) *is_fallback = false;
      return *best;
    }
  }
  if (is_fallback) *is_fallback = true;
  return fallback_;
}

double PriceTable::Cost(const std::string& model, int64_t input_tokens, int64_t output_tokens) const {
  ModelPrice p = Find(model);
  return (static_cast<double>(input_tokens) * p.input_per_mtok + static_cast<double>(output_tokens) * p.output_per_mtok) /
         1e6;
}

}  // namespace forgek
