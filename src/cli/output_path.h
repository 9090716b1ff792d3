// Checking at the start of a command that the files and folders it will write at its end can be
// written, so that a mistake in a path costs seconds, not the hours of runs before the write.
#pragma once

#include <string>

namespace forgek::cli {

// What is wrong with an output path: nothing (ok), the value itself (a usage error, exit 2: a file
// named where a folder is, a folder that does not exist), or the machine (exit 1: no permission, a
// read-only file system).
enum class OutputProblem { ok, usage, failure };

// An output file written later by WriteFileAtomic (a temporary file beside it, renamed over it):
// `path` may be missing or a regular file (or a link to one), not a folder, FIFO, device or
// socket; its folder must exist and take a new file (a probe file is created and removed). *why
// says what is wrong, naming `option` and the path.
OutputProblem CheckOutputFile(const std::string& option, const std::string& path, std::string* why);

// An output folder created later (create_directories) to hold new files: `path` may be missing or a
// folder (or a link to one); the nearest folder that exists, itself or an ancestor, must take a new
// file. Nothing is created but the probe, which is removed.
OutputProblem CheckOutputFolder(const std::string& option, const std::string& path, std::string* why);

}  // namespace forgek::cli
