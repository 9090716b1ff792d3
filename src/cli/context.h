// What every subcommand shares: the global options and the exit code it leaves.
#pragma once

#include <stdexcept>
#include <string>

namespace forgek::cli {

// Exit codes of the forgek binary.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,
  kExitUsage = 2,
  kExitRegression = 3,
  kExitInterrupted = 130,  // a run stopped by Ctrl-C or SIGTERM (recorded `interrupted`)
};

// The global options, filled by CLI11 (each has a FORGEK_* environment twin).
struct Context {
  std::string store;           // --store / FORGEK_STORE: knowledge-store file
  std::string arch = "sm90";   // --arch / FORGEK_ARCH: target architecture (sm90, sm100)
  int verbose = 0;             // -v (repeatable) / FORGEK_VERBOSE
  bool quiet = false;          // -q / FORGEK_QUIET
  bool json = false;           // --json / FORGEK_JSON: machine-readable output on stdout
  std::string log_file;        // --log-file / FORGEK_LOG_FILE
  std::string operators_dir;   // --operators / FORGEK_OPERATORS: operator folder
  int exit_code = kExitOk;     // set by the subcommand that ran
};

// Thrown by a subcommand for a failure the user must act on (exit 1); main prints the message.
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Thrown for a usage mistake CLI11 cannot see (exit 2), such as two options that exclude each other.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The operators folder from the context, the environment or the usual places; throws UsageError
// when --operators (or FORGEK_OPERATORS) names no folder, Failure naming what was searched when
// none exists.
std::string OperatorsDir(const Context& ctx);

// The store path from --store, FORGEK_STORE or the per-user default. Throws Failure when the default
// is needed and there is no home to put it in, or when the default store's folder exists and belongs
// to another user or others may write it (a store named by --store or FORGEK_STORE is the user's choice,
// a shared one included, and is not checked).
std::string StorePath(const Context& ctx);

// A folder of forgek's per-user cache ("nvrtc", "pch", "batch-..."; "" for the cache folder itself),
// created private to this user or checked to be, with the cache folder above it; throws Failure
// naming the folder and what is wrong.
std::string CacheDir(const std::string& sub);

// A wall-time budget: "90", "90s", "15m", "1h" ("" is 0); false when it is none of those.
bool ParseDuration(const std::string& text, double* seconds);

}  // namespace forgek::cli
