// Opening the knowledge store safely (create, migrate, refuse foreign/corrupt/newer files) and transactions.
#include "forgek/knowledge/store.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <thread>
#include <fstream>
#include <map>
#include <set>
#include <system_error>

#include "forgek/core/paths.h"
#include "schema.h"
#include "sql.h"

namespace forgek {
namespace fs = std::filesystem;

namespace {

// Several forgek processes share one store; a writer waits this long for another's transaction.
constexpr int kBusyTimeoutMs = 30000;

// SQLite files start with this 16-byte magic; anything else is not ours to open.
bool HasSqliteHeader(const std::string& path, bool* empty) {
  std::ifstream in(path, std::ios::binary);
  char header[16] = {};
  in.read(header, sizeof header);
  *empty = in.gcount() == 0;
  return in.gcount() == 16 && std::string(header, 16) == std::string("SQLite format 3\0", 16);
}

bool PragmaInt(sqlite3* db, const char* pragma, int64_t* v, std::string* err) {
  sql::Stmt s(db, pragma);
  bool row = false;
  if (!s.Step(&row, err)) return false;
  *v = row ? s.Int(0) : 0;
  return true;
}

// Why a store that opened cannot be read: a folder or file it may not write (WAL needs the -shm
// file beside it), a lock held by another process, or damage. `rc` and `why` are SQLite's code and
// message as the failing statement left them (a later statement would reset them to "not an error").
std::string UnreadableStore(const std::string& path, int rc, const std::string& why) {
  const char* kind = sql::ErrorKind(rc);
  std::string k = kind ? kind : "";
  if (k == "not writable")
    return "cannot read knowledge store " + path + ": the file or its folder is not writable by this user (a store "
           "needs its folder writable for the -wal and -shm files): " + why;
  if (k == "locked") return "knowledge store " + path + " is locked by another process: " + why;
  if (k == "unreadable" || k == "full") return "cannot read knowledge store " + path + " (I/O error): " + why;
  return "knowledge store " + path + " is corrupt or not a store: " + why;
}

// The ids, version and table count of an open store, read in one transaction: another process may
// be creating the store right now (its first migration), and three separate reads could see the ids
// before and the tables after it. On failure *rc and *why hold the failing statement's error.
bool ReadHeader(sqlite3* db, int64_t* app_id, int64_t* version, int64_t* tables, int* rc, std::string* why) {
  auto failed = [&] {
    *rc = sqlite3_extended_errcode(db);
    *why = sqlite3_errmsg(db);
    sql::Exec(db, "ROLLBACK", nullptr);
    return false;
  };
  if (!sql::Exec(db, "BEGIN", why)) return failed();
  if (!PragmaInt(db, "PRAGMA application_id", app_id, why) || !PragmaInt(db, "PRAGMA user_version", version, why))
    return failed();
  sql::Stmt count(db, "SELECT count(*) FROM sqlite_schema");
  bool row = false;
  if (!count.Step(&row, why)) return failed();
  *tables = count.Int(0);
  sql::Exec(db, "COMMIT", nullptr);
  return true;
}

// A WAL store is read through its -shm file, which SQLite creates beside it; in a folder this user
// may not write (a store shared read-only, a read-only mount) it cannot, and reading fails with one
// of these codes although the store is healthy.
bool CannotCreateShm(int rc, const std::string& path) {
  const int primary = rc & 0xff;
  if (primary != SQLITE_READONLY && primary != SQLITE_CANTOPEN) return false;
  fs::path folder = fs::absolute(fs::path(path)).parent_path();
  return access(folder.c_str(), W_OK) != 0;
}

// The -wal file beside `path` holds transactions not yet copied into the store file.
bool HasPendingWal(const std::string& path) {
  std::error_code ec;
  auto size = fs::file_size(path + "-wal", ec);
  return !ec && size > 0;
}

// `path` as an SQLite URI opening it immutable: no -shm, no locks, the file as it is. Bytes outside
// the unreserved set are percent-encoded so that '?', '#' and '%' in a folder name stay part of it.
std::string ImmutableUri(const std::string& path) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string uri = "file:";
  for (unsigned char c : fs::absolute(fs::path(path)).string()) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  return uri + "?immutable=1";
}

// Every table and column of a store at the latest schema, read once from an in-memory store built
// by the migrations themselves (so this list can never fall behind them).
const std::map<std::string, std::set<std::string>>& ExpectedSchema() {
  static const std::map<std::string, std::set<std::string>> expected = [] {
    std::map<std::string, std::set<std::string>> out;
    sqlite3* mem = nullptr;
    std::string err;
    if (sqlite3_open(":memory:", &mem) == SQLITE_OK && schema::MigrateTo(mem, schema::LatestVersion(), &err)) {
      sql::Stmt tables(mem, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
      bool row = false;
      while (tables.Step(&row, &err) && row) out[tables.Text(0)];
      for (auto& [table, columns] : out) {
        sql::Stmt info(mem, "SELECT name FROM pragma_table_info(?)");
        info.Bind(1, table);
        while (info.Step(&row, &err) && row) columns.insert(info.Text(0));
      }
    }
    if (mem) sqlite3_close(mem);
    return out;
  }();
  return expected;
}

// The first table or column of the latest schema that `db` lacks ("" when it has them all): a store
// whose tables were dropped or altered by hand fails here, not in the middle of a command.
std::string MissingSchemaPart(sqlite3* db) {
  std::string err;
  for (const auto& [table, columns] : ExpectedSchema()) {
    std::set<std::string> have;
    sql::Stmt info(db, "SELECT name FROM pragma_table_info(?)");
    info.Bind(1, table);
    bool row = false;
    while (info.Step(&row, &err) && row) have.insert(info.Text(0));
    if (have.empty()) return "table " + table;
    for (const std::string& c : columns)
      if (!have.count(c)) return "column " + table + "." + c;
  }
  return "";
}

}  // namespace

std::string NowIso8601() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Store::Store() = default;
Store::~Store() { Close(); }

int Store::CurrentSchemaVersion() { return schema::LatestVersion(); }

void Store::Close() {
  if (db_) sqlite3_close_v2(db_);
  db_ = nullptr;
  tx_depth_ = 0;
  schema_version_ = 0;
}

bool Store::Open(const std::string& path, std::string* err, StoreMode mode) {
  Close();
  path_ = path;
  auto fail = [&](const std::string& why) {
    Close();
    if (err) *err = why;
    return false;
  };
  std::error_code ec;
  // Something at `path` that is no regular file (a folder, a FIFO SQLite would block on for ever, a
  // device, a link loop) is refused with what it is; nothing there (or a dangling link) is a new store.
  const bool exists = fs::exists(path, ec) || ec == std::errc::too_many_symbolic_link_levels;
  std::string not_a_file;
  if (exists && !IsReadableFile(path, &not_a_file)) return fail("knowledge store " + path + " " + not_a_file);
  if (!exists && mode != StoreMode::create) return fail("no knowledge store at " + path);
  if (exists) {
    bool empty = false;
    if (!HasSqliteHeader(path, &empty) && !empty)
      return fail(path + " is not a forgek knowledge store (not an SQLite database); it was left untouched");
  } else {
    // New folders are this user's alone (0700): the default store's folder is refused later when
    // others may write it, and a store's incumbents are trusted.
    fs::path parent = fs::path(path).parent_path();
    std::string why;
    if (!parent.empty() && !CreatePrivateDirs(parent.string(), &why))
      return fail("cannot create the folder of knowledge store " + path + ": " + why);
  }

  int flags = mode == StoreMode::read_only ? SQLITE_OPEN_READONLY
                                           : (SQLITE_OPEN_READWRITE | (mode == StoreMode::create ? SQLITE_OPEN_CREATE : 0));
  if (sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK) {
    std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    return fail("cannot open knowledge store " + path + ": " + why);
  }
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);

