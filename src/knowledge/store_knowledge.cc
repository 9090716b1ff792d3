// Store: profiles, observations, decisions and their evidence.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "forgek/core/json_parse.h"
#include "forgek/knowledge/knowledge.h"
#include "forgek/knowledge/store.h"
#include "sql.h"
#include "store_internal.h"

namespace forgek {

using namespace store_detail;

namespace {

// A whole-mechanism decision keeps the id it had before settings were part of the scope.
std::string DecisionId(const DecisionScope& sc) {
  if (sc.setting.empty()) return ContentId({"decision", sc.arch, sc.category, sc.regime, sc.mechanism});
  return ContentId({"decision", sc.arch, sc.category, sc.regime, sc.mechanism, sc.setting});
}

constexpr const char* kDecisionColumns =
    "SELECT id, arch, category, regime, mechanism, settings_json, verdict, effect, confidence, supporting, "
    "contradicting, text, created_at, updated_at, setting, effect_lo, effect_hi, comparisons, operators_json "
    "FROM decisions ";

std::vector<std::string> ParseStringList(const std::string& text) {
  std::vector<std::string> out;
  auto j = ParseJsonLenient(text);
  if (j.is_array())
    for (const auto& x : j)
      if (x.is_string()) out.push_back(x.get<std::string>());
  return out;
}

// False (with the decision and the text named) when the stored verdict is none of the three: a
// store edited by hand or by another program.
bool ReadDecision(const sql::Stmt& s, DecisionRecord* out, std::string* err) {
  DecisionRecord d;
  d.id = s.Text(0);
  d.scope = {s.Text(1), s.Text(2), s.Text(3), s.Text(4), s.Text(14)};
  d.settings_json = s.Text(5);
  if (!ParseDecisionVerdict(s.Text(6), &d.verdict)) {
    if (err) *err = "decision " + d.id + ": unknown verdict '" + s.Text(6) + "' (hypothesis, validated or refuted)";
    return false;
  }
  d.effect = s.Real(7);
  d.confidence = s.Real(8);
  d.supporting = static_cast<int>(s.Int(9));
  d.contradicting = static_cast<int>(s.Int(10));
  d.text = s.Text(11);
  d.created_at = s.Text(12);
  d.updated_at = s.Text(13);
  d.effect_lo = s.Real(15);
  d.effect_hi = s.Real(16);
  d.comparisons = static_cast<int>(s.Int(17));
  d.operators = ParseStringList(s.Text(18));
  *out = std::move(d);
  return true;
}

EvidenceRecord ReadEvidence(const sql::Stmt& s) {
  EvidenceRecord e;
  e.id = s.Text(0);
  e.decision_id = s.Text(1);
  e.kind = s.Text(2);
  e.source = s.Text(3);
  e.operator_name = s.Text(4);
  e.config = s.Text(5);
  e.candidate_hash = s.Text(6);
  e.settings_json = s.Text(7);
  e.supports = s.Int(8) != 0;
  e.speedup = s.Real(9);
  e.metric_deltas_json = s.Text(10);
  e.device = s.Text(11);
  e.created_at = s.Text(12);
  e.noise = s.Real(13);
  e.detail_json = s.Text(14);
  return e;
}

bool LoadEvidence(sqlite3* db, const std::string& decision_id, std::vector<EvidenceRecord>* out, std::string* err) {
  out->clear();
  sql::Stmt s(db,
              "SELECT id, decision_id, kind, source, operator_name, config, candidate_hash, settings_json, supports, "
              "speedup, metric_deltas_json, device, created_at, noise, detail_json FROM evidence WHERE decision_id = ? "
              "ORDER BY created_at DESC, id");
  s.Bind(1, decision_id);
  for (bool row = true;;) {
    if (!s.Step(&row, err)) return false;
    if (!row) return true;
    out->push_back(ReadEvidence(s));
  }
}

}  // namespace

namespace store_detail {

bool RecomputeDecision(Store& store, const std::string& decision_id, DecisionRecord* out, std::string* err) {
  sqlite3* db = store.handle();
  DecisionRecord d;
  {
    sql::Stmt s(db, (std::string(kDecisionColumns) + "WHERE id = ?").c_str());
    s.Bind(1, decision_id);
    bool found = false;
    if (!s.Step(&found, err)) return false;
    if (!found) {
      if (err) *err = "no decision " + decision_id;
      return false;
    }
    if (!ReadDecision(s, &d, err)) return false;
  }
  std::vector<EvidenceRecord> evidence;
  if (!LoadEvidence(db, decision_id, &evidence, err)) return false;
  DeriveDecision(evidence, &d);
  // The newest evidence dates the decision, so that recomputing after a merge is reproducible.
  for (const auto& e : evidence) d.updated_at = std::max(d.updated_at, e.created_at);
  sql::Stmt u(db,
              "UPDATE decisions SET settings_json = ?, verdict = ?, effect = ?, confidence = ?, supporting = ?, "
              "contradicting = ?, text = ?, updated_at = ?, effect_lo = ?, effect_hi = ?, comparisons = ?, "
              "operators_json = ? WHERE id = ?");
  u.Bind(1, d.settings_json).Bind(2, DecisionVerdictName(d.verdict)).Bind(3, d.effect).Bind(4, d.confidence).Bind(5, d.supporting);
  u.Bind(6, d.contradicting).Bind(7, d.text).Bind(8, d.updated_at).Bind(9, d.effect_lo).Bind(10, d.effect_hi);
  u.Bind(11, d.comparisons).Bind(12, nlohmann::json(d.operators).dump()).Bind(13, d.id);
  if (!u.Run(err)) return false;
  if (out) *out = d;
  return true;
}

bool RederiveOrDrop(Store& store, const std::string& decision_id, bool* dropped, std::string* err) {
  *dropped = false;
  sql::Stmt drop(store.handle(),
                 "DELETE FROM decisions WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM evidence WHERE decision_id = ?1)");
  drop.Bind(1, decision_id);
  if (!drop.Run(err)) return false;
  if (sqlite3_changes(store.handle()) > 0) {
    *dropped = true;
    return true;
  }
  bool found = false;
  sql::Stmt held(store.handle(), "SELECT 1 FROM decisions WHERE id = ?1");
  held.Bind(1, decision_id);
  if (!held.Step(&found, err)) return false;
  return !found || RecomputeDecision(store, decision_id, nullptr, err);
}

}  // namespace store_detail

bool Store::AddProfile(ProfileRecord* p, std::string* err) {
  std::string text = ProfileToJson(p->profile).dump();
  p->id = ContentId({"profile", p->operator_name, p->arch, p->subject, text});
  if (p->created_at.empty()) p->created_at = NowIso8601();
  return Transaction(
      [&](std::string* e) {
        sql::Stmt s(db_,
                    "INSERT OR IGNORE INTO profiles (id, operator_name, arch, subject, config, profile_json, created_at) "
                    "VALUES (?,?,?,?,?,?,?)");
        s.Bind(1, p->id).Bind(2, p->operator_name).Bind(3, p->arch).Bind(4, p->subject).Bind(5, p->profile.config);
        s.Bind(6, text).Bind(7, p->created_at);
        return s.Run(e);
      },
      err);
}

bool Store::ListProfiles(const std::string& operator_name, const std::string& arch, const std::string& subject,
                         std::vector<ProfileRecord>* out, std::string* err) {
  out->clear();
  sql::Stmt s(db_,
              "SELECT id, operator_name, arch, subject, profile_json, created_at FROM profiles WHERE "
              "(?1 = '' OR operator_name = ?1) AND (?2 = '' OR arch = ?2) AND (?3 = '' OR subject = ?3) "
              "ORDER BY created_at DESC, id");
  s.Bind(1, operator_name).Bind(2, arch).Bind(3, subject);
  for (bool row = true;;) {
    if (!s.Step(&row, err)) return false;
    if (!row) return true;
    ProfileRecord p;
    p.id = s.Text(0);
    p.operator_name = s.Text(1);
    p.arch = s.Text(2);
    p.subject = s.Text(3);
    auto j = ParseJsonLenient(s.Text(4));
    if (!ProfileFromJson(j, &p.profile, err)) return false;
    p.created_at = s.Text(5);
    out->push_back(std::move(p));
  }
}

bool Store::AddObservations(std::vector<Observation>* obs, int* added, std::string* err) {
  int count = 0;
  bool ok = Transaction(
      [&](std::string* e) {
        for (auto& o : *obs) {
          o.id = ContentId({"observation", o.operator_name, o.arch, o.subject, o.config, o.kind, o.key, o.value});
          if (o.created_at.empty()) o.created_at = NowIso8601();
          sql::Stmt s(db_,
                      "INSERT OR IGNORE INTO observations (id, operator_name, arch, subject, config, kind, key, value, "
                      "number, mechanism, evidence, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
          s.Bind(1, o.id).Bind(2, o.operator_name).Bind(3, o.arch).Bind(4, o.subject).Bind(5, o.config);
          s.Bind(6, o.kind).Bind(7, o.key).Bind(8, o.value).Bind(9, o.number).Bind(10, o.mechanism);
          s.Bind(11, o.evidence).Bind(12, o.created_at);
          if (!s.Run(e)) return false;
          count += sqlite3_changes(db_) > 0 ? 1 : 0;
        }
        return true;
      },
      err);
  if (added) *added = ok ? count : 0;
  return ok;
}

bool Store::ListObservations(const ObservationQuery& q, std::vector<Observation>* out, std::string* err) {
  out->clear();
  std::string text =
      "SELECT id, operator_name, arch, subject, config, kind, key, value, number, mechanism, evidence, created_at "
      "FROM observations WHERE (?1 = '' OR operator_name = ?1) AND (?2 = '' OR arch = ?2) AND "
      "(?3 = '' OR subject = ?3) AND (?4 = '' OR kind = ?4) AND (?5 = '' OR config = ?5) "
      "ORDER BY operator_name, arch, subject, config, kind, key, value";
  if (q.limit > 0) text += " LIMIT " + std::to_string(q.limit);
  sql::Stmt s(db_, text.c_str());
  s.Bind(1, q.operator_name).Bind(2, q.arch).Bind(3, q.subject).Bind(4, q.kind).Bind(5, q.config);
  for (bool row = true;;) {
    if (!s.Step(&row, err)) return false;
    if (!row) return true;
    Observation o;
    o.id = s.Text(0);
    o.operator_name = s.Text(1);
    o.arch = s.Text(2);
    o.subject = s.Text(3);
    o.config = s.Text(4);
    o.kind = s.Text(5);
    o.key = s.Text(6);
    o.value = s.Text(7);
    o.number = s.Real(8);
    o.mechanism = s.Text(9);
    o.evidence = s.Text(10);
    o.created_at = s.Text(11);
    out->push_back(std::move(o));
  }
}

bool Store::AddEvidence(const DecisionScope& scope, EvidenceRecord ev, DecisionRecord* decision, std::string* err) {
  if (scope.arch.empty() || scope.category.empty() || scope.regime.empty() || scope.mechanism.empty()) {
    if (err) *err = "a decision needs arch, category, regime and mechanism";
    return false;
  }
  if (ev.kind != "observation" && ev.kind != "comparison" && ev.kind != "ablation") {
    if (err) *err = "evidence of kind '" + ev.kind + "': only observation, comparison and ablation are evidence";
    return false;
  }
  ev.decision_id = DecisionId(scope);
  if (ev.id.empty())
    ev.id = ContentId({"evidence", ev.decision_id, ev.kind, ev.source, ev.config, ev.candidate_hash, ev.device,
                       ev.supports ? "+" : "-"});
  if (ev.created_at.empty()) ev.created_at = NowIso8601();
  return Transaction(
      [&](std::string* e) {
        sql::Stmt d(db_,
                    "INSERT OR IGNORE INTO decisions (id, arch, category, regime, mechanism, setting, settings_json, "
                    "verdict, effect, confidence, supporting, contradicting, text, created_at, updated_at) "
                    "VALUES (?,?,?,?,?,?,'{}','hypothesis',1.0,0,0,0,'',?,?)");
        d.Bind(1, ev.decision_id).Bind(2, scope.arch).Bind(3, scope.category).Bind(4, scope.regime);
        d.Bind(5, scope.mechanism).Bind(6, scope.setting).Bind(7, ev.created_at).Bind(8, ev.created_at);
        if (!d.Run(e)) return false;
        sql::Stmt s(db_,
                    "INSERT OR IGNORE INTO evidence (id, decision_id, kind, source, operator_name, config, "
                    "candidate_hash, settings_json, supports, speedup, metric_deltas_json, device, created_at, noise, "
                    "detail_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
        s.Bind(1, ev.id).Bind(2, ev.decision_id).Bind(3, ev.kind).Bind(4, ev.source).Bind(5, ev.operator_name);
        s.Bind(6, ev.config).Bind(7, ev.candidate_hash).Bind(8, ev.settings_json).Bind(9, ev.supports ? 1 : 0);
        s.Bind(10, ev.speedup).Bind(11, ev.metric_deltas_json).Bind(12, ev.device).Bind(13, ev.created_at);
        s.Bind(14, ev.noise).Bind(15, ev.detail_json);
        if (!s.Run(e)) return false;
        return RecomputeDecision(*this, ev.decision_id, decision, e);
      },
      err);
}

bool Store::ListDecisions(const DecisionQuery& q, std::vector<DecisionRecord>* out, std::string* err) {
  out->clear();
  std::string text = std::string(kDecisionColumns) +
                     "WHERE (?1 = '' OR arch = ?1) AND (?2 = '' OR category = ?2) AND "
                     "(?3 = '' OR regime = ?3 OR regime = 'any') AND (?4 = '' OR mechanism = ?4) AND "
                     "(?5 = '' OR verdict = ?5) ORDER BY CASE verdict WHEN 'validated' THEN 0 WHEN 'hypothesis' "
                     "THEN 1 ELSE 2 END, confidence DESC, effect DESC, mechanism, setting, regime, id";
  if (q.limit > 0) text += " LIMIT " + std::to_string(q.limit);
  sql::Stmt s(db_, text.c_str());
  s.Bind(1, q.arch).Bind(2, q.category).Bind(3, q.regime).Bind(4, q.mechanism);
  s.Bind(5, q.verdict ? DecisionVerdictName(*q.verdict) : "");
  for (bool row = true;;) {
    if (!s.Step(&row, err)) return false;
    if (!row) return true;
    DecisionRecord d;
    if (!ReadDecision(s, &d, err)) return false;
    out->push_back(std::move(d));
  }
}

bool Store::GetDecision(const std::string& id_or_prefix, DecisionRecord* out, std::vector<EvidenceRecord>* evidence,
                        bool* found, std::string* err) {
  *found = false;
  if (id_or_prefix.empty()) return true;
  sql::Stmt s(db_, (std::string(kDecisionColumns) + "WHERE substr(id, 1, length(?1)) = ?1 LIMIT 2").c_str());
  s.Bind(1, id_or_prefix);
  bool row = false;
  if (!s.Step(&row, err)) return false;
  if (!row) return true;
  DecisionRecord d;
  if (!ReadDecision(s, &d, err)) return false;
  if (!s.Step(&row, err)) return false;
  if (row) {
    if (err) *err = "decision id prefix '" + id_or_prefix + "' is ambiguous; give more characters";
    return false;
  }
  *found = true;
  *out = d;
  return evidence ? LoadEvidence(db_, d.id, evidence, err) : true;
}

}  // namespace forgek
