// Where forgek finds its shipped data (operators/, knowledge/) and keeps its store.
#pragma once

#include <string>

namespace forgek {

// The folder holding shipped data named `name` ("operators" or "knowledge"). Looked up in order:
// the environment variable `env_var` when set, ./NAME in the working directory, NAME beside the
// executable's tree (../NAME, ../../NAME, ../../../NAME), then the source tree it was built from.
// Returns "" when none exists.
std::string FindDataDir(const std::string& name, const char* env_var);

// The default knowledge-store path: $FORGEK_STORE, else $XDG_DATA_HOME/forgek/store.db,
// else ~/.local/share/forgek/store.db.
std::string DefaultStorePath();

// The default cache folder: $XDG_CACHE_HOME/forgek, else ~/.cache/forgek.
std::string DefaultCacheDir();

// True when `path` is a regular file (or a link to one), which reading cannot hang on; else false
// with what it is instead in *why ("does not exist", "is a folder", "is a FIFO, not a regular
// file", "is a link to a missing ...").
bool IsReadableFile(const std::string& path, std::string* why);

// The path of the running executable (/proc/self/exe), for spawning the worker.
std::string SelfExecutablePath();

}  // namespace forgek