  std::string why;
  int64_t app_id = 0, version = 0, tables = 0;
  int rc = SQLITE_OK;
  if (!ReadHeader(db_, &app_id, &version, &tables, &rc, &why)) {
    // A read-only command on a healthy store in a folder it may not write: with no transactions
    // waiting in a -wal file the store file is complete, and is read as it is (immutable). Only a
    // command that reads may do this; a writer must be able to create the -wal file anyway.
    if (mode != StoreMode::read_only || !CannotCreateShm(rc, path)) return fail(UnreadableStore(path, rc, why));
    if (HasPendingWal(path))
      return fail("cannot read knowledge store " + path + ": its folder is not writable by this user, and its -wal "
                  "file holds changes not yet in the store file, which SQLite can only read with a -shm file beside "
                  "it; run a writing forgek command on it as a user who may write the folder (that folds the changes "
                  "in), or copy the store with its -wal file to a writable folder. The store is not damaged.");
    sqlite3_close_v2(db_);
    db_ = nullptr;
    const int immutable_flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX;
    if (sqlite3_open_v2(ImmutableUri(path).c_str(), &db_, immutable_flags, nullptr) != SQLITE_OK) {
      std::string open_why = db_ ? sqlite3_errmsg(db_) : "out of memory";
      return fail("cannot open knowledge store " + path + " read-only: " + open_why);
    }
    if (!ReadHeader(db_, &app_id, &version, &tables, &rc, &why)) return fail(UnreadableStore(path, rc, why));
  }
  if ((app_id != 0 && app_id != schema::kApplicationId) || (app_id == 0 && (version != 0 || tables != 0)))
    return fail(path + " is an SQLite database of another program, not a forgek knowledge store; it was left untouched");
  int latest = schema::LatestVersion();
  // forgek writes versions 1 up; a negative one (user_version is any 32-bit integer) names no
  // migration, so it is refused here for reading and writing alike, before a migration would index by it.
  if (version < 0)
    return fail("knowledge store " + path + " has schema version " + std::to_string(version) +
                ", which no forgek writes: the file is corrupt or not a forgek store; it was left untouched");
  if (version > latest)
    return fail("knowledge store " + path + " has schema version " + std::to_string(version) +
                ", newer than this forgek understands (" + std::to_string(latest) + "); use a newer forgek");
  {
    sql::Stmt check(db_, "PRAGMA quick_check");
    bool row = false;
    if (!check.Step(&row, &why))
      return fail(UnreadableStore(path, sqlite3_extended_errcode(db_), sqlite3_errmsg(db_)));
    if (row && check.Text(0) != "ok")
      return fail("knowledge store " + path + " is corrupt: " + check.Text(0) + "; it was left untouched");
  }

