// Building and printing the suite scoreboard from run summaries (RunSummaryJson).
#include "forgek/scoreboard.h"
#include "core/json_parse.h"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace forgek {
namespace {

std::string Num(double v, const char* fmt) {
  if (v <= 0) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// A seal reason without its per-config list ("not sealed: no candidate beat ..."), but with what
// follows the list: why the dispatch assembled from it was not sealed.
std::string ShortReason(const std::string& reason) {
  size_t cut = reason.find("; per config");
  if (cut == std::string::npos) return reason;
  size_t dispatch = reason.find("; the dispatch", cut);
  return reason.substr(0, cut) + (dispatch == std::string::npos ? "" : reason.substr(dispatch));
}

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
                 : s.is_object()    ? "nothing measured: " + ShortReason(s.value("seal_reason", std::string()))
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
        row.note = ShortReason(s.value("seal_reason", std::string()));
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::string ScoreboardMarkdown(const std::vector<ScoreboardRow>& rows, const std::string& title) {
  std::string out = title + "\n\n";
  // SOL %: of the config's bound, max(roofline time, launch floor), from the calibrated peaks and
  // from the datasheet's.
  out += "| operator | config | expert us | sealed us | vs expert | SOL % calibrated | SOL % datasheet | floor us | "
         "kernel(s) | mechanisms | note |\n";
  out += "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |\n";
  for (const ScoreboardRow& r : rows)
    out += "| " + r.op + " | " + r.config + " | " + Num(r.expert_us, "%.2f") + " | " + Num(r.sealed_us, "%.2f") +
           " | " + Num(r.speedup, "%.3fx") + " | " + Num(r.sol_pct, "%.1f") + " | " + Num(r.datasheet_sol_pct, "%.1f") +
           " | " + Num(r.floor_us, "%.2f") + " | " + (r.kernel.empty() ? "-" : r.kernel) +
           " | " + (r.mechanisms.empty() ? "-" : Join(r.mechanisms)) + " | " + r.note + " |\n";
  return out;
}

std::string ScoreboardJson(const std::vector<ScoreboardRow>& rows, const std::string& title) {
  nlohmann::json list = nlohmann::json::array();
  auto num = [](double v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
  for (const ScoreboardRow& r : rows)
    list.push_back({{"operator", r.op},
                    {"config", r.config},
                    {"expert_us", num(r.expert_us)},
                    {"sealed_us", num(r.sealed_us)},
                    {"speedup_vs_expert", num(r.speedup)},
                    {"sol_pct", num(r.sol_pct)},
                    {"datasheet_sol_pct", num(r.datasheet_sol_pct)},
                    {"floor_us", num(r.floor_us)},
                    {"kernel", r.kernel},
                    {"mechanisms", r.mechanisms},
                    {"seal", r.seal.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.seal)},
                    {"note", r.note}});
  return nlohmann::json{{"title", title}, {"rows", list}}.dump(2);
}

}  // namespace forgek
