// Loading the shipped seed knowledge (mechanism catalogue, hardware datasheets) and choosing peaks.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "forgek/core/file_read.h"
#include "forgek/core/json_parse.h"
#include "forgek/knowledge/knowledge.h"
#include "forgek/core/paths.h"

namespace forgek {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<fs::path> JsonFiles(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

bool ParseFile(const fs::path& p, json* out, Diagnostics* diags) {
  std::string text, why;
  if (!ReadFileLimited(p.string(), kJsonMaxBytes, "a knowledge file (one JSON text)", &text, &why)) {
    diags->push_back({p.string(), "", 0, 0, "cannot read the knowledge file: " + why});
    return false;
  }
  *out = ParseJsonLenient(text);
  if (out->is_discarded()) {
    diags->push_back({p.string(), "", 0, 0, "not valid JSON"});
    return false;
  }
  return true;
}

// Reads a required string field; records a diagnostic naming file and field when absent.
bool Str(const json& j, const std::string& field, const std::string& file, const std::string& path, std::string* out,
         Diagnostics* diags) {
  if (!j.contains(field) || !j.at(field).is_string()) {
    diags->push_back({file, path + field, 0, 0, "required string field is missing"});
    return false;
  }
  *out = j.at(field).get<std::string>();
  return true;
}

void StrList(const json& j, const std::string& field, std::vector<std::string>* out) {
  if (!j.contains(field) || !j.at(field).is_array()) return;
  for (const auto& e : j.at(field))
    if (e.is_string()) out->push_back(e.get<std::string>());
}

void LoadMechanisms(const fs::path& file, const json& doc, KnowledgeBase* kb, std::set<std::string>* ids,
                    Diagnostics* diags) {
  if (!doc.contains("mechanisms") || !doc["mechanisms"].is_array()) {
    diags->push_back({file.string(), "mechanisms", 0, 0, "expected an array of mechanisms"});
    return;
  }
  size_t i = 0;
  for (const auto& m : doc["mechanisms"]) {
    std::string path = "mechanisms[" + std::to_string(i++) + "].";
    Mechanism mech;
    bool ok = Str(m, "id", file.string(), path, &mech.id, diags);
    ok = Str(m, "name", file.string(), path, &mech.name, diags) && ok;
    ok = Str(m, "unit", file.string(), path, &mech.unit, diags) && ok;
    ok = Str(m, "what", file.string(), path, &mech.what, diags) && ok;
    ok = Str(m, "helps", file.string(), path, &mech.helps, diags) && ok;
    ok = Str(m, "hurts", file.string(), path, &mech.hurts, diags) && ok;
    ok = Str(m, "llm", file.string(), path, &mech.llm_words, diags) && ok;
    StrList(m, "archs", &mech.archs);
    StrList(m, "sass", &mech.sass_opcodes);
    StrList(m, "metrics", &mech.metrics);
    StrList(m, "launch", &mech.launch_signs);
    StrList(m, "name_fields", &mech.name_fields);
    if (mech.archs.empty()) {
      diags->push_back({file.string(), path + "archs", 0, 0, "list the architectures (sm90, sm100)"});
      ok = false;
    }
    if (ok && !ids->insert(mech.id).second) {
      diags->push_back({file.string(), path + "id", 0, 0, "mechanism '" + mech.id + "' is defined twice"});
      ok = false;
    }
    mech.json = m.dump();
    if (ok) kb->mechanisms.push_back(std::move(mech));
  }
}

void LoadHardware(const fs::path& file, const json& doc, KnowledgeBase* kb, Diagnostics* diags) {
  HardwareSpec hw;
  bool ok = Str(doc, "name", file.string(), "", &hw.name, diags);
  ok = Str(doc, "arch", file.string(), "", &hw.arch, diags) && ok;
  hw.sm_count = doc.value("sm_count", 0);
  hw.l2_bytes = doc.value("l2_bytes", int64_t{0});
  hw.memory_bytes = doc.value("memory_bytes", int64_t{0});
  hw.smem_per_block_bytes = doc.value("smem_per_block_bytes", int64_t{0});
  if (!doc.contains("peaks") || !doc["peaks"].is_object()) {
    diags->push_back({file.string(), "peaks", 0, 0, "expected an object of peak values"});
    return;
  }
  std::string err;
  std::vector<std::string> unknown;
  if (!FromJson(doc["peaks"], &hw.peaks, &err, &unknown)) {
    diags->push_back({file.string(), "peaks." + err.substr(0, err.find(':')), 0, 0, err.substr(err.find(':') + 2)});
    ok = false;
  }
  for (const auto& key : unknown) {
    diags->push_back({file.string(), "peaks." + key, 0, 0, "unknown peak"});
    ok = false;
  }
  if (hw.sm_count <= 0) {
    diags->push_back({file.string(), "sm_count", 0, 0, "must be a positive integer"});
    ok = false;
  }
  if (ok) kb->hardware.push_back(std::move(hw));
}

}  // namespace

const Mechanism* KnowledgeBase::FindMechanism(const std::string& id) const {
  for (const auto& m : mechanisms)
    if (m.id == id) return &m;
  return nullptr;
}

std::string KnowledgeDir() { return FindDataDir("knowledge", "FORGEK_KNOWLEDGE"); }

bool LoadKnowledgeBase(const std::string& dir, KnowledgeBase* out, Diagnostics* diags) {
  KnowledgeBase kb;
  kb.dir = dir;
  size_t before = diags->size();
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) {
    diags->push_back({dir, "", 0, 0, "knowledge folder not found (set FORGEK_KNOWLEDGE)"});
    return false;
  }
  std::set<std::string> ids;
  for (const auto& f : JsonFiles(fs::path(dir) / "mechanisms")) {
    json doc;
    if (ParseFile(f, &doc, diags)) LoadMechanisms(f, doc, &kb, &ids, diags);
  }
  for (const auto& f : JsonFiles(fs::path(dir) / "hardware")) {
    json doc;
    if (ParseFile(f, &doc, diags)) LoadHardware(f, doc, &kb, diags);
  }
  if (diags->size() != before) return false;
  *out = std::move(kb);
  return true;
}

