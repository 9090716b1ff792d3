// The JSON printer of a report ("format": "forgek-report/1"): every field, unknown numbers null.
#include <nlohmann/json.hpp>

#include "forgek/report/report_print.h"

namespace forgek {
namespace {

using nlohmann::json;

json Num(double v) { return v > 0 && v < 1e300 ? json(v) : json(nullptr); }
json Text(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

// What `report --torch` read of a config: the numbers as scripts/compare_torch.py wrote them.
json TorchJson(const std::optional<TorchBeside>& t) {
  if (!t) return nullptr;
  const TorchConfig& n = t->numbers;
  return {{"file", t->file},
          {"seal", Text(t->seal)},
          {"seal_note", Text(t->note)},
          {"seal_us", Num(n.seal_us)},
          {"seal_noise", Num(n.seal_noise)},
          {"eager_us", Num(n.eager_us)},
          {"eager_noise", Num(n.eager_noise)},
          {"compile_us", Num(n.compile_us)},
          {"compile_noise", Num(n.compile_noise)},
          {"speedup_vs_eager", Num(n.speedup_vs_eager)},
          {"speedup_vs_compile", Num(n.speedup_vs_compile)},
          {"correct", n.correct ? json(*n.correct) : json(nullptr)},
          {"status", n.status},
          {"note", n.note}};
}

json TorchSourceJson(const TorchSource& s) {
  return {{"file", s.file}, {"device", s.device}, {"torch", s.torch_version}, {"date", s.date}, {"method", s.method}};
}

json ConfigJson(const ConfigRow& c) {
  return {{"operator", c.op},
          {"arch", c.arch},
          {"config", c.config},
          {"expert_us", Num(c.expert_us)},
          {"expert_noise", Num(c.expert_noise)},
          {"incumbent_us", Num(c.sealed_us)},
          {"incumbent_noise", Num(c.sealed_noise)},
          {"best_us", Num(c.best_us)},
          {"best_noise", Num(c.best_noise)},
          {"speedup_vs_expert", Num(c.speedup)},
          {"sol_pct", Num(c.sol_pct)},
          {"floor_us", Num(c.floor_us)},
          {"kernel", c.kernel},
          {"mechanisms", c.mechanisms},
          {"seal", Text(c.seal)},
          {"attempts", c.attempts},
          {"note", c.note},
          {"torch", TorchJson(c.torch)}};
}

json OperatorJson(const OperatorRow& o) {
  return {{"operator", o.op},
          {"arch", o.arch},
          {"runs", o.runs},
          {"attempts", o.attempts},
          {"timed_attempts", o.timed_attempts},
          {"cost_usd", o.cost_usd},
          {"tokens", o.tokens},
          {"seal", Text(o.seal)},
          {"speedup_vs_expert", Num(o.speedup)},
          {"sol_pct", Num(o.sol_pct)}};
}

json RunJson(const RunSeries& s) {
  json points = json::array();
  for (const ConvergencePoint& p : s.points)
    points.push_back({{"attempt", p.attempt}, {"us", Num(p.us)}, {"best_us", Num(p.best_us)}});
  return {{"id", s.id},
          {"operator", s.op},
          {"arch", s.arch},
          {"device", s.device},
          {"agent", s.agent},
          {"status", s.status},
          {"incumbent", s.incumbent},
          {"created_at", s.created_at},
          {"attempts", s.attempts},
          {"cost_usd", s.cost_usd},
          {"seal", Text(s.seal)},
          {"seal_reason", s.seal_reason},
          {"configs", s.configs},
          {"incumbent_us", Num(s.incumbent_us)},
          {"convergence", points}};
}

json SealJson(const SealSummary& s) {
  json points = json::array();
  for (const RooflinePoint& p : s.roofline)
    points.push_back({{"config", p.config},
                      {"flops", p.flops},
                      {"bytes", p.bytes},
                      {"time_us", Num(p.time_us)},
                      {"intensity_flop_per_byte", Num(p.intensity)},
                      {"tflops", Num(p.tflops)}});
  return {{"id", s.id},
          {"operator", s.op},
          {"arch", s.arch},
          {"device", s.device},
          {"run", Text(s.run_id)},
          {"parent", Text(s.parent)},
          {"created_at", s.created_at},
          {"geomean_speedup_vs_parent", Num(s.geomean_speedup)},
          {"mechanisms", s.mechanisms},
          {"compute_dtype", Text(s.compute_dtype)},
          {"roofline", points},
          {"note", s.note}};
}

json DeviceJson(const DeviceBounds& d) {
  json ceilings = json::array();
  for (const ComputeCeiling& c : d.ceilings) ceilings.push_back({{"dtype", c.dtype}, {"tflops", Num(c.tflops)}});
  return {{"name", d.name},
          {"arch", d.arch},
          {"bandwidth_gbps", Num(d.bandwidth_gbps)},
          {"launch_floor_us", Num(d.launch_floor_us)},
          {"calibrated", d.calibrated},
          {"ceilings", ceilings}};
}

json NightlyJson(const SealHistory& h) {
  json checks = json::array();
  for (const SealCheckRecord& c : h.checks)
    checks.push_back({{"check_id", c.check_id},
                      {"checked_at", c.checked_at},
                      {"config", Text(c.config)},
                      {"result", c.result},
                      {"now_us", Num(c.now_us)},
                      {"expert_us", Num(c.expert_us)},
                      {"sealed_us", Num(c.sealed_us)},
                      {"speedup", Num(c.speedup)},
                      {"noise", c.noise},
                      {"device", c.device},
                      {"message", c.message}});
  return {{"seal", Text(h.seal_id)}, {"operator", h.op}, {"checks", checks}};
}

json KnowledgeJson(const KnowledgeStep& k) {
  return {{"run", k.run_id}, {"operator", k.op}, {"created_at", k.created_at}, {"touched", k.touched},
          {"known", k.known}};
}

template <typename T, typename F>
json List(const std::vector<T>& items, F each) {
  json out = json::array();
  for (const T& item : items) out.push_back(each(item));
  return out;
}

}  // namespace

std::string ReportJson(const Report& r) {
  json j = {{"format", "forgek-report/1"},
            {"scope", r.scope},
            {"store", r.store_path},
            {"generated_at", r.generated_at},
            {"empty", r.Empty()},
            {"notes", r.notes},
            {"operators", List(r.operators, OperatorJson)},
            {"configs", List(r.configs, ConfigJson)},
            {"runs", List(r.runs, RunJson)},
            {"seals", List(r.seals, SealJson)},
            {"devices", List(r.devices, DeviceJson)},
            {"nightly", List(r.nightly, NightlyJson)},
            {"knowledge", List(r.knowledge, KnowledgeJson)},
            {"torch_comparisons", List(r.torch, TorchSourceJson)}};
  // Names and messages from user files may not be UTF-8: replaced (U+FFFD), never a throw.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace forgek
