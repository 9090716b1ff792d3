// The columns of each table of the report, as text cells (report_tables.h).
#include "report_tables.h"

#include <algorithm>

#include "report_text.h"

namespace forgek::report_tables {
namespace {

using report_text::Join;
using report_text::Num;
using report_text::ShortId;
using report_text::TimeCell;

std::string Count(int64_t n) { return std::to_string(n); }

std::string Verdicts(const std::map<std::string, int>& m, const char* v) {
  auto it = m.find(v);
  return std::to_string(it == m.end() ? 0 : it->second);
}

}  // namespace

Table Scoreboard(const std::vector<ConfigRow>& rows, bool with_torch) {
  // SOL %: of the config's bound, max(roofline time, launch floor), from the calibrated peaks and
  // from the datasheet's.
  Table t{"scoreboard", "Scoreboard", "", {"operator", "config", "expert us", "sealed us", "vs expert",
          "SOL % calibrated", "SOL % datasheet", "floor us", "kernel(s)", "mechanisms", "note"}, "llrrrrrrlll", {}};
  // PyTorch beside the seal where a run timed it (an operator whose golden is a PyTorch problem).
  const bool torch =
      with_torch && std::any_of(rows.begin(), rows.end(), [](const ConfigRow& r) { return r.torch.has_value(); });
  if (torch) {
    t.headers.insert(t.headers.begin() + 5, {"torch eager us", "torch.compile us", "vs eager", "vs compile"});
    t.align.insert(5, "rrrr");
  }
  for (const ConfigRow& r : rows) {
    std::vector<std::string> row = {r.op, r.config, Num(r.expert_us, "%.2f"), Num(r.sealed_us, "%.2f"),
                                    Num(r.speedup, "%.3fx"), Num(r.sol_pct, "%.1f"), Num(r.datasheet_sol_pct, "%.1f"),
                                    Num(r.floor_us, "%.2f"), r.kernel.empty() ? "-" : r.kernel,
                                    r.mechanisms.empty() ? "-" : Join(r.mechanisms), r.note};
    if (torch) {
      const TorchConfig c = r.torch ? r.torch->numbers : TorchConfig{};
      row.insert(row.begin() + 5, {TimeCell(c.eager_us, c.eager_noise), TimeCell(c.compile_us, c.compile_noise),
                                   Num(c.speedup_vs_eager, "%.3fx"), Num(c.speedup_vs_compile, "%.3fx")});
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table Times(const Report& r) {
  Table t{"times", "Times per config",
          "Medians in us with their noise. Incumbent: what serves the config now (the newest seal, else the "
          "incumbent the runs were timed against); best: the fastest correct attempt.",
          {"operator", "arch", "config", "expert us", "incumbent us", "best us", "best vs expert", "attempts"},
          "lllrrrrr", {}};
  for (const ConfigRow& c : r.configs)
    t.rows.push_back({c.op, c.arch, c.config, TimeCell(c.expert_us, c.expert_noise),
                      TimeCell(c.sealed_us, c.sealed_noise), TimeCell(c.best_us, c.best_noise),
                      c.expert_us > 0 && c.best_us > 0 ? Num(c.expert_us / c.best_us, "%.3fx") : "-",
                      Count(c.attempts)});
  return t;
}

Table Operators(const Report& r) {
  Table t{"operators", "Operators", "Attempts and LLM spend over the selected runs.",
          {"operator", "arch", "runs", "attempts", "timed", "cost USD", "tokens", "seal", "vs expert (geomean)",
           "SOL % (geomean)"},
          "llrrrrrlrr", {}};
  for (const OperatorRow& o : r.operators)
    t.rows.push_back({o.op, o.arch, Count(o.runs), Count(o.attempts), Count(o.timed_attempts),
                      Num(o.cost_usd, "%.4f", "0"), Count(o.tokens), o.seal.empty() ? "-" : ShortId(o.seal),
                      Num(o.speedup, "%.3fx"), Num(o.sol_pct, "%.1f")});
  return t;
}

Table Runs(const Report& r) {
  Table t{"runs", "Runs", "Times are geomeans over the configs each run timed; best: its best attempt's.",
          {"run", "operator", "arch", "agent", "status", "started", "attempts", "incumbent us", "best us", "cost USD",
           "seal"},
          "llllllrrrrl", {}};
  for (const RunSeries& s : r.runs)
    t.rows.push_back({ShortId(s.id), s.op, s.arch, s.agent, s.status, s.created_at, Count(s.attempts),
                      Num(s.incumbent_us, "%.2f"), Num(s.points.empty() ? 0 : s.points.back().best_us, "%.2f"),
                      Num(s.cost_usd, "%.4f", "0"), s.seal.empty() ? "-" : ShortId(s.seal)});
  return t;
}

Table Seals(const Report& r) {
  Table t{"seals", "Seals",
          "Roofline: per config the arithmetic intensity (FLOP/B, the operator's flops over its bytes) and the "
          "throughput (TFLOP/s) at the sealed time.",
          {"seal", "operator", "arch", "device", "created", "vs parent", "mechanisms", "roofline", "note"},
          "lllllrlll", {}};
  for (const SealSummary& s : r.seals) {
    std::vector<std::string> points;
    for (const RooflinePoint& p : s.roofline)
      points.push_back(p.config + ": " + Num(p.intensity, "%.3g") + " FLOP/B, " + Num(p.tflops, "%.3g") + " TFLOP/s");
    t.rows.push_back({ShortId(s.id), s.op, s.arch, s.device, s.created_at, Num(s.geomean_speedup, "%.3fx"),
                      s.mechanisms.empty() ? "-" : Join(s.mechanisms), points.empty() ? "-" : Join(points, "; "),
                      s.note});
  }
  return t;
}

Table Devices(const Report& r) {
  Table t{"devices", "Device bounds", "The roofs of the roofline, from the store's peaks.",
          {"device", "arch", "bandwidth GB/s", "compute ceilings", "launch floor us", "peaks"}, "llrlrl", {}};
  for (const DeviceBounds& d : r.devices) {
    std::vector<std::string> ceilings;
    for (const ComputeCeiling& c : d.ceilings) ceilings.push_back(c.dtype + " " + Num(c.tflops, "%.0f") + " TFLOP/s");
    t.rows.push_back({d.name, d.arch, Num(d.bandwidth_gbps, "%.0f"), ceilings.empty() ? "-" : Join(ceilings),
                      Num(d.launch_floor_us, "%.2f"), d.calibrated ? "calibrated" : "datasheet"});
  }
  return t;
}

Table Nightly(const Report& r) {
  Table t{"nightly", "Nightly history", "Each seal re-checked against the expert reference by `forgek regress`.",
          {"seal", "operator", "checked", "config", "result", "now us", "expert us", "speedup", "noise %", "message"},
          "lllllrrrrl", {}};
  for (const SealHistory& h : r.nightly)
    for (const SealCheckRecord& c : h.checks)
      t.rows.push_back({h.seal_id.empty() ? "-" : ShortId(h.seal_id), h.op, c.checked_at,
                        c.config.empty() ? "(whole seal)" : c.config, c.result, Num(c.now_us, "%.2f"),
                        Num(c.expert_us, "%.2f"), Num(c.speedup, "%.3fx"), Num(100 * c.noise, "%.1f"), c.message});
  return t;
}

Table Knowledge(const Report& r) {
  Table t{"knowledge", "Knowledge over time",
          "Decisions by verdict after each run: those its comparisons bear on, and those known so far. The "
          "verdicts are today's: the store keeps no history of them.",
          {"run", "operator", "started", "validated", "hypothesis", "refuted", "known validated", "known hypothesis",
           "known refuted"},
          "lllrrrrrr", {}};
  for (const KnowledgeStep& k : r.knowledge)
    t.rows.push_back({ShortId(k.run_id), k.op, k.created_at, Verdicts(k.touched, "validated"),
                      Verdicts(k.touched, "hypothesis"), Verdicts(k.touched, "refuted"), Verdicts(k.known, "validated"),
                      Verdicts(k.known, "hypothesis"), Verdicts(k.known, "refuted")});
  return t;
}

std::string Markdown(const Table& t) {
  auto row = [](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (const std::string& c : cells) out += " " + report_text::MarkdownCell(c) + " |";
    return out + "\n";
  };
  std::string out = row(t.headers) + "|";
  for (char a : t.align) out += a == 'r' ? " ---: |" : " --- |";
  out += "\n";
  for (const std::vector<std::string>& r : t.rows) out += row(r);
  return out;
}

}  // namespace forgek::report_tables
