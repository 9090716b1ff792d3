// Building the suite scoreboard's rows from run summaries (RunSummaryJson); the report's
// scoreboard view prints them (forgek/report/scoreboard.h).
#include "forgek/run/scoreboard.h"
#include "forgek/core/json_parse.h"
#include "forgek/report/torch_yardstick.h"

#include <nlohmann/json.hpp>

namespace forgek {
namespace {

std::vector<std::string> Strings(const nlohmann::json& j) {
  std::vector<std::string> out;
  if (j.is_array())
    for (const nlohmann::json& m : j)
      if (m.is_string()) out.push_back(m.get<std::string>());
  return out;
}

}  // namespace

std::vector<ScoreboardRow> BuildScoreboard(const std::vector<BatchRunResult>& results) {
  std::vector<ScoreboardRow> rows;
  for (const BatchRunResult& r : results) {
    nlohmann::json s = ParseJsonLenient(r.output);
    const bool have = s.is_object() && s.contains("configs") && s["configs"].is_array() && !s["configs"].empty();
    if (!have) {
      ScoreboardRow row;
      row.op = r.op;
      row.config = "-";
      row.kernel = "expert reference";
      row.note = !r.error.empty() ? "not run: " + r.error
                 : r.exit_code != 0 ? "run failed (exit " + std::to_string(r.exit_code) + ")"
                 : s.is_object()    ? "nothing measured: " + ShortSealReason(s.value("seal_reason", std::string()))
                                    : "no run summary";
      rows.push_back(std::move(row));
      continue;
    }
    const std::string seal = s.contains("seal") && s["seal"].is_string() ? s["seal"].get<std::string>() : "";
    std::vector<std::string> mechanisms;
    if (!seal.empty() && s.contains("sealed_mechanisms")) mechanisms = Strings(s["sealed_mechanisms"]);
    for (const nlohmann::json& c : s["configs"]) {
      ScoreboardRow row;
      row.op = r.op;
      row.config = c.value("config", std::string());
      row.expert_us = c.value("expert_us", 0.0);
      row.seal = seal;
      row.floor_us = c.value("floor_us", 0.0);
      if (!seal.empty()) {
        // A sealed run's table is its confirmation: best = the seal, on fresh seeds.
        row.sealed_us = c.value("best_us", 0.0);
        row.speedup = c.value("speedup_vs_expert", 0.0);
        row.sol_pct = c.value("best_sol_pct", 0.0);
        row.datasheet_sol_pct = c.value("best_datasheet_sol_pct", 0.0);
        row.kernel = s.value("sealed_kernel", std::string());
        row.mechanisms = mechanisms;
        // A dispatch: the kernel serving this config, with its own mechanisms (none where the
        // incumbent, such as the expert reference, serves it; summaries written before rows
        // carried mechanisms say only that much).
        if (s.contains("dispatch") && s["dispatch"].is_array())
          for (const nlohmann::json& d : s["dispatch"]) {
            if (!d.is_object() || d.value("config", std::string()) != row.config) continue;
            row.kernel = d.value("kernel", std::string());
            if (d.contains("mechanisms"))
              row.mechanisms = Strings(d["mechanisms"]);
            else if (row.kernel.rfind("incumbent", 0) == 0)
              row.mechanisms.clear();
          }
      } else {
        // The incumbent serves it: on an empty store, the expert reference.
        row.sealed_us = c.value("incumbent_us", 0.0);
        row.speedup = row.expert_us > 0 && row.sealed_us > 0 ? row.expert_us / row.sealed_us : 0;
        row.sol_pct = c.value("incumbent_sol_pct", 0.0);
        row.datasheet_sol_pct = c.value("incumbent_datasheet_sol_pct", 0.0);
        row.kernel = s.value("incumbent", std::string("expert reference"));
        row.note = ShortSealReason(s.value("seal_reason", std::string()));
      }
      if (c.contains("torch") && c["torch"].is_object()) row.torch = TorchBesideOfRun(c["torch"], row.config, seal, "run");
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace forgek
