// The scoreboard view of the report's per-config rows: the table `forgek batch --all` writes
// (--scoreboard-md, --scoreboard-json) and the first section of `forgek report`.
#include "forgek/report/scoreboard.h"

#include <nlohmann/json.hpp>

#include "report_tables.h"

namespace forgek {

std::string ShortSealReason(const std::string& reason) {
  size_t cut = reason.find("; per config");
  if (cut == std::string::npos) return reason;
  size_t dispatch = reason.find("; the dispatch", cut);
  return reason.substr(0, cut) + (dispatch == std::string::npos ? "" : reason.substr(dispatch));
}

std::string ScoreboardTable(const std::vector<ConfigRow>& rows) {
  return report_tables::Markdown(report_tables::Scoreboard(rows, true));
}

std::string ScoreboardMarkdown(const std::vector<ConfigRow>& rows, const std::string& title) {
  return title + "\n\n" + ScoreboardTable(rows);
}

std::string ScoreboardJson(const std::vector<ConfigRow>& rows, const std::string& title) {
  nlohmann::json list = nlohmann::json::array();
  auto num = [](double v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
  for (const ConfigRow& r : rows) {
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
    if (r.torch) {
      const TorchConfig& c = r.torch->numbers;
      list.back()["torch"] = {{"kernel_us", num(c.seal_us)},          {"eager_us", num(c.eager_us)},
                              {"eager_noise", c.eager_noise},         {"compile_us", num(c.compile_us)},
                              {"compile_noise", c.compile_noise},     {"speedup_vs_eager", num(c.speedup_vs_eager)},
                              {"speedup_vs_compile", num(c.speedup_vs_compile)}, {"note", c.note}};
    }
  }
  // Text from operator files and run summaries may not be UTF-8: replaced, never a throw.
  return nlohmann::json{{"title", title}, {"rows", list}}.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace forgek
