// Controlled comparisons: two timings of one family that differ only in the params controlling one
// mechanism, as evidence on the two settings' decisions.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "forgek/knowledge/knowledge.h"
#include "forgek/verdict/verdict.h"

namespace forgek {

namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

ParamAssignment Restrict(const ControlSpec& c, const ParamAssignment& params) {
  ParamAssignment out;
  for (const std::string& p : c.params) {
    auto it = params.find(p);
    if (it != params.end()) out[p] = it->second;
  }
  return out;
}

const ConfigResult* FindConfig(const std::vector<ConfigResult>& configs, const std::string& name) {
  for (const ConfigResult& c : configs)
    if (c.config == name) return &c;
  return nullptr;
}

bool TimedAndCorrect(const ConfigResult& c) {
  return c.correctness.ok && c.candidate.median_us > 0 && c.incumbent.median_us > 0;
}

// Configs grouped by regime, each group a comparison with the geomean and its propagated noise.
std::vector<SettingComparison> ByRegime(const OperatorSpec& op, const SettingComparison& proto,
                                        const std::vector<ComparedConfig>& configs) {
  std::map<std::string, std::vector<ComparedConfig>> groups;
  for (const ComparedConfig& c : configs) groups[ShapeRegime(op, c.config)].push_back(c);
  std::vector<SettingComparison> out;
  for (auto& [regime, members] : groups) {
    SettingComparison c = proto;
    c.regime = regime;
    std::vector<double> speedups;
    double sq = 0;
    for (const ComparedConfig& m : members) {
      speedups.push_back(m.speedup);
      sq += m.noise * m.noise;
    }
    c.speedup = Geomean(speedups);
    c.noise = std::sqrt(sq) / static_cast<double>(members.size());
    c.configs = std::move(members);
    out.push_back(std::move(c));
  }
  return out;
}

SettingComparison Proto(const std::string& kind, const ControlSpec& ctrl, const ParamAssignment& setting,
                        const ParamAssignment& against) {
  SettingComparison c;
  c.kind = kind;
  c.mechanism = ctrl.mechanism;
  c.setting = NamedSetting(ctrl, setting);
  c.against = NamedSetting(ctrl, against);
  c.setting_params = Restrict(ctrl, setting);
  c.against_params = Restrict(ctrl, against);
  return c;
}

}  // namespace

std::string NamedSetting(const ControlSpec& control, const ParamAssignment& params) {
  std::string out;
  for (const std::string& p : control.params) {
    auto it = params.find(p);
    if (it == params.end()) return "";
    out += (out.empty() ? "" : ",") + Lower(p) + "=" + std::to_string(it->second);
  }
  return out;
}

const ControlSpec* ControlledDifference(const CandidateManifest& family, const ParamAssignment& a,
                                        const ParamAssignment& b) {
  const ControlSpec* group = nullptr;
  bool differ = false;
  std::vector<std::string> names;
  for (const auto& [k, v] : a) names.push_back(k);
  for (const auto& [k, v] : b)
    if (!a.count(k)) names.push_back(k);
  for (const std::string& name : names) {
    auto ia = a.find(name), ib = b.find(name);
    if (ia != a.end() && ib != b.end() && ia->second == ib->second) continue;
    const ControlSpec* c = family.ControlOf(name);
    if (!c || (group && group != c)) return nullptr;  // an uncontrolled param, or two mechanisms at once
    group = c;
    differ = true;
  }
  return differ ? group : nullptr;
}

SettingComparison SettingComparison::Reversed() const {
  SettingComparison r = *this;
  std::swap(r.setting, r.against);
  std::swap(r.setting_params, r.against_params);
  r.speedup = speedup > 0 ? 1.0 / speedup : 0;
  for (ComparedConfig& c : r.configs) {
    std::swap(c.setting_us, c.against_us);
    c.speedup = c.speedup > 0 ? 1.0 / c.speedup : 0;
  }
  std::reverse(r.attempts.begin(), r.attempts.end());
  for (auto& [metric, delta] : r.metric_deltas) delta = -delta;
  return r;
}

std::vector<SettingComparison> CompareSearchPair(const OperatorSpec& op, const CandidateManifest& family,
                                                 const TimedInstance& a, const TimedInstance& b) {
  const ControlSpec* ctrl = ControlledDifference(family, a.params, b.params);
  if (!ctrl) return {};
  std::vector<ComparedConfig> configs;
  for (const ConfigResult& ca : a.configs) {
    const ConfigResult* cb = FindConfig(b.configs, ca.config);
    if (!cb || !TimedAndCorrect(ca) || !TimedAndCorrect(*cb)) continue;
    // Each was timed against the same incumbent: the incumbent cancels from the ratio of speedups,
    // and the two speedups' noises add in quadrature.
    TimeComparison ta = CompareTimes(ca.incumbent, ca.candidate), tb = CompareTimes(cb->incumbent, cb->candidate);
    if (ta.speedup <= 0 || tb.speedup <= 0) continue;
    configs.push_back({ca.config, ca.candidate.median_us, cb->candidate.median_us, ta.speedup / tb.speedup,
                       RatioNoise(ta.noise, tb.noise)});
  }
  if (configs.empty()) return {};
  SettingComparison proto = Proto("comparison", *ctrl, a.params, b.params);
  if (!a.attempt_id.empty()) proto.attempts.push_back(a.attempt_id);
  if (!b.attempt_id.empty()) proto.attempts.push_back(b.attempt_id);
  return ByRegime(op, proto, configs);
}

