// The store's schema as an ordered list of migrations, keyed by PRAGMA user_version.
#pragma once

#include <sqlite3.h>

#include <string>

namespace forgek::schema {

// 'FGK1': marks a SQLite file as a forgek store (PRAGMA application_id).
inline constexpr int kApplicationId = 0x46474B31;

// The version the newest migration leaves.
int LatestVersion();

// Applies every migration above the file's version up to `target`, each in its own transaction
// that also sets user_version, so a crash leaves the file at a complete version.
bool MigrateTo(sqlite3* db, int target, std::string* err);

}  // namespace forgek::schema
