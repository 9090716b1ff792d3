// Store: seals, immutable, with their lineage.
#include "forgek/knowledge/store.h"
#include "sql.h"
#include "store_internal.h"

namespace forgek {

using namespace store_detail;

namespace {

constexpr const char* kSealColumns =
    "SELECT id, operator_name, arch, candidate_hash, params_json, parent, run_id, cubin_sha256, toolchain, driver, "
    "device, config_us_json, geomean_speedup, metadata_json, created_at FROM seals ";

SealRecord ReadSeal(const sql::Stmt& s) {
  SealRecord r;
  r.id = s.Text(0);
  r.operator_name = s.Text(1);
  r.arch = s.Text(2);
  r.candidate_hash = s.Text(3);
  r.params_json = s.Text(4);
  r.parent = s.Text(5);
  r.run_id = s.Text(6);
  r.cubin_sha256 = s.Text(7);
  r.toolchain = s.Text(8);
  r.driver = s.Text(9);
  r.device = s.Text(10);
  r.config_us = NumbersFromJson(s.Text(11));
  r.geomean_speedup = s.Real(12);
  r.metadata_json = s.Text(13);
  r.created_at = s.Text(14);
  return r;
}

bool SameSeal(const SealRecord& a, const SealRecord& b) {
  return a.operator_name == b.operator_name && a.arch == b.arch && a.candidate_hash == b.candidate_hash &&
         a.params_json == b.params_json && a.parent == b.parent && a.cubin_sha256 == b.cubin_sha256 &&
         a.config_us == b.config_us;
}

bool ReadSeals(sql::Stmt& s, std::vector<SealRecord>* out, std::string* err) {
  for (bool row = true;;) {
    if (!s.Step(&row, err)) return false;
    if (!row) return true;
    out->push_back(ReadSeal(s));
  }
}

}  // namespace

bool Store::AddSeal(const SealRecord& seal, std::string* err) {
  if (seal.id.empty() || seal.operator_name.empty() || seal.arch.empty()) {
    if (err) *err = "a seal needs an id, an operator and an arch";
    return false;
  }
  SealRecord r = seal;
  if (r.created_at.empty()) r.created_at = NowIso8601();
  return Transaction(
      [&](std::string* e) {
        SealRecord existing;
        bool found = false;
        if (!GetSeal(r.id, &existing, &found, e)) return false;
        if (found) {
          if (SameSeal(existing, r)) return true;
          if (e) *e = "seal " + r.id + " already exists with other content; seals are immutable";
          return false;
        }
        if (!r.parent.empty()) {
          SealRecord parent;
          if (!GetSeal(r.parent, &parent, &found, e)) return false;
          if (!found) {
            if (e) *e = "seal " + r.id + " names parent seal " + r.parent + ", which is not in the store";
            return false;
          }
        }
        sql::Stmt s(db_,
                    "INSERT INTO seals (id, operator_name, arch, candidate_hash, params_json, parent, run_id, "
                    "cubin_sha256, toolchain, driver, device, config_us_json, geomean_speedup, metadata_json, "
                    "created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
        s.Bind(1, r.id).Bind(2, r.operator_name).Bind(3, r.arch).Bind(4, r.candidate_hash).Bind(5, r.params_json);
        s.Bind(6, r.parent).Bind(7, r.run_id).Bind(8, r.cubin_sha256).Bind(9, r.toolchain).Bind(10, r.driver);
        s.Bind(11, r.device).Bind(12, ToJson(r.config_us)).Bind(13, r.geomean_speedup).Bind(14, r.metadata_json);
        s.Bind(15, r.created_at);
        return s.Run(e);
      },
      err);
}

bool Store::GetSeal(const std::string& id, SealRecord* out, bool* found, std::string* err) {
  sql::Stmt s(db_, (std::string(kSealColumns) + "WHERE id = ?").c_str());
  s.Bind(1, id);
  if (!s.Step(found, err)) return false;
  if (*found) *out = ReadSeal(s);
  return true;
}

bool Store::LatestSeal(const std::string& operator_name, const std::string& arch, SealRecord* out, bool* found,
                       std::string* err) {
  // Newest by time; within one second, the one that descends from the other wins.
  sql::Stmt s(db_, (std::string(kSealColumns) +
                    "WHERE operator_name = ?1 AND arch = ?2 AND id NOT IN "
                    "(SELECT parent FROM seals WHERE operator_name = ?1 AND arch = ?2) "
                    "ORDER BY created_at DESC, rowid DESC LIMIT 1")
                       .c_str());
  s.Bind(1, operator_name).Bind(2, arch);
  if (!s.Step(found, err)) return false;
  if (*found) *out = ReadSeal(s);
  return true;
}

bool Store::ListSeals(const std::string& operator_name, const std::string& arch, std::vector<SealRecord>* out,
                      std::string* err) {
  out->clear();
  sql::Stmt s(db_, (std::string(kSealColumns) +
                    "WHERE (?1 = '' OR operator_name = ?1) AND (?2 = '' OR arch = ?2) ORDER BY created_at DESC, "
                    "rowid DESC")
                       .c_str());
  s.Bind(1, operator_name).Bind(2, arch);
  return ReadSeals(s, out, err);
}

bool Store::SealLineage(const std::string& id, std::vector<SealRecord>* out, std::string* err) {
  out->clear();
  std::string next = id;
  while (!next.empty()) {
    SealRecord r;
    bool found = false;
    if (!GetSeal(next, &r, &found, err)) return false;
    if (!found) {
      if (out->empty()) {
        if (err) *err = "no seal " + id + " in the knowledge store";
        return false;
      }
      break;
    }
    for (const auto& seen : *out)
      if (seen.id == r.id) return true;  // a cycle cannot be written by AddSeal; stop if one was imported
    out->push_back(r);
    next = r.parent;
  }
  return true;
}

}  // namespace forgek
