// Store: devices (with calibrated peaks), operators and the mechanism catalogue.
#include "forgek/core/json_parse.h"
#include "forgek/knowledge/store.h"
#include "sql.h"
#include "store_internal.h"

namespace forgek {

using namespace store_detail;

namespace {

DeviceRecord ReadDevice(const sql::Stmt& s) {
  DeviceRecord d;
  d.name = s.Text(0);
  d.arch = s.Text(1);
  d.sm_count = static_cast<int>(s.Int(2));
  d.l2_bytes = s.Int(3);
  d.memory_bytes = s.Int(4);
  d.driver = s.Text(5);
  // A peaks_json that does not parse leaves the peaks unknown, as an empty one does.
  nlohmann::json peaks = ParseJsonLenient(s.Text(6));
  std::string err;
  if (!peaks.is_discarded()) FromJson(peaks, &d.peaks, &err);
  d.calibrated = s.Int(7) != 0;
  d.calibrated_at = s.Text(8);
  return d;
}

constexpr const char* kDeviceColumns =
    "SELECT name, arch, sm_count, l2_bytes, memory_bytes, driver, peaks_json, calibrated, calibrated_at FROM devices ";

}  // namespace

bool Store::UpsertDevice(const DeviceRecord& d, std::string* err) {
  return Transaction(
      [&](std::string* e) {
        sql::Stmt s(db_,
                    "INSERT OR REPLACE INTO devices (name, arch, sm_count, l2_bytes, memory_bytes, driver, peaks_json, "
                    "calibrated, calibrated_at) VALUES (?,?,?,?,?,?,?,?,?)");
        s.Bind(1, d.name).Bind(2, d.arch).Bind(3, d.sm_count).Bind(4, d.l2_bytes).Bind(5, d.memory_bytes);
        s.Bind(6, d.driver).Bind(7, ToJson(d.peaks).dump()).Bind(8, d.calibrated ? 1 : 0).Bind(9, d.calibrated_at);
        return s.Run(e);
      },
      err);
}

bool Store::FindDevice(const std::string& name, const std::string& arch, DeviceRecord* out, bool* found,
                       std::string* err) {
  sql::Stmt s(db_, (std::string(kDeviceColumns) + "WHERE name = ? AND arch = ?").c_str());
  s.Bind(1, name).Bind(2, arch);
  if (!s.Step(found, err)) return false;
  if (*found) *out = ReadDevice(s);
  return true;
}

bool Store::ListDevices(std::vector<DeviceRecord>* out, std::string* err) {
  out->clear();
  sql::Stmt s(db_, (std::string(kDeviceColumns) + "ORDER BY name, arch").c_str());
  for (bool row = true;;) {
    if (!s.Step(&row, err)) return false;
    if (!row) return true;
    out->push_back(ReadDevice(s));
  }
}

bool Store::UpsertOperator(const OperatorRecord& op, std::string* err) {
  return Transaction(
      [&](std::string* e) {
        sql::Stmt s(db_, "INSERT OR REPLACE INTO operators (name, category, description) VALUES (?,?,?)");
        s.Bind(1, op.name).Bind(2, op.category).Bind(3, op.description);
        return s.Run(e);
      },
      err);
}

bool Store::ListOperators(std::vector<OperatorRecord>* out, std::string* err) {
  out->clear();
  sql::Stmt s(db_, "SELECT name, category, description FROM operators ORDER BY name");
  for (bool row = true;;) {
    if (!s.Step(&row, err)) return false;
    if (!row) return true;
    out->push_back({s.Text(0), s.Text(1), s.Text(2)});
  }
}

bool Store::UpsertMechanism(const MechanismRecord& m, std::string* err) {
  return Transaction(
      [&](std::string* e) {
        sql::Stmt s(db_, "INSERT OR REPLACE INTO mechanisms (id, name, archs_json, json) VALUES (?,?,?,?)");
        s.Bind(1, m.id).Bind(2, m.name).Bind(3, ToJson(m.archs)).Bind(4, m.json);
        return s.Run(e);
      },
      err);
}

bool Store::ListMechanisms(std::vector<MechanismRecord>* out, std::string* err) {
  out->clear();
  sql::Stmt s(db_, "SELECT id, name, archs_json, json FROM mechanisms ORDER BY id");
  for (bool row = true;;) {
    if (!s.Step(&row, err)) return false;
    if (!row) return true;
    out->push_back({s.Text(0), s.Text(1), StringsFromJson(s.Text(2)), s.Text(3)});
  }
}

}  // namespace forgek
