// `forgek ops bench`: times the expert reference of every config of the named operators.
#pragma once

#include <CLI/CLI.hpp>

#include "context.h"

namespace forgek::cli {

// Adds `bench` under `ops` (the ops command table calls it).
void AddOpsBenchCommand(CLI::App* ops, Context& ctx);

}  // namespace forgek::cli
