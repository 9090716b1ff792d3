// Where forgek finds its shipped data (operators/, knowledge/) and keeps its store.
#pragma once

#include <string>

namespace forgek {

// The folder holding shipped data named `name` ("operators" or "knowledge"). Looked up in order:
// the environment variable `env_var` when set, ./NAME in the working directory, NAME beside the
// executable's tree (../NAME, ../../NAME, ../../../NAME), then the source tree it was built from.
// Returns "" when none exists.
std::string FindDataDir(const std::string& name, const char* env_var);

// The user's home folder: $HOME when set and not empty, else this user's entry in the password
// database (cron, systemd and containers may start forgek without HOME). Never a shared folder such
// as /tmp, where another local user could create forgek's folders first: false, with an error that
// names FORGEK_STORE, XDG_DATA_HOME and XDG_CACHE_HOME as the way out, when neither gives a folder.
bool HomeDir(std::string* home, std::string* err);

// HomeDir's choice from its inputs (for tests): `env_home` is $HOME (nullptr when unset) and
// `passwd_home` the password database's home of this user ("" when it has none).
bool ChooseHomeDir(const char* env_home, const std::string& passwd_home, std::string* home, std::string* err);

// The default knowledge-store path: $FORGEK_STORE, else $XDG_DATA_HOME/forgek/store.db, else
// HOME/.local/share/forgek/store.db; false when the home is needed and HomeDir has none.
bool DefaultStorePath(std::string* path, std::string* err);

// The default cache folder: $XDG_CACHE_HOME/forgek, else HOME/.cache/forgek; false as above.
bool DefaultCacheDir(std::string* dir, std::string* err);

// Creates the folders of `dir` that are missing, each private to this user (mode 0700); existing
// ones are left as they are. False with the folder and the system's reason when one cannot be made.
bool CreatePrivateDirs(const std::string& dir, std::string* err);

// Checks that `dir`, when it exists, is a folder (a link to one counts) owned by this user (the
// effective uid) that neither group nor others may write: forgek trusts what its own folders hold
// (compiled kernels, the store's incumbents), so one another user could fill is refused. True when
// `dir` does not exist; else false with the folder and what is wrong in *err.
bool CheckPrivateDir(const std::string& dir, std::string* err);

// CreatePrivateDirs, then CheckPrivateDir.
bool EnsurePrivateDir(const std::string& dir, std::string* err);

// True when `path` is a regular file (or a link to one), which reading cannot hang on; else false
// with what it is instead in *why ("does not exist", "is a folder", "is a FIFO, not a regular
// file", "is a link to a missing ...").
bool IsReadableFile(const std::string& path, std::string* why);

// The path of the running executable (/proc/self/exe), for spawning the worker.
std::string SelfExecutablePath();

}  // namespace forgek
