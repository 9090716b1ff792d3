// Per operator and config: the expert's time, what serves the config now (the newest seal, else
// the incumbent), the best any attempt measured, speedup, SOL %, kernel and mechanisms; and per
// operator its runs, attempts, spend and geomeans. These rows are also the suite scoreboard's.
#include <algorithm>

#include "forgek/core/evaluation.h"
#include "forgek/core/json_parse.h"
#include "forgek/report/scoreboard.h"
#include "forgek/report/torch_yardstick.h"
#include "forgek/verdict/verdict.h"
#include "report_build.h"
#include "report_text.h"

namespace forgek::report_build {
namespace {

// The records of one operator on one arch.
struct OpScope {
  std::string op, arch;
  std::vector<const RunData*> runs;         // oldest first
  std::vector<const SealRecord*> seals;     // newest first
  std::vector<const SealCheckRecord*> checks;
};

// A time with when it was measured (ISO-8601, so that strings compare as times).
struct Measured {
  std::string at;
  double us = 0, noise = 0;
};

std::vector<std::string> Strings(const nlohmann::json& j) {
  std::vector<std::string> out;
  if (j.is_array())
    for (const nlohmann::json& s : j)
      if (s.is_string()) out.push_back(s.get<std::string>());
  return out;
}

// {"TILE":8,"VEC":4} as "TILE=8,VEC=4".
std::string ParamsText(const std::string& params_json) {
  nlohmann::json p = ParseJsonLenient(params_json);
  if (!p.is_object()) return "";
  std::string out;
  for (auto it = p.begin(); it != p.end(); ++it)
    out += (out.empty() ? "" : ",") + it.key() + "=" + (it->is_string() ? it->get<std::string>() : it->dump());
  return out;
}

std::string Label(const std::string& family, const std::string& candidate, const std::string& params_json) {
  const std::string params = ParamsText(params_json);
  const std::string what = family.empty() ? "candidate " + report_text::ShortId(candidate) : family;
  return params.empty() ? what : what + " " + params;
}

// The kernel of `seal` that serves `config` and the mechanisms it claims: a dispatch's table entry
// (a candidate, or the expert reference, which claims none), else the seal's own kernel.
bool KernelOf(Store& store, const SealRecord& seal, const nlohmann::json& meta, const std::string& config,
              std::string* kernel, std::vector<std::string>* mechanisms, std::string* err) {
  mechanisms->clear();
  auto d = meta.find("dispatch");
  if (d != meta.end() && d->is_object() && d->contains("kernels") && (*d)["kernels"].is_array()) {
    const nlohmann::json& kernels = (*d)["kernels"];
    int index = d->contains("fallback") && (*d)["fallback"].is_number_integer() ? (*d)["fallback"].get<int>() : -1;
    std::string suffix = " (fallback)";
    if (d->contains("table") && (*d)["table"].is_array())
      for (const nlohmann::json& row : (*d)["table"])
        if (StringAt(row, "config") == config && row.contains("kernel") &&
            row["kernel"].is_number_integer()) {
          index = row["kernel"].get<int>();
          suffix.clear();
        }
    if (index >= 0 && static_cast<size_t>(index) < kernels.size() && kernels[index].is_object()) {
      const nlohmann::json& k = kernels[index];
      if (k.contains("reference")) {
        *kernel = StringAt(k, "reference", "expert reference") + suffix;
        return true;
      }
      const std::string hash = StringAt(k, "candidate");
      const std::string params = k.contains("params") ? k["params"].dump() : "";
      *kernel = StringAt(k, "label", Label(StringAt(k, "family"), hash, params)) + suffix;
      CandidateRecord c;
      bool found = false;
      if (!hash.empty() && !store.GetCandidate(hash, &c, &found, err)) return false;
      if (found) *mechanisms = c.mechanisms;
      return true;
    }
  }
  *kernel = Label(StringAt(meta, "family"), seal.candidate_hash, seal.params_json);
  if (meta.contains("mechanisms")) *mechanisms = Strings(meta["mechanisms"]);
  return true;
}

// The newest measurement of the expert reference on `config`: a run timed against it (the median
// of its attempts' interleaved incumbent times), a seal that replaced it (its confirmation's
// incumbent; `serving` too, the seal a selected run was timed against), or a nightly check.
Measured ExpertOf(const OpScope& o, const SealRecord* serving, const std::string& config) {
  Measured best;
  auto consider = [&](const std::string& at, double us, double noise) {
    if (us > 0 && (best.us <= 0 || at >= best.at)) best = {at, us, noise};
  };
  for (const RunData* d : o.runs) {
    if (d->run.incumbent != "reference") continue;
    std::vector<double> times;
    for (const AttemptRecord& a : d->attempts)
      if (OutcomeTimed(a.outcome))
        for (const AttemptMeasurement& m : a.measurements)
          if (m.config == config && m.correct && m.incumbent_us > 0) times.push_back(m.incumbent_us);
    double median = 0, noise = 0;
    MedianAndNoise(times, &median, &noise);
    consider(d->run.created_at, median, noise);
  }
  std::vector<const SealRecord*> seals = o.seals;
  if (serving && std::none_of(seals.begin(), seals.end(), [&](const SealRecord* s) { return s->id == serving->id; }))
    seals.push_back(serving);
  for (const SealRecord* s : seals) {
    if (!s->parent.empty()) continue;  // its incumbent was another seal, not the expert
    const nlohmann::json c = SealConfig(SealMetadata(*s), config);
    consider(s->created_at, NumberAt(c, "incumbent_us"), 0);
  }
  for (const SealCheckRecord* c : o.checks)
    if (c->config == config) consider(c->checked_at, c->expert_us, 0);
  return best;
}

// The configs of an operator in its operator.json's order, then any others in the order first seen.
std::vector<std::string> ConfigsOf(const OpScope& o, const OperatorSpec* spec) {
  std::vector<std::string> seen;
  auto add = [&](const std::string& c) {
    if (!c.empty() && std::find(seen.begin(), seen.end(), c) == seen.end()) seen.push_back(c);
  };
  for (const RunData* d : o.runs)
    for (const AttemptRecord& a : d->attempts)
      for (const AttemptMeasurement& m : a.measurements)
        if (OutcomeTimed(a.outcome)) add(m.config);
  for (const SealRecord* s : o.seals)
    for (const auto& [c, us] : s->config_us) add(c);
  for (const SealCheckRecord* c : o.checks) add(c->config);
  if (!spec) return seen;
  std::vector<std::string> ordered;
  for (const ConfigSpec& c : spec->configs)
    if (std::find(seen.begin(), seen.end(), c.name) != seen.end()) ordered.push_back(c.name);
  for (const std::string& c : seen)
    if (std::find(ordered.begin(), ordered.end(), c) == ordered.end()) ordered.push_back(c);
  return ordered;
}

std::vector<OpScope> Group(const Scope& scope) {
  std::vector<OpScope> out;
  for (const auto& [op, arch] : scope.operators) {
    OpScope o;
    o.op = op;
    o.arch = arch;
    for (const RunData& d : scope.runs)
      if (d.run.operator_name == op && d.run.arch == arch) o.runs.push_back(&d);
    for (const SealRecord& s : scope.seals)
      if (s.operator_name == op && s.arch == arch) o.seals.push_back(&s);
    for (const SealCheckRecord& c : scope.checks)
      if (c.operator_name == op && (c.arch.empty() || c.arch == arch)) o.checks.push_back(&c);
    out.push_back(std::move(o));
  }
  return out;
}

bool Rows(Store& store, const OpScope& o, const OperatorSpec* spec, std::vector<ConfigRow>* rows, OperatorRow* op,
          std::string* err) {
  // What serves the operator now: the newest seal, else the seal the newest run was timed against.
  SealRecord serving;
  bool sealed = !o.seals.empty();
  if (sealed) serving = *o.seals.front();
  if (!sealed && !o.runs.empty() && o.runs.back()->run.incumbent != "reference" &&
      !o.runs.back()->run.incumbent.empty() &&
      !store.GetSeal(o.runs.back()->run.incumbent, &serving, &sealed, err))
    return false;
  const nlohmann::json meta = sealed ? SealMetadata(serving) : nlohmann::json::object();
  // The launch floor of the device the times were taken on.
  const std::string device = sealed ? serving.device : o.runs.empty() ? "" : o.runs.back()->run.device;
  DeviceRecord dev;
  bool have_device = false;
  if (!device.empty() && !store.FindDevice(device, o.arch, &dev, &have_device, err)) return false;
  const std::string reason = o.runs.empty() ? "" : ShortSealReason(SummaryField(o.runs.back()->run, "seal_reason"));

  op->op = o.op;
  op->arch = o.arch;
  op->runs = static_cast<int>(o.runs.size());
  op->seal = sealed ? serving.id : "";
  for (const RunData* d : o.runs) {
    op->attempts += static_cast<int>(d->attempts.size());
    for (const AttemptRecord& a : d->attempts) op->timed_attempts += OutcomeTimed(a.outcome) ? 1 : 0;
    op->cost_usd += d->cost_usd;
    op->tokens += d->tokens;
  }
  // PyTorch beside what served each config, as the newest run that timed it saw (its yardstick
  // stage, an operator with a PyTorch golden).
  nlohmann::json torch_rows = nlohmann::json::array();
  std::string torch_run, torch_seal;
  for (const RunData* d : o.runs) {
    const nlohmann::json summary = ParseJsonLenient(d->run.summary_json);
    if (!summary.is_object() || !summary.contains("torch") || !summary["torch"].is_array()) continue;
    torch_rows = summary["torch"];
    torch_run = "run " + report_text::ShortId(d->run.id);
    torch_seal = StringAt(summary, "seal");
  }
  std::vector<double> speedups, sols;
  for (const std::string& config : ConfigsOf(o, spec)) {
    ConfigRow row;
    row.op = o.op;
    row.arch = o.arch;
    row.config = config;
    const Measured expert = ExpertOf(o, sealed ? &serving : nullptr, config);
    row.expert_us = expert.us;
    row.expert_noise = expert.noise;
    double bound_us = 0;  // the config's bound, from the newest measurement that gives SOL %
    for (const RunData* d : o.runs)
      for (const AttemptRecord& a : d->attempts) {
        if (!OutcomeTimed(a.outcome)) continue;
        for (const AttemptMeasurement& m : a.measurements) {
          if (m.config != config || !m.correct || !(m.candidate_us > 0)) continue;
          ++row.attempts;
          if (row.best_us <= 0 || m.candidate_us < row.best_us) {
            row.best_us = m.candidate_us;
            row.best_noise = m.rel_noise;
          }
          if (m.sol_pct > 0) bound_us = m.sol_pct * m.candidate_us / 100;
        }
      }
    auto us = serving.config_us.find(config);
    if (sealed && us != serving.config_us.end() && us->second > 0) {
      row.sealed_us = us->second;
      row.seal = serving.id;
      const nlohmann::json c = SealConfig(meta, config);
      row.sealed_noise = NumberAt(c, "rel_noise");
      row.sol_pct = NumberAt(c, "sol_pct");
      if (!KernelOf(store, serving, meta, config, &row.kernel, &row.mechanisms, err)) return false;
    } else {
      row.sealed_us = expert.us;
      row.sealed_noise = expert.noise;
      row.kernel = "expert reference";
      row.note = sealed ? "seal " + report_text::ShortId(serving.id) + " has no time for this config" : reason;
    }
    if (row.sol_pct <= 0 && bound_us > 0 && row.sealed_us > 0) row.sol_pct = bound_us / row.sealed_us * 100;
    if (row.expert_us > 0 && row.sealed_us > 0) row.speedup = row.expert_us / row.sealed_us;
    if (have_device) row.floor_us = dev.peaks.launch_floor_us;
    for (const nlohmann::json& t : torch_rows)
      if (StringAt(t, "config") == config) row.torch = TorchBesideOfRun(t, config, torch_seal, torch_run);
    speedups.push_back(row.speedup);
    sols.push_back(row.sol_pct);
    rows->push_back(std::move(row));
  }
  op->speedup = GeomeanOfPositive(speedups);
  op->sol_pct = GeomeanOfPositive(sols);
  return true;
}

}  // namespace

bool ConfigRowsOf(Store& store, const Scope& scope, const std::map<std::string, OperatorSpec>& operators,
                  std::vector<ConfigRow>* rows, std::vector<OperatorRow>* ops, std::vector<std::string>* notes,
                  std::string* err) {
  for (const OpScope& o : Group(scope)) {
    auto spec = operators.find(o.op);
    OperatorRow op;
    const size_t before = rows->size();
    if (!Rows(store, o, spec == operators.end() ? nullptr : &spec->second, rows, &op, err)) return false;
    if (rows->size() == before) {
      // An operator whose runs measured nothing still gets a row, so the table shows every one.
      ConfigRow row;
      row.op = o.op;
      row.arch = o.arch;
      row.config = "-";
      row.kernel = "expert reference";
      row.note = "nothing measured";
      rows->push_back(std::move(row));
      notes->push_back("operator " + o.op + " on " + o.arch + ": no attempt was timed and nothing is sealed");
    }
    ops->push_back(std::move(op));
  }
  return true;
}

}  // namespace forgek::report_build
