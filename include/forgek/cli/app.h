// Building and running the forgek command line (shared by main and the CLI tests).
#pragma once

namespace forgek::cli {

// Parses argv, runs the chosen subcommand and returns the process exit code. Never throws.
int RunCommandLine(int argc, char** argv);

}  // namespace forgek::cli