  if (mode != StoreMode::read_only) {
    // WAL: readers never block the writer; FULL: a committed transaction survives a crash of
    // the process and of the machine.
    // Switching to WAL takes an exclusive lock and SQLite answers "locked" at once instead of
    // waiting (no busy handler): while another process holds the store, retry within the timeout.
    bool set = false;
    for (auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);;) {
      set = sql::Exec(db_, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", &why);
      int code = sqlite3_errcode(db_) & 0xff;
      if (set || (code != SQLITE_BUSY && code != SQLITE_LOCKED) || std::chrono::steady_clock::now() >= until) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!set) return fail("cannot set up knowledge store " + path + ": " + why);
  }
  if (!sql::Exec(db_, "PRAGMA foreign_keys=ON;", &why)) return fail("cannot set up knowledge store " + path + ": " + why);

  if (version < latest) {
    if (mode == StoreMode::read_only)
      return fail("knowledge store " + path + " has schema version " + std::to_string(version) +
                  "; open it once for writing to migrate it to " + std::to_string(latest));
    if (!schema::MigrateTo(db_, latest, &why)) return fail("knowledge store " + path + ": " + why);
  }
  const std::string missing = MissingSchemaPart(db_);
  if (!missing.empty())
    return fail("knowledge store " + path + " lacks " + missing + " of schema version " + std::to_string(latest) +
                " (altered by another program?); it was left untouched");
  schema_version_ = latest;
  return true;
}

bool Store::Begin(std::string* err) {
  if (!db_) {
    if (err) *err = "knowledge store is not open";
    return false;
  }
  std::string text = tx_depth_ == 0 ? "BEGIN IMMEDIATE" : "SAVEPOINT sp" + std::to_string(tx_depth_);
  if (!sql::Exec(db_, text, err)) return false;
  ++tx_depth_;
  return true;
}

bool Store::Commit(std::string* err) {
  if (tx_depth_ <= 0) return true;
  std::string text = tx_depth_ == 1 ? "COMMIT" : "RELEASE sp" + std::to_string(tx_depth_ - 1);
  if (!sql::Exec(db_, text, err)) return false;
  --tx_depth_;
  return true;
}

void Store::Rollback() {
  if (tx_depth_ <= 0) return;
  if (tx_depth_ == 1) {
    sql::Exec(db_, "ROLLBACK", nullptr);
  } else {
    std::string sp = "sp" + std::to_string(tx_depth_ - 1);
    sql::Exec(db_, "ROLLBACK TO " + sp + "; RELEASE " + sp, nullptr);
  }
  --tx_depth_;
}

}  // namespace forgek