std::vector<SettingComparison> CompareAblation(const OperatorSpec& op, const CandidateManifest& family,
                                               const ParamAssignment& base, const ParamAssignment& variant,
                                               const EvalResult& result) {
  const ControlSpec* ctrl = ControlledDifference(family, base, variant);
  if (!ctrl || !OutcomeTimed(result.outcome)) return {};
  std::vector<ComparedConfig> configs;
  for (const ConfigResult& c : result.configs) {
    if (!TimedAndCorrect(c)) continue;
    // The variant was the candidate and the base its incumbent, interleaved in one worker.
    TimeComparison t = CompareConfig(c);
    if (t.speedup <= 0) continue;
    configs.push_back({c.config, c.incumbent.median_us, c.candidate.median_us, 1.0 / t.speedup, t.noise});
  }
  if (configs.empty()) return {};
  return ByRegime(op, Proto("ablation", *ctrl, base, variant), configs);
}

bool RecordComparison(Store& store, const ComparisonOrigin& origin, const SettingComparison& c,
                      std::vector<DecisionRecord>* updated, std::string* err) {
  if (!origin.op) {
    if (err) *err = "RecordComparison needs the operator";
    return false;
  }
  if (c.setting.empty() || c.against.empty() || c.speedup <= 0) {
    if (err) *err = "a comparison needs two named settings and a speedup";
    return false;
  }
  return store.Transaction(
      [&](std::string* e) {
        for (const SettingComparison& side : {c, c.Reversed()}) {
          nlohmann::json settings = nlohmann::json::object();
          for (const auto& [k, v] : side.setting_params) settings[k] = v;
          nlohmann::json configs = nlohmann::json::array();
          std::string names;
          for (const ComparedConfig& x : side.configs) {
            configs.push_back({{"config", x.config},
                               {"setting_us", x.setting_us},
                               {"against_us", x.against_us},
                               {"speedup", x.speedup},
                               {"noise", x.noise}});
            names += (names.empty() ? "" : ",") + x.config;
          }
          EvidenceRecord ev;
          ev.kind = side.kind;
          ev.source = side.kind + " in run " + origin.run_id + " on " + origin.op->name + " [" + names + "]: " +
                      side.setting + " vs " + side.against;
          if (!side.attempts.empty()) {
            ev.source += " (attempts";
            for (const std::string& a : side.attempts) ev.source += " " + a;
            ev.source += ")";
          }
          ev.operator_name = origin.op->name;
          ev.config = side.configs.size() == 1 ? side.configs[0].config : "";
          ev.settings_json = settings.dump();
          ev.supports = side.speedup >= 1;
          ev.speedup = side.speedup;
          ev.noise = side.noise;
          ev.detail_json = nlohmann::json{{"against", side.against}, {"attempts", side.attempts}, {"configs", configs}}
                               .dump();
          ev.metric_deltas_json = nlohmann::json(side.metric_deltas).dump();
          ev.device = origin.device;
          DecisionRecord d;
          DecisionScope scope{origin.arch, origin.op->category, side.regime, side.mechanism, side.setting};
          if (!store.AddEvidence(scope, ev, &d, e)) return false;
          if (updated) updated->push_back(d);
        }
        return true;
      },
      err);
}

std::vector<Observation> CheckClaimedMechanisms(const std::vector<std::string>& claimed,
                                                const std::map<std::string, int>& sass_classes,
                                                const KnowledgeBase& kb, const std::string& operator_name,
                                                const std::string& arch, const std::string& subject) {
  std::vector<Observation> out;
  for (const std::string& mech : claimed) {
    const Mechanism* m = kb.FindMechanism(mech);
    if (!m || m->sass_opcodes.empty()) continue;
    std::string found;
    int count = 0;
    for (const std::string& op : m->sass_opcodes)
      for (const auto& [cls, n] : sass_classes)
        if (n > 0 && (cls == op || (cls.size() > op.size() && cls.compare(0, op.size(), op) == 0 &&
                                    (cls[op.size()] == '.' || cls[op.size()] == '_')))) {
          found += (found.empty() ? "" : ", ") + cls;
          count += n;
        }
    std::string expected;
    for (const std::string& op : m->sass_opcodes) expected += (expected.empty() ? "" : "/") + op;
    Observation o;
    o.operator_name = operator_name;
    o.arch = arch;
    o.subject = subject;
    o.kind = "claim";
    o.key = mech;
    o.value = count > 0 ? "verified" : "unverified";
    o.number = count;
    o.mechanism = mech;
    o.evidence = count > 0 ? "SASS has " + std::to_string(count) + " " + found + " instructions"
                           : "claimed by the manifest, but its SASS has no " + expected + " instruction";
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace forgek
