// Splitting a batch's budget by headroom, and reading an operator's headroom from the store.
#include "forgek/run/budget.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "forgek/knowledge/store.h"
#include "forgek/verdict/verdict.h"
#include "forgek/core/json_parse.h"

namespace forgek {
namespace {

double Headroom(const OperatorHeadroom& h) {
  if (h.sol_pct < 0) return 0.5;
  return std::clamp(1.0 - h.sol_pct / 100.0, kMinHeadroom, 1.0);
}

double Recency(const OperatorHeadroom& h) {
  return (h.improved_last_run ? 1.5 : 1.0) / (1.0 + 0.5 * std::max(0, h.runs_without_gain));
}

std::string Why(const OperatorHeadroom& h) {
  char buf[256];
  if (h.sol_pct < 0)
    std::snprintf(buf, sizeof buf, "SOL unknown: headroom taken as 50%%");
  else
    std::snprintf(buf, sizeof buf, "SOL %.1f%% (%s): headroom %.1f%%", h.sol_pct, h.sol_source.c_str(),
                  100.0 * Headroom(h));
  std::string why = buf;
  if (h.runs_without_gain > 0)
    why += "; " + std::to_string(h.runs_without_gain) + (h.runs_without_gain == 1 ? " run" : " runs") + " without gain";
  if (h.improved_last_run) why += "; improved in its latest run";
  return why;
}

// The geomean SOL % of configs, or -1 (OperatorHeadroom's "unknown") when none has a SOL figure:
// the geomean's 0 for that case would read as 0 % of SOL, all the headroom there is.
double SolPctOrUnknown(const std::vector<double>& sol) {
  const double g = GeomeanOfPositive(sol);
  return g > 0 ? g : -1;
}

}  // namespace

std::vector<BudgetShare> SplitBudget(const std::vector<OperatorHeadroom>& ops, double total_s, double floor_s) {
  std::vector<BudgetShare> shares;
  if (ops.empty()) return shares;
  const double n = static_cast<double>(ops.size());
  double weights = 0;
  for (const OperatorHeadroom& h : ops) {
    BudgetShare s;
    s.op = h.op;
    s.weight = Headroom(h) * Recency(h);
    s.why = Why(h);
    weights += s.weight;
    shares.push_back(std::move(s));
  }
  const double floor = std::max(0.0, floor_s);
  if (total_s <= floor * n) {
    for (BudgetShare& s : shares) s.seconds = total_s / n;
    return shares;
  }
  const double rest = total_s - floor * n;
  for (BudgetShare& s : shares) s.seconds = floor + rest * s.weight / weights;
  return shares;
}

bool HeadroomFromStore(Store& store, const std::string& op, const std::string& arch, double bench_sol_pct,
                       OperatorHeadroom* out, std::string* err) {
  *out = OperatorHeadroom{};
  out->op = op;
  SealRecord seal;
  bool sealed = false;
  if (!store.LatestSeal(op, arch, &seal, &sealed, err)) return false;
  if (sealed) {
    nlohmann::json meta = ParseJsonLenient(seal.metadata_json.empty() ? "{}" : seal.metadata_json);
    std::vector<double> sol;
    if (meta.is_object() && meta.contains("configs") && meta["configs"].is_array())
      for (const nlohmann::json& c : meta["configs"])
        if (c.is_object() && c.contains("sol_pct") && c["sol_pct"].is_number()) sol.push_back(c["sol_pct"].get<double>());
    out->sol_pct = SolPctOrUnknown(sol);
    if (out->sol_pct >= 0) out->sol_source = "seal " + seal.id.substr(0, 12);
  }
  if (out->sol_pct < 0 && !sealed) {
    // The incumbent (the expert reference while nothing is sealed) as timed beside a candidate:
    // its SOL is the candidate's scaled by their times.
    std::vector<TimedAttempt> attempts;
    if (!store.ListTimedAttempts(op, arch, 1, &attempts, err)) return false;
    if (!attempts.empty()) {
      std::vector<double> sol;
      for (const AttemptMeasurement& m : attempts[0].measurements)
        if (m.incumbent_us > 0 && m.sol_pct > 0) sol.push_back(m.sol_pct * m.candidate_us / m.incumbent_us);
      out->sol_pct = SolPctOrUnknown(sol);
      if (out->sol_pct >= 0) out->sol_source = "run attempts";
    }
  }
  if (out->sol_pct < 0 && bench_sol_pct > 0) {
    out->sol_pct = bench_sol_pct;
    out->sol_source = "ops bench";
  }
  std::vector<RunRecord> runs;  // newest first
  if (!store.ListRuns(op, arch, &runs, err)) return false;
  bool first = true;
  for (const RunRecord& r : runs) {
    if (r.status == "running") continue;
    nlohmann::json j = ParseJsonLenient(r.summary_json.empty() ? "{}" : r.summary_json);
    const bool made_seal = j.is_object() && j.contains("seal") && j["seal"].is_string() && !j["seal"].get<std::string>().empty();
    if (first) out->improved_last_run = made_seal;
    first = false;
    if (made_seal) break;
    ++out->runs_without_gain;
  }
  return true;
}

bool BenchSolFromJson(const std::string& text, std::map<std::string, double>* out, std::string* err) {
  out->clear();
  nlohmann::json j = ParseJsonLenient(text);
  if (!j.is_object() || !j.contains("rows") || !j["rows"].is_array()) {
    *err = "expected the JSON of `forgek --json ops bench` (an object with \"rows\")";
    return false;
  }
  std::map<std::string, std::vector<double>> sol;
  for (size_t i = 0; i < j["rows"].size(); ++i) {
    const nlohmann::json& row = j["rows"][i];
    if (!row.is_object() || !row.contains("operator") || !row["operator"].is_string()) {
      *err = "rows[" + std::to_string(i) + "].operator is not a string";
      return false;
    }
    if (!row.contains("sol_pct") || !row["sol_pct"].is_number() || row["sol_pct"].get<double>() <= 0) continue;
    sol[row["operator"].get<std::string>()].push_back(row["sol_pct"].get<double>());
  }
  for (const auto& [op, values] : sol) (*out)[op] = SolPctOrUnknown(values);
  return true;
}

bool SplitBatchTime(Store& store, const std::vector<std::string>& ops, const std::string& arch, double total_s,
                    double floor_s, const std::map<std::string, double>& bench_sol_pct, std::vector<BudgetShare>* out,
                    std::string* err) {
  out->clear();
  if (total_s <= 0) return true;
  std::vector<OperatorHeadroom> headroom;
  for (const std::string& op : ops) {
    auto bench = bench_sol_pct.find(op);
    OperatorHeadroom h;
    if (!HeadroomFromStore(store, op, arch, bench == bench_sol_pct.end() ? -1 : bench->second, &h, err)) return false;
    headroom.push_back(std::move(h));
  }
  *out = SplitBudget(headroom, total_s, floor_s);
  return true;
}

BatchRunBudget RunBudgetOf(const std::vector<BudgetShare>& shares, const std::string& op, int iterations,
                           bool iterations_given) {
  BatchRunBudget b;
  b.iterations = iterations;
  for (const BudgetShare& s : shares) {
    if (s.op != op) continue;
    b.time_s = std::max(1LL, static_cast<long long>(s.seconds + 0.5));  // 0 would mean no budget at all
    if (!iterations_given) b.iterations = 0;
  }
  return b;
}

}  // namespace forgek
