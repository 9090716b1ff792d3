// `forgek version`: the tool's version and the toolchain it was built against.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "commands.h"

namespace forgek::cli {

void set_version_command(CLI::App& app, Context& ctx) {
  CLI::App* cmd = app.add_subcommand("version", "Print forgek's version");
  cmd->callback([&ctx] {
    if (ctx.json) {
      nlohmann::json j = {{"forgek", FORGEK_VERSION}};
      std::printf("%s\n", j.dump().c_str());
    } else {
      std::printf("forgek %s\n", FORGEK_VERSION);
    }
  });
}

}  // namespace forgek::cli
