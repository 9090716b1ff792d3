// The subcommand table: each subcommand lives in its own file and registers itself here.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/context.h"

namespace forgek::cli {

// One entry per subcommand file: set_<name>_command(app, ctx) adds the subcommand, its options
// and its callback to `app`. Only subcommands that work are listed.
using CommandSetup = void (*)(CLI::App& app, Context& ctx);

void set_version_command(CLI::App& app, Context& ctx);

// Every registered subcommand, in the order --help shows them.
inline constexpr CommandSetup kCommands[] = {
    set_version_command,
};

}  // namespace forgek::cli
