// The prepared-statement wrapper behind the store.
#include "sql.h"

namespace forgek::sql {

const char* ErrorKind(int rc) {
  switch (rc & 0xff) {
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
    case SQLITE_CANTOPEN:
      return "not writable";
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return "locked";
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return "corrupt";
    case SQLITE_FULL:
      return "full";
    case SQLITE_IOERR:
      return "unreadable";
    default:
      return nullptr;
  }
}

std::string StoreNote(sqlite3* db, int rc) {
  const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
  std::string where = file && *file ? std::string(file) : std::string("(in memory)");
  const char* kind = ErrorKind(rc);
  if (!kind) return " (knowledge store " + where + ")";
  std::string k = kind;
  if (k == "not writable")
    return " (knowledge store " + where + " is not writable: check the permissions of the file and of its folder, "
           "which must hold the -wal and -shm files)";
  if (k == "locked") return " (knowledge store " + where + " is locked by another process; try again when it ends)";
  if (k == "corrupt") return " (knowledge store " + where + " is corrupt)";
  if (k == "full") return " (knowledge store " + where + ": the disk is full)";
  return " (knowledge store " + where + ": an I/O error reading or writing the file)";
}

std::string DescribeError(sqlite3* db, int rc) {
  int code = sqlite3_extended_errcode(db);
  return std::string("SQL error: ") + sqlite3_errmsg(db) + StoreNote(db, code != SQLITE_OK ? code : rc);
}

Stmt::Stmt(sqlite3* db, const char* text) : db_(db), text_(text) {
  if (sqlite3_prepare_v2(db, text, -1, &stmt_, nullptr) != SQLITE_OK) {
    prepare_error_ = sqlite3_errmsg(db);
    prepare_rc_ = sqlite3_extended_errcode(db);
    stmt_ = nullptr;
  }
}

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

Stmt& Stmt::Bind(int i, const std::string& v) {
  if (stmt_ && bind_rc_ == SQLITE_OK)
    bind_rc_ = sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}

Stmt& Stmt::BindBlob(int i, const std::string& bytes) {
  if (stmt_ && bind_rc_ == SQLITE_OK)
    bind_rc_ = sqlite3_bind_blob64(stmt_, i, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
  return *this;
}

Stmt& Stmt::Bind(int i, int64_t v) {
  if (stmt_ && bind_rc_ == SQLITE_OK) bind_rc_ = sqlite3_bind_int64(stmt_, i, v);
  return *this;
}

Stmt& Stmt::Bind(int i, double v) {
  if (stmt_ && bind_rc_ == SQLITE_OK) bind_rc_ = sqlite3_bind_double(stmt_, i, v);
  return *this;
}

Stmt& Stmt::BindNull(int i) {
  if (stmt_ && bind_rc_ == SQLITE_OK) bind_rc_ = sqlite3_bind_null(stmt_, i);
  return *this;
}

bool Stmt::Step(bool* row, std::string* err) {
  if (!stmt_) {
    if (err) *err = "SQL error: " + prepare_error_ + " in: " + text_ + StoreNote(db_, prepare_rc_);
    return false;
  }
  if (bind_rc_ != SQLITE_OK) {
    if (err) *err = std::string("SQL bind error: ") + sqlite3_errstr(bind_rc_);
    return false;
  }
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) {
    *row = true;
    return true;
  }
  *row = false;
  if (rc == SQLITE_DONE) return true;
  if (err) *err = DescribeError(db_, rc);
  return false;
}

bool Stmt::Run(std::string* err) {
  bool row = true;
  while (row) {
    if (!Step(&row, err)) return false;
  }
  return true;
}

std::string Stmt::Text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (!p) return std::string();
  return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

std::string Stmt::Blob(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  if (!p) return std::string();
  return std::string(static_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

int64_t Stmt::Int(int col) const { return sqlite3_column_int64(stmt_, col); }
double Stmt::Real(int col) const { return sqlite3_column_double(stmt_, col); }
bool Stmt::IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
int Stmt::ColumnCount() const { return sqlite3_column_count(stmt_); }
int Stmt::ColumnType(int col) const { return sqlite3_column_type(stmt_, col); }
std::string Stmt::ColumnName(int col) const { return sqlite3_column_name(stmt_, col); }

bool Exec(sqlite3* db, const std::string& text, std::string* err) {
  char* msg = nullptr;
  if (int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, &msg); rc != SQLITE_OK) {
    if (err) *err = std::string("SQL error: ") + (msg ? msg : sqlite3_errmsg(db)) + StoreNote(db, rc);
    sqlite3_free(msg);
    return false;
  }
  return true;
}

}  // namespace forgek::sql
