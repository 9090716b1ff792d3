// Ids, content hashes and JSON conversions shared by the store's files.
#include <random>

#include "forgek/core/json_parse.h"
#include "forgek/core/hash.h"
#include "store_internal.h"

namespace forgek::store_detail {

using nlohmann::json;

std::string RandomId() {
  static thread_local std::random_device rd;
  static const char* kHex = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 4; ++i) {
    uint32_t v = rd();
    for (int b = 0; b < 8; ++b) id += kHex[(v >> (4 * b)) & 0xF];
  }
  return id;
}

std::string ContentId(const std::vector<std::string>& fields) {
  std::string joined;
  for (const auto& f : fields) {
    joined += f;
    joined += '\x1f';
  }
  return Sha256Hex(joined);
}

std::string ToJson(const std::vector<std::string>& v) { return json(v).dump(); }
std::string ToJson(const std::map<std::string, double>& m) { return json(m).dump(); }

std::vector<std::string> StringsFromJson(const std::string& text) {
  json j = ParseJsonLenient(text);
  std::vector<std::string> out;
  if (j.is_array())
    for (const auto& e : j)
      if (e.is_string()) out.push_back(e.get<std::string>());
  return out;
}

std::map<std::string, double> NumbersFromJson(const std::string& text) {
  json j = ParseJsonLenient(text);
  std::map<std::string, double> out;
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it)
      if (it->is_number()) out[it.key()] = it->get<double>();
  return out;
}

namespace {

json Dim3(const int64_t v[3]) { return json::array({v[0], v[1], v[2]}); }

bool ReadDim3(const json& j, const char* field, int64_t out[3], std::string* err) {
  if (!j.contains(field)) return true;
  const json& a = j.at(field);
  if (!a.is_array() || a.size() != 3) {
    if (err) *err = std::string("profile field '") + field + "' must be an array of 3 integers";
    return false;
  }
  for (int i = 0; i < 3; ++i) {
    if (!a[static_cast<size_t>(i)].is_number_integer()) {
      if (err) *err = std::string("profile field '") + field + "' must be an array of 3 integers";
      return false;
    }
    out[i] = a[static_cast<size_t>(i)].get<int64_t>();
  }
  return true;
}

}  // namespace

json ProfileToJson(const KernelProfile& p) {
  json launches = json::array();
  for (const auto& l : p.launches) {
    launches.push_back({{"name", l.name},
                        {"grid", Dim3(l.grid)},
                        {"block", Dim3(l.block)},
                        {"cluster", Dim3(l.cluster)},
                        {"registers_per_thread", l.registers_per_thread},
                        {"static_smem_bytes", l.static_smem_bytes},
                        {"dynamic_smem_bytes", l.dynamic_smem_bytes},
                        {"local_memory_per_thread", l.local_memory_per_thread},
                        {"duration_us", l.duration_us}});
  }
  return {{"label", p.label}, {"config", p.config}, {"launches", launches}, {"metrics", p.metrics},
          {"sass", p.sass},   {"time_us", p.time_us}, {"flops", p.flops},    {"bytes", p.bytes},
          {"wall_s", p.wall_s}};
}

bool ProfileFromJson(const json& j, KernelProfile* p, std::string* err) {
  try {
    KernelProfile out;
    out.label = j.value("label", "");
    out.config = j.value("config", "");
    out.sass = j.value("sass", "");
    out.time_us = j.value("time_us", 0.0);
    out.flops = j.value("flops", 0.0);
    out.bytes = j.value("bytes", 0.0);
    out.wall_s = j.value("wall_s", 0.0);  // absent in profiles kept before it was measured
    if (j.contains("metrics")) out.metrics = j.at("metrics").get<std::map<std::string, double>>();
    for (const auto& l : j.value("launches", json::array())) {
      KernelLaunchRecord r;
      r.name = l.value("name", "");
      if (!ReadDim3(l, "grid", r.grid, err) || !ReadDim3(l, "block", r.block, err) ||
          !ReadDim3(l, "cluster", r.cluster, err))
        return false;
      r.registers_per_thread = l.value("registers_per_thread", 0);
      r.static_smem_bytes = l.value("static_smem_bytes", int64_t{0});
      r.dynamic_smem_bytes = l.value("dynamic_smem_bytes", int64_t{0});
      r.local_memory_per_thread = l.value("local_memory_per_thread", int64_t{0});
      r.duration_us = l.value("duration_us", 0.0);
      out.launches.push_back(r);
    }
    *p = std::move(out);
    return true;
  } catch (const json::exception& e) {
    if (err) *err = std::string("malformed profile: ") + e.what();
    return false;
  }
}

}  // namespace forgek::store_detail
