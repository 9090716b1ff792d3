// The subcommand table: each subcommand lives in its own file and registers itself here.
#pragma once

#include <CLI/CLI.hpp>

#include "context.h"

namespace forgek::cli {

// One entry per subcommand file: set_<name>_command(app, ctx) adds the subcommand, its options
// and its callback to `app`. Only subcommands that work are listed.
using CommandSetup = void (*)(CLI::App& app, Context& ctx);

void set_version_command(CLI::App& app, Context& ctx);
void set_ops_command(CLI::App& app, Context& ctx);
void set_run_command(CLI::App& app, Context& ctx);
void set_seal_command(CLI::App& app, Context& ctx);
void set_batch_command(CLI::App& app, Context& ctx);
void set_doctor_command(CLI::App& app, Context& ctx);
void set_worker_command(CLI::App& app, Context& ctx);
void set_eval_command(CLI::App& app, Context& ctx);
void set_knowledge_command(CLI::App& app, Context& ctx);
void set_profile_command(CLI::App& app, Context& ctx);
void set_regress_command(CLI::App& app, Context& ctx);
void set_report_command(CLI::App& app, Context& ctx);

// Every registered subcommand, in the order --help shows them.
inline constexpr CommandSetup kCommands[] = {
    set_run_command,
    set_batch_command,
    set_version_command,
    set_ops_command,
    set_doctor_command,
    set_eval_command,
    set_profile_command,
    set_knowledge_command,
    set_seal_command,
    set_regress_command,
    set_report_command,
    set_worker_command,
};

}  // namespace forgek::cli
