// Store: the nightly history, one row per config of a seal re-checked by `forgek regress`.
#include "forgek/knowledge/store.h"
#include "sql.h"
#include "store_internal.h"

namespace forgek {

using namespace store_detail;

bool Store::AddSealChecks(const std::vector<SealCheckRecord>& rows, std::string* err) {
  for (const SealCheckRecord& r : rows) {
    if (r.check_id.empty() || r.operator_name.empty() || r.result.empty()) {
      if (err) *err = "a seal check needs a check id, an operator and a result";
      return false;
    }
  }
  return Transaction(
      [&](std::string* e) {
        for (const SealCheckRecord& r : rows) {
          sql::Stmt s(db_,
                      "INSERT INTO seal_checks (check_id, seal_id, operator_name, arch, device, driver, toolchain, "
                      "config, result, now_us, expert_us, sealed_us, speedup, noise, message, checked_at) "
                      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
          s.Bind(1, r.check_id).Bind(2, r.seal_id).Bind(3, r.operator_name).Bind(4, r.arch).Bind(5, r.device);
          s.Bind(6, r.driver).Bind(7, r.toolchain).Bind(8, r.config).Bind(9, r.result).Bind(10, r.now_us);
          s.Bind(11, r.expert_us).Bind(12, r.sealed_us).Bind(13, r.speedup).Bind(14, r.noise).Bind(15, r.message);
          s.Bind(16, r.checked_at.empty() ? NowIso8601() : r.checked_at);
          if (!s.Run(e)) return false;
        }
        return true;
      },
      err);
}

bool Store::ListSealChecks(const std::string& seal_id, const std::string& operator_name,
                           std::vector<SealCheckRecord>* out, std::string* err) {
  out->clear();
  sql::Stmt s(db_,
              "SELECT check_id, seal_id, operator_name, arch, device, driver, toolchain, config, result, now_us, "
              "expert_us, sealed_us, speedup, noise, message, checked_at FROM seal_checks "
              "WHERE (?1 = '' OR seal_id = ?1) AND (?2 = '' OR operator_name = ?2) ORDER BY checked_at, rowid");
  s.Bind(1, seal_id).Bind(2, operator_name);
  for (bool row = true;;) {
    if (!s.Step(&row, err)) return false;
    if (!row) return true;
    SealCheckRecord r;
    r.check_id = s.Text(0);
    r.seal_id = s.Text(1);
    r.operator_name = s.Text(2);
    r.arch = s.Text(3);
    r.device = s.Text(4);
    r.driver = s.Text(5);
    r.toolchain = s.Text(6);
    r.config = s.Text(7);
    r.result = s.Text(8);
    r.now_us = s.Real(9);
    r.expert_us = s.Real(10);
    r.sealed_us = s.Real(11);
    r.speedup = s.Real(12);
    r.noise = s.Real(13);
    r.message = s.Text(14);
    r.checked_at = s.Text(15);
    out->push_back(std::move(r));
  }
}

}  // namespace forgek
