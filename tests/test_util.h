// Helpers shared by tests: running the forgek binary, temporary folders, reading files.
#pragma once

#include <string>
#include <vector>

namespace forgek {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// The forgek binary the tests run: $FORGEK_BIN, else a `forgek` beside the test binary (the GPU
// machine runs carried copies from one folder), else the one this build made.
std::string ForgekBinary();

// Runs ForgekBinary() with `args`, extra environment assignments
// ("NAME=value") and optional stdin text; captures both streams.
CommandResult RunForgek(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                        const std::string& stdin_text = "");

// RunForgek, and once stderr holds `after`, sends `signo` to the process (once; it keeps
// reading until the process ends). For tests of Ctrl-C and SIGTERM.
CommandResult RunForgekSignalled(const std::vector<std::string>& args, const std::vector<std::string>& env,
                                 int signo, const std::string& after);

// A fresh empty folder under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& text);

// The repository's source root (for shipped operators/ and knowledge/).
std::string SourceDir();

// `tool` found in $PATH, or "" (RunProcess takes a path, not a name to search).
std::string FindInPath(const std::string& tool);

}  // namespace forgek
