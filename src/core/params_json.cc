// Param assignments to and from JSON objects: the one copy every module uses.
#include "forgek/core/params.h"

#include <nlohmann/json.hpp>

#include "forgek/core/json_parse.h"

namespace forgek {

bool ParseParamsJson(const std::string& text, ParamAssignment* out, std::string* err) {
  nlohmann::json j = ParseJsonLenient(text.empty() ? "{}" : text);
  if (!j.is_object()) {
    *err = "params are not a JSON object: " + text.substr(0, 200) + (text.size() > 200 ? " ..." : "");
    return false;
  }
  out->clear();
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_number_integer()) {
      *err = "param " + it.key() + " is not an integer";
      return false;
    }
    (*out)[it.key()] = it.value().get<int64_t>();
  }
  return true;
}

ParamAssignment IntegerParamsOf(const std::string& text) {
  ParamAssignment out;
  if (text.empty()) return out;
  nlohmann::json j = ParseJsonLenient(text);
  if (!j.is_object()) return out;
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.value().is_number_integer()) out[it.key()] = it.value().get<int64_t>();
  return out;
}

std::string ParamsJson(const ParamAssignment& params) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : params) j[name] = value;
  return j.dump();
}

}  // namespace forgek
