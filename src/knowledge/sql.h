// A thin RAII wrapper over SQLite prepared statements, for the store's own files.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace forgek::sql {

// What kind of failure an SQLite result code is: "not writable", "locked", "corrupt", "full",
// "unreadable", or nullptr for other errors (a bad statement, a constraint).
const char* ErrorKind(int rc);
// " (knowledge store PATH is locked by ...)": the store's path and, where the code tells, the kind.
std::string StoreNote(sqlite3* db, int rc);
// "SQL error: <sqlite message> (knowledge store PATH ...)" for the last error on `db`.
std::string DescribeError(sqlite3* db, int rc);

// One prepared statement. Bind indexes are 1-based, column indexes 0-based (as in SQLite).
class Stmt {
 public:
  Stmt(sqlite3* db, const char* text);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  bool ok() const { return stmt_ != nullptr; }
  Stmt& Bind(int i, const std::string& v);
  Stmt& Bind(int i, int64_t v);
  Stmt& Bind(int i, int v) { return Bind(i, static_cast<int64_t>(v)); }
  Stmt& Bind(int i, double v);
  Stmt& BindNull(int i);
  Stmt& BindBlob(int i, const std::string& bytes);
  // Steps once: true with *row=true for a row, true with *row=false when done, false on error.
  bool Step(bool* row, std::string* err);
  // Steps to completion (for writes).
  bool Run(std::string* err);

  std::string Text(int col) const;
  std::string Blob(int col) const;
  int64_t Int(int col) const;
  double Real(int col) const;
  bool IsNull(int col) const;
  int ColumnCount() const;
  int ColumnType(int col) const;
  std::string ColumnName(int col) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string text_;
  std::string prepare_error_;
  int prepare_rc_ = SQLITE_OK;
  int bind_rc_ = SQLITE_OK;
};

// Runs one or more statements without results; false with err naming SQLite's message.
bool Exec(sqlite3* db, const std::string& text, std::string* err);

}  // namespace forgek::sql