bool ResolveHardware(Store* store, const KnowledgeBase& kb, const std::string& arch, const std::string& device,
                     HardwareSpec* out, std::string* err) {
  const HardwareSpec* sheet = nullptr;
  std::string dev = Lower(device);
  for (const auto& hw : kb.hardware) {
    if (hw.arch != arch) continue;
    std::string model = Lower(hw.name);
    model = model.substr(model.rfind(' ') + 1);  // "h200"
    if (!dev.empty() && dev.find(model) != std::string::npos) {
      sheet = &hw;
      break;
    }
  }
  // Unknown name: the first model of the arch in name order (H100 before H200), the conservative peak.
  if (!sheet)
    for (const auto& hw : kb.hardware)
      if (hw.arch == arch && (!sheet || hw.name < sheet->name)) sheet = &hw;
  HardwareSpec spec;
  if (sheet) spec = *sheet;
  spec.arch = arch;
  if (store && store->IsOpen()) {
    std::vector<DeviceRecord> devices;
    if (!store->ListDevices(&devices, err)) return false;
    for (const auto& d : devices) {
      if (d.arch != arch || !d.calibrated) continue;
      if (!dev.empty() && Lower(d.name) != dev) continue;
      if (!sheet && spec.name.empty()) spec.name = d.name;
      if (!device.empty()) spec.name = d.name;
      if (d.sm_count > 0) spec.sm_count = d.sm_count;
      if (d.l2_bytes > 0) spec.l2_bytes = d.l2_bytes;
      if (d.memory_bytes > 0) spec.memory_bytes = d.memory_bytes;
      spec.peaks.OverlayKnown(d.peaks);
      spec.calibrated = true;
      break;
    }
  }
  if (!sheet && !spec.calibrated) {
    if (err) *err = "no hardware specs for " + arch + (device.empty() ? "" : " (" + device + ")") +
                    " in knowledge/hardware and no calibrated device in the store";
    return false;
  }
  *out = spec;
  return true;
}

}  // namespace forgek
