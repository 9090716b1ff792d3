// What several report steps read alike: a seal's metadata, an operator's compute dtype, a median.
#include <algorithm>
#include <cmath>

#include "forgek/core/json_parse.h"
#include "report_build.h"

namespace forgek::report_build {
namespace {

// The p-th percentile (0..100) of sorted `v` by linear interpolation (as protocol's Percentile).
double Percentile(const std::vector<double>& v, double p) {
  const double at = p / 100 * static_cast<double>(v.size() - 1);
  const size_t i = static_cast<size_t>(std::floor(at));
  const size_t j = std::min(i + 1, v.size() - 1);
  return v[i] + (v[j] - v[i]) * (at - static_cast<double>(i));
}

}  // namespace

nlohmann::json SealMetadata(const SealRecord& seal) {
  nlohmann::json m = ParseJsonLenient(seal.metadata_json);
  return m.is_object() ? m : nlohmann::json::object();
}

nlohmann::json SealConfig(const nlohmann::json& metadata, const std::string& config) {
  auto it = metadata.find("configs");
  if (it == metadata.end() || !it->is_array()) return nullptr;
  for (const nlohmann::json& c : *it)
    if (StringAt(c, "config") == config) return c;
  return nullptr;
}

double NumberAt(const nlohmann::json& j, const std::string& key) {
  if (!j.is_object()) return 0;
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0;
}

std::string StringAt(const nlohmann::json& j, const std::string& key, const std::string& fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::string SummaryField(const RunRecord& run, const std::string& key) {
  return StringAt(ParseJsonLenient(run.summary_json), key);
}


void MedianAndNoise(std::vector<double> values, double* median, double* noise) {
  *median = *noise = 0;
  if (values.empty()) return;
  std::sort(values.begin(), values.end());
  *median = Percentile(values, 50);
  if (*median > 0) *noise = (Percentile(values, 90) - Percentile(values, 10)) / 2 / *median;
}

}  // namespace forgek::report_build
