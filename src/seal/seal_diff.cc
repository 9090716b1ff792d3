// Comparing two seals: lineage, params, mechanisms and per-config times side by side.
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "forgek/core/json_parse.h"
#include "forgek/seal/seal.h"

namespace forgek {
namespace {

std::string Line(const char* label, const std::string& a, const std::string& b) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-14s %-32s %-32s%s\n", label, a.c_str(), b.c_str(), a == b ? "" : "  *");
  return buf;
}

std::string Mechanisms(const SealRecord& s) {
  nlohmann::json meta = ParseJsonLenient(s.metadata_json);
  if (!meta.is_object() || !meta.contains("mechanisms")) return "";
  std::string out;
  if (!meta["mechanisms"].is_array()) return "";
  for (const auto& m : meta["mechanisms"])
    if (m.is_string()) out += (out.empty() ? "" : ",") + m.get<std::string>();
  return out;
}

// The kernel serving `config`: a dispatch's table entry ("TILE=8 (families/tiled.cu)",
// "reference"), else the seal's one kernel ("seal").
std::string KernelOf(const SealRecord& s, const std::string& config) {
  nlohmann::json meta = ParseJsonLenient(s.metadata_json);
  if (!meta.is_object() || !meta.contains("dispatch") || !meta["dispatch"].is_object()) return "seal";
  const nlohmann::json& d = meta["dispatch"];
  if (!d.contains("table") || !d["table"].is_array() || !d.contains("kernels") || !d["kernels"].is_array()) return "?";
  for (const nlohmann::json& row : d["table"]) {
    if (!row.is_object() || row.value("config", std::string()) != config) continue;
    const size_t k = row.value("kernel", d["kernels"].size());
    if (k >= d["kernels"].size()) return "?";
    const nlohmann::json& entry = d["kernels"][k];
    if (entry.contains("reference")) return "reference";
    std::string params;
    if (entry.contains("params") && entry["params"].is_object())
      for (auto it = entry["params"].begin(); it != entry["params"].end(); ++it)
        params += (params.empty() ? "" : ",") + it.key() + "=" + it.value().dump();
    return "#" + std::to_string(k) + " " + params;
  }
  return "fallback";
}

// Whether seal `child` descends from seal `ancestor` (evolution rather than a fork).
bool DescendsFrom(Store& store, const SealRecord& child, const SealRecord& ancestor) {
  if (child.id == ancestor.id) return false;
  std::vector<SealRecord> lineage;
  std::string err;
  if (!store.SealLineage(child.id, &lineage, &err)) return false;
  for (const SealRecord& s : lineage)
    if (s.id == ancestor.id) return true;
  return false;
}

nlohmann::json SideJson(const SealRecord& s) {
  return {{"id", s.id},         {"operator", s.operator_name}, {"arch", s.arch},
          {"device", s.device}, {"created_at", s.created_at},  {"parent", s.parent},
          {"candidate", s.candidate_hash}, {"toolchain", s.toolchain}, {"mechanisms", Mechanisms(s)},
          {"geomean_speedup", s.geomean_speedup}};
}

}  // namespace

std::string SealDiffJson(Store& store, const SealRecord& a, const SealRecord& b) {
  nlohmann::json pa = ParseJsonLenient(a.params_json);
  nlohmann::json pb = ParseJsonLenient(b.params_json);
  nlohmann::json params = nlohmann::json::object();
  for (const nlohmann::json* p : {&pa, &pb})
    if (p->is_object())
      for (auto it = p->begin(); it != p->end(); ++it) params[it.key()] = nlohmann::json::array();
  for (auto it = params.begin(); it != params.end(); ++it)
    for (const nlohmann::json* p : {&pa, &pb})
      it.value().push_back(p->is_object() && p->contains(it.key()) ? (*p)[it.key()] : nlohmann::json(nullptr));
  std::set<std::string> names;
  for (const auto& [c, us] : a.config_us) names.insert(c);
  for (const auto& [c, us] : b.config_us) names.insert(c);
  nlohmann::json configs = nlohmann::json::array();
  for (const std::string& c : names) {
    auto ia = a.config_us.find(c), ib = b.config_us.find(c);
    nlohmann::json row = {{"config", c},
                          {"a_us", ia != a.config_us.end() ? nlohmann::json(ia->second) : nlohmann::json(nullptr)},
                          {"b_us", ib != b.config_us.end() ? nlohmann::json(ib->second) : nlohmann::json(nullptr)}};
    if (ia != a.config_us.end() && ib != b.config_us.end() && ib->second > 0)
      row["b_speedup_over_a"] = ia->second / ib->second;
    configs.push_back(row);
  }
  nlohmann::json j = {{"a", SideJson(a)},
                      {"b", SideJson(b)},
                      {"params", params},
                      {"configs", configs},
                      {"b_descends_from_a", DescendsFrom(store, b, a)},
                      {"a_descends_from_b", DescendsFrom(store, a, b)}};
  return j.dump(2);
}

std::string SealDiffText(Store& store, const SealRecord& a, const SealRecord& b) {
  std::string out = Line("", a.id.substr(0, 12), b.id.substr(0, 12));
  out += Line("operator", a.operator_name, b.operator_name);
  out += Line("arch", a.arch, b.arch);
  out += Line("device", a.device, b.device);
  out += Line("created", a.created_at, b.created_at);
  out += Line("parent", a.parent.substr(0, 12), b.parent.substr(0, 12));
  out += Line("candidate", a.candidate_hash.substr(0, 12), b.candidate_hash.substr(0, 12));
  out += Line("toolchain", a.toolchain, b.toolchain);
  out += Line("mechanisms", Mechanisms(a), Mechanisms(b));
  nlohmann::json pa = ParseJsonLenient(a.params_json);
  nlohmann::json pb = ParseJsonLenient(b.params_json);
  std::set<std::string> names;
  for (const nlohmann::json* p : {&pa, &pb})
    if (p->is_object())
      for (auto it = p->begin(); it != p->end(); ++it) names.insert(it.key());
  for (const std::string& n : names) {
    std::string va = pa.is_object() && pa.contains(n) ? pa[n].dump() : "-";
    std::string vb = pb.is_object() && pb.contains(n) ? pb[n].dump() : "-";
    out += Line(("param " + n).c_str(), va, vb);
  }
  std::set<std::string> configs;
  for (const auto& [c, us] : a.config_us) configs.insert(c);
  for (const auto& [c, us] : b.config_us) configs.insert(c);
  for (const std::string& c : configs) {
    auto ia = a.config_us.find(c), ib = b.config_us.find(c);
    char ta[64] = "-", tb[64] = "-";
    if (ia != a.config_us.end()) std::snprintf(ta, sizeof ta, "%.2f us", ia->second);
    if (ib != b.config_us.end()) std::snprintf(tb, sizeof tb, "%.2f us", ib->second);
    std::string row = Line(("time " + c).c_str(), ta, tb);
    if (ia != a.config_us.end() && ib != b.config_us.end() && ib->second > 0) {
      char ratio[48];
      std::snprintf(ratio, sizeof ratio, "  (b is %.3fx a)", ia->second / ib->second);
      row.insert(row.size() - 1, ratio);
    }
    out += row;
    std::string ka = KernelOf(a, c), kb = KernelOf(b, c);
    if (ka != "seal" || kb != "seal") out += Line(("kernel " + c).c_str(), ka, kb);
  }
  // Whether one descends from the other tells a reader if this is evolution or a fork.
  if (DescendsFrom(store, b, a)) out += "b descends from a\n";
  if (DescendsFrom(store, a, b)) out += "a descends from b\n";
  return out;
}

}  // namespace forgek
