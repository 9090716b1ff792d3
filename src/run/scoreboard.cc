// Building the suite scoreboard's rows from run summaries (RunSummaryJson); the report's
// scoreboard view prints them (forgek/report/scoreboard.h).
#include "forgek/run/scoreboard.h"
#include "forgek/core/json_parse.h"

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

// A run summary's PyTorch yardstick of one config (RunSummaryJson's "torch"), as the report's
// tables hold PyTorch beside a kernel: the kernel's and torch's times from that run's one evaluation.
TorchBeside TorchFromSummary(const nlohmann::json& t, const std::string& config, const std::string& seal) {
  auto number = [](const nlohmann::json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
  };
  auto text = [](const nlohmann::json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
  };
  const nlohmann::json eager = t.contains("eager") ? t["eager"] : nlohmann::json();
  const nlohmann::json compiled = t.contains("compile") ? t["compile"] : nlohmann::json();
  TorchBeside b;
  b.file = "run";
  b.seal = seal;
  TorchConfig& c = b.numbers;
  c.config = config;
  c.seal_us = number(t, "kernel_us");
  c.eager_us = number(eager, "median_us");
  c.eager_noise = number(eager, "rel_noise");
  c.compile_us = number(compiled, "median_us");
  c.compile_noise = number(compiled, "rel_noise");
  c.speedup_vs_eager = number(t, "speedup_vs_eager");
  c.speedup_vs_compile = number(t, "speedup_vs_compile");
  c.status = c.eager_us > 0 || c.compile_us > 0 ? "compared" : "not compared";
  std::vector<std::string> notes;
  if (std::string e = text(eager, "error"); !e.empty()) notes.push_back("eager: " + e);
  if (std::string e = text(compiled, "error"); !e.empty()) notes.push_back("torch.compile: " + e);
  for (const std::string& n : notes) c.note += (c.note.empty() ? "" : "; ") + n;
  return b;
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
      if (c.contains("torch") && c["torch"].is_object()) row.torch = TorchFromSummary(c["torch"], row.config, seal);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace forgek
