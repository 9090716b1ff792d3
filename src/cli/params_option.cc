// `--params` and comma lists, shared by `forgek eval` and `forgek profile`.
#include "params_option.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <sstream>

#include <fmt/format.h>

#include "context.h"

namespace forgek::cli {

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

ParamAssignment ChooseParams(const std::string& text, const CandidateManifest& m, const std::string& file) {
  std::map<std::string, std::string> given;
  const std::vector<std::string> items = SplitCommas(text);
  if (items.empty() && !text.empty()) throw UsageError("--params: no NAME=VALUE in '" + text + "'");
  for (const std::string& item : items) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) throw UsageError("--params: '" + item + "' is not NAME=VALUE");
    given[item.substr(0, eq)] = item.substr(eq + 1);
  }
  ParamAssignment out;
  for (const ParamSpec& p : m.params) {
    auto it = given.find(p.name);
    if (it == given.end()) {
      if (p.values.size() != 1)
        throw UsageError(fmt::format("{}: param {} has {} values; choose one with --params {}=...", file, p.name,
                                     p.values.size(), p.name));
      out[p.name] = p.values[0];
      continue;
    }
    int64_t v = 0;
    try {
      size_t used = 0;
      v = std::stoll(it->second, &used);
      if (used != it->second.size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      throw UsageError("--params: " + p.name + "=" + it->second + " needs an integer value");
    }
    if (std::find(p.values.begin(), p.values.end(), v) == p.values.end())
      throw UsageError(fmt::format("--params: {}={} is outside the domain of {} in {}", p.name, v, p.name, file));
    out[p.name] = v;
    given.erase(it);
  }
  if (!given.empty()) throw UsageError("--params: " + file + " has no param " + given.begin()->first);
  return out;
}

}  // namespace forgek::cli
