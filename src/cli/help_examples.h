// Examples at the foot of every subcommand's --help.
#pragma once

#include <CLI/CLI.hpp>

namespace forgek::cli {

// Sets the "Examples:" footer of every subcommand of `app` (at any depth) from one table; a
// subcommand without an entry keeps none, which the CLI tests catch.
void AddHelpExamples(CLI::App& app);

}  // namespace forgek::cli
