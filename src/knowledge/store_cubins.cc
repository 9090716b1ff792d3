// Store: the sealed binaries, content-addressed by SHA-256.
#include "forgek/core/hash.h"
#include "forgek/knowledge/store.h"
#include "sql.h"
#include "store_internal.h"

namespace forgek {

using namespace store_detail;

bool Store::PutCubin(const std::string& sha256, const std::string& bytes, const std::string& toolchain, bool rebuilt,
                     std::string* err) {
  if (bytes.empty() || Sha256Hex(bytes) != sha256) {
    if (err) *err = "a cubin of " + std::to_string(bytes.size()) + " bytes does not hash to " + sha256;
    return false;
  }
  sql::Stmt s(db_,
              "INSERT OR IGNORE INTO cubins (sha256, bytes, toolchain, rebuilt, created_at) VALUES (?,?,?,?,?)");
  s.Bind(1, sha256).BindBlob(2, bytes).Bind(3, toolchain).Bind(4, rebuilt ? 1 : 0).Bind(5, NowIso8601());
  return s.Run(err);
}

bool Store::GetCubin(const std::string& sha256, std::string* bytes, bool* found, bool* rebuilt, std::string* err) {
  sql::Stmt s(db_, "SELECT bytes, rebuilt FROM cubins WHERE sha256 = ?");
  s.Bind(1, sha256);
  if (!s.Step(found, err)) return false;
  if (!*found) return true;
  std::string b = s.Blob(0);
  // A row whose bytes no longer hash to its key (a damaged or edited file) is not the sealed cubin.
  if (Sha256Hex(b) != sha256) {
    if (err) *err = "the store's cubin " + sha256 + " does not hash to its key: the store is damaged";
    return false;
  }
  *bytes = std::move(b);
  if (rebuilt) *rebuilt = s.Int(1) != 0;
  return true;
}

}  // namespace forgek
