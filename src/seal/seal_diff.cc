// Comparing two seals: lineage, params, mechanisms and per-config times side by side.
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "forgek/seal.h"

namespace forgek {
namespace {

std::string Line(const char* label, const std::string& a, const std::string& b) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-14s %-32s %-32s%s\n", label, a.c_str(), b.c_str(), a == b ? "" : "  *");
  return buf;
}

std::string Mechanisms(const SealRecord& s) {
  nlohmann::json meta = nlohmann::json::parse(s.metadata_json, nullptr, false);
  if (!meta.is_object() || !meta.contains("mechanisms")) return "";
  std::string out;
  for (const auto& m : meta["mechanisms"]) out += (out.empty() ? "" : ",") + m.get<std::string>();
  return out;
}

// The kernel serving `config`: a dispatch's table entry ("TILE=8 (families/tiled.cu)",
// "reference"), else the seal's one kernel ("seal").
std::string KernelOf(const SealRecord& s, const std::string& config) {
  nlohmann::json meta = nlohmann::json::parse(s.metadata_json, nullptr, false);
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

}  // namespace

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
  nlohmann::json pa = nlohmann::json::parse(a.params_json, nullptr, false);
  nlohmann::json pb = nlohmann::json::parse(b.params_json, nullptr, false);
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
  std::vector<SealRecord> lineage;
  std::string err;
  if (store.SealLineage(b.id, &lineage, &err)) {
    for (const SealRecord& s : lineage)
      if (s.id == a.id && s.id != b.id) out += "b descends from a\n";
  }
  if (store.SealLineage(a.id, &lineage, &err)) {
    for (const SealRecord& s : lineage)
      if (s.id == b.id && s.id != a.id) out += "a descends from b\n";
  }
  return out;
}

}  // namespace forgek
