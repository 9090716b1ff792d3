// `forgek worker`: the GPU worker process (JSON lines on stdin/stdout), `--probe`, `--calibrate`.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "forgek/worker/gpu_context.h"
#include "forgek/worker/worker.h"

namespace forgek::cli {

void set_worker_command(CLI::App& app, Context& ctx) {
  CLI::App* cmd = app.add_subcommand(
      "worker", "Run the GPU worker (spawned by forgek; speaks JSON lines on stdin/stdout)");
  auto probe = std::make_shared<bool>(false);
  auto calibrate = std::make_shared<bool>(false);
  cmd->add_flag("--probe", *probe, "Print the driver version and devices as one JSON line, then exit");
  cmd->add_flag("--calibrate", *calibrate, "Measure copy bandwidth and GEMM peaks, print one JSON line, then exit");
  cmd->callback([&ctx, probe, calibrate] {
    if (*probe && *calibrate) throw UsageError("worker: --probe and --calibrate exclude each other");
    if (*probe) {
      ProbeResult p = worker::ProbeDevices();
      std::printf("%s\n", ToJson(p).dump().c_str());
      ctx.exit_code = p.ok ? kExitOk : kExitFailure;
      return;
    }
    if (*calibrate) {
      DevicePeaks peaks;
      std::string err;
      nlohmann::json j;
      if (worker::Calibrate(&peaks, &err)) {
        j = ToJson(peaks);
        j["ok"] = true;
      } else {
        j = {{"ok", false}, {"error", err}};
        ctx.exit_code = kExitFailure;
      }
      std::printf("%s\n", j.dump().c_str());
      return;
    }
    ctx.exit_code = worker::Serve(stdin, stdout);
  });
}

}  // namespace forgek::cli
