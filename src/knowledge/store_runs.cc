// Store: runs, candidates (deduplicated by content hash), attempts with measurements, LLM exchanges.
#include "forgek/knowledge/store.h"
#include "sql.h"
#include "store_internal.h"

namespace forgek {

using namespace store_detail;

namespace {

// Outcomes are stored by name (core's OutcomeName); an unknown name reads as a crash.
std::string OutcomeText(Outcome o) { return OutcomeName(o); }

Outcome OutcomeFromText(const std::string& s) {
  Outcome o = Outcome::crash;
  ParseOutcome(s, &o);
  return o;
}

constexpr const char* kRunColumns =
    "SELECT id, operator_name, arch, device, agent, incumbent, status, summary_json, created_at, finished_at FROM runs ";

RunRecord ReadRun(const sql::Stmt& s) {
  RunRecord r;
  r.id = s.Text(0);
  r.operator_name = s.Text(1);
  r.arch = s.Text(2);
  r.device = s.Text(3);
  r.agent = s.Text(4);
  r.incumbent = s.Text(5);
  r.status = s.Text(6);
  r.summary_json = s.Text(7);
  r.created_at = s.Text(8);
  r.finished_at = s.Text(9);
  return r;
}

// The per-config measurements of one attempt, by config name.
bool ReadMeasurements(sqlite3* db, const std::string& attempt_id, std::vector<AttemptMeasurement>* out,
                      std::string* err) {
  sql::Stmt ms(db,
               "SELECT config, correct, rel_l2, max_abs, candidate_us, incumbent_us, rel_noise, speedup, sol_pct "
               "FROM attempt_measurements WHERE attempt_id = ? ORDER BY config");
  ms.Bind(1, attempt_id);
  for (bool row = true;;) {
    if (!ms.Step(&row, err)) return false;
    if (!row) return true;
    out->push_back({ms.Text(0), ms.Int(1) != 0, ms.Real(2), ms.Real(3), ms.Real(4), ms.Real(5), ms.Real(6),
                    ms.Real(7), ms.Real(8)});
  }
}

}  // namespace

bool Store::AddRun(RunRecord* run, std::string* err) {
  if (run->id.empty()) run->id = RandomId();
  if (run->created_at.empty()) run->created_at = NowIso8601();
  return Transaction(
      [&](std::string* e) {
        sql::Stmt s(db_,
                    "INSERT INTO runs (id, operator_name, arch, device, agent, incumbent, status, summary_json, "
                    "created_at, finished_at) VALUES (?,?,?,?,?,?,?,?,?,?)");
        s.Bind(1, run->id).Bind(2, run->operator_name).Bind(3, run->arch).Bind(4, run->device).Bind(5, run->agent);
        s.Bind(6, run->incumbent).Bind(7, run->status).Bind(8, run->summary_json).Bind(9, run->created_at);
        s.Bind(10, run->finished_at);
        return s.Run(e);
      },
      err);
}

bool Store::FinishRun(const std::string& run_id, const std::string& status, const std::string& summary_json,
                      std::string* err) {
  return Transaction(
      [&](std::string* e) {
        sql::Stmt s(db_, "UPDATE runs SET status = ?, summary_json = ?, finished_at = ? WHERE id = ?");
        s.Bind(1, status).Bind(2, summary_json).Bind(3, NowIso8601()).Bind(4, run_id);
        if (!s.Run(e)) return false;
        if (sqlite3_changes(db_) == 0) {
          if (e) *e = "no run " + run_id + " in the knowledge store";
          return false;
        }
        return true;
      },
      err);
}

bool Store::GetRun(const std::string& run_id, RunRecord* out, bool* found, std::string* err) {
  sql::Stmt s(db_, (std::string(kRunColumns) + "WHERE id = ?").c_str());
  s.Bind(1, run_id);
  if (!s.Step(found, err)) return false;
  if (*found) *out = ReadRun(s);
  return true;
}

bool Store::ListRuns(const std::string& operator_name, const std::string& arch, std::vector<RunRecord>* out,
                     std::string* err) {
  out->clear();
  sql::Stmt s(db_, (std::string(kRunColumns) +
                    "WHERE (?1 = '' OR operator_name = ?1) AND (?2 = '' OR arch = ?2) ORDER BY created_at DESC, id")
                       .c_str());
  s.Bind(1, operator_name).Bind(2, arch);
  for (bool row = true;;) {
    if (!s.Step(&row, err)) return false;
    if (!row) return true;
    out->push_back(ReadRun(s));
  }
}

bool Store::PutCandidate(const CandidateRecord& c, bool* inserted, std::string* err) {
  if (c.hash.empty()) {
    if (err) *err = "a candidate needs its content hash (forgek/hash.h CandidateHash)";
    return false;
  }
  std::string created = c.created_at.empty() ? NowIso8601() : c.created_at;
  return Transaction(
      [&](std::string* e) {
        sql::Stmt s(db_,
                    "INSERT OR IGNORE INTO candidates (hash, operator_name, source, params_json, family, "
                    "mechanisms_json, created_at) VALUES (?,?,?,?,?,?,?)");
        s.Bind(1, c.hash).Bind(2, c.operator_name).Bind(3, c.source).Bind(4, c.params_json).Bind(5, c.family);
        s.Bind(6, ToJson(c.mechanisms)).Bind(7, created);
        if (!s.Run(e)) return false;
        if (inserted) *inserted = sqlite3_changes(db_) > 0;
        return true;
      },
      err);
}

bool Store::GetCandidate(const std::string& hash, CandidateRecord* out, bool* found, std::string* err) {
  sql::Stmt s(db_,
              "SELECT hash, operator_name, source, params_json, family, mechanisms_json, created_at FROM candidates "
              "WHERE hash = ?");
  s.Bind(1, hash);
  if (!s.Step(found, err)) return false;
  if (*found) {
    out->hash = s.Text(0);
    out->operator_name = s.Text(1);
    out->source = s.Text(2);
    out->params_json = s.Text(3);
    out->family = s.Text(4);
    out->mechanisms = StringsFromJson(s.Text(5));
    out->created_at = s.Text(6);
  }
  return true;
}

bool Store::AddAttempt(AttemptRecord* a, std::string* err) {
  if (a->id.empty()) a->id = RandomId();
  if (a->created_at.empty()) a->created_at = NowIso8601();
  return Transaction(
      [&](std::string* e) {
        sql::Stmt s(db_,
                    "INSERT INTO attempts (id, run_id, iteration, candidate_hash, outcome, detail, rationale, "
                    "geomean_speedup, wall_s, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)");
        s.Bind(1, a->id).Bind(2, a->run_id).Bind(3, a->iteration).Bind(4, a->candidate_hash);
        s.Bind(5, OutcomeText(a->outcome)).Bind(6, a->detail).Bind(7, a->rationale);
        s.Bind(8, a->geomean_speedup).Bind(9, a->wall_s).Bind(10, a->created_at);
        if (!s.Run(e)) {
          if (e && e->find("FOREIGN KEY") != std::string::npos)
            *e = "attempt " + a->id + " names a run (" + a->run_id + ") or candidate (" + a->candidate_hash +
                 ") that is not in the store: add them first";
          return false;
        }
        for (const auto& m : a->measurements) {
          sql::Stmt ms(db_,
                       "INSERT INTO attempt_measurements (attempt_id, config, correct, rel_l2, max_abs, candidate_us, "
                       "incumbent_us, rel_noise, speedup, sol_pct) VALUES (?,?,?,?,?,?,?,?,?,?)");
          ms.Bind(1, a->id).Bind(2, m.config).Bind(3, m.correct ? 1 : 0).Bind(4, m.rel_l2).Bind(5, m.max_abs);
          ms.Bind(6, m.candidate_us).Bind(7, m.incumbent_us).Bind(8, m.rel_noise).Bind(9, m.speedup);
          ms.Bind(10, m.sol_pct);
          if (!ms.Run(e)) return false;
        }
        return true;
      },
      err);
}

bool Store::ListAttempts(const std::string& run_id, std::vector<AttemptRecord>* out, std::string* err) {
  out->clear();
  sql::Stmt s(db_,
              "SELECT id, run_id, iteration, candidate_hash, outcome, detail, rationale, geomean_speedup, wall_s, "
              "created_at FROM attempts WHERE run_id = ? ORDER BY iteration, created_at, id");
  s.Bind(1, run_id);
  for (bool row = true;;) {
    if (!s.Step(&row, err)) return false;
    if (!row) break;
    AttemptRecord a;
    a.id = s.Text(0);
    a.run_id = s.Text(1);
    a.iteration = static_cast<int>(s.Int(2));
    a.candidate_hash = s.Text(3);
    a.outcome = OutcomeFromText(s.Text(4));
    a.detail = s.Text(5);
    a.rationale = s.Text(6);
    a.geomean_speedup = s.Real(7);
    a.wall_s = s.Real(8);
    a.created_at = s.Text(9);
    out->push_back(std::move(a));
  }
  for (auto& a : *out)
    if (!ReadMeasurements(db_, a.id, &a.measurements, err)) return false;
  return true;
}

bool Store::ListTimedAttempts(const std::string& operator_name, const std::string& arch, int limit,
                              std::vector<TimedAttempt>* out, std::string* err) {
  out->clear();
  // One query: the best `limit` attempts joined with their measurements, attempt by attempt.
  sql::Stmt s(db_,
              "SELECT t.id, t.run_id, t.iteration, t.family, t.params_json, t.geomean_speedup, m.config, m.correct, "
              "m.rel_l2, m.max_abs, m.candidate_us, m.incumbent_us, m.rel_noise, m.speedup, m.sol_pct, t.hash, "
              "t.outcome FROM ("
              "SELECT a.id, a.run_id, a.iteration, c.family, c.params_json, a.geomean_speedup, a.created_at, c.hash, "
              "a.outcome FROM attempts a JOIN runs r ON r.id = a.run_id JOIN candidates c ON c.hash = a.candidate_hash "
              "WHERE r.operator_name = ? AND r.arch = ? AND a.outcome IN ('faster', 'same', 'slower') "
              "ORDER BY a.geomean_speedup DESC, a.created_at, a.id LIMIT ?) t "
              "LEFT JOIN attempt_measurements m ON m.attempt_id = t.id "
              "ORDER BY t.geomean_speedup DESC, t.created_at, t.id, m.config");
  s.Bind(1, operator_name);
  s.Bind(2, arch);
  s.Bind(3, static_cast<int64_t>(limit));
  std::string last_id;
  for (bool row = true;;) {
    if (!s.Step(&row, err)) return false;
    if (!row) return true;
    if (out->empty() || s.Text(0) != last_id) {
      last_id = s.Text(0);
      TimedAttempt a;
      a.run_id = s.Text(1);
      a.iteration = static_cast<int>(s.Int(2));
      a.family = s.Text(3);
      a.params_json = s.Text(4);
      a.geomean_speedup = s.Real(5);
      a.candidate_hash = s.Text(15);
      a.outcome = s.Text(16);
      out->push_back(std::move(a));
    }
    if (!s.IsNull(6))
      out->back().measurements.push_back({s.Text(6), s.Int(7) != 0, s.Real(8), s.Real(9), s.Real(10), s.Real(11),
                                          s.Real(12), s.Real(13), s.Real(14)});
  }
}

bool Store::AddExchange(ExchangeRecord* x, std::string* err) {
  if (x->id.empty()) x->id = RandomId();
  if (x->created_at.empty()) x->created_at = NowIso8601();
  return Transaction(
      [&](std::string* e) {
        sql::Stmt s(db_,
                    "INSERT INTO exchanges (id, run_id, iteration, turn, provider, model, request_json, response_json, "
                    "http_status, prompt_tokens, completion_tokens, cost_usd, latency_s, error, created_at) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
        s.Bind(1, x->id).Bind(2, x->run_id).Bind(3, x->iteration).Bind(4, x->turn).Bind(5, x->provider);
        s.Bind(6, x->model).Bind(7, x->request_json).Bind(8, x->response_json).Bind(9, x->http_status);
        s.Bind(10, x->prompt_tokens).Bind(11, x->completion_tokens).Bind(12, x->cost_usd).Bind(13, x->latency_s);
        s.Bind(14, x->error).Bind(15, x->created_at);
        return s.Run(e);
      },
      err);
}

bool Store::ListExchanges(const std::string& run_id, std::vector<ExchangeRecord>* out, std::string* err) {
  out->clear();
  sql::Stmt s(db_,
              "SELECT id, run_id, iteration, turn, provider, model, request_json, response_json, http_status, "
              "prompt_tokens, completion_tokens, cost_usd, latency_s, error, created_at FROM exchanges "
              "WHERE run_id = ? ORDER BY iteration, turn, created_at, rowid");
  s.Bind(1, run_id);
  for (bool row = true;;) {
    if (!s.Step(&row, err)) return false;
    if (!row) return true;
    ExchangeRecord x;
    x.id = s.Text(0);
    x.run_id = s.Text(1);
    x.iteration = static_cast<int>(s.Int(2));
    x.turn = static_cast<int>(s.Int(3));
    x.provider = s.Text(4);
    x.model = s.Text(5);
    x.request_json = s.Text(6);
    x.response_json = s.Text(7);
    x.http_status = static_cast<int>(s.Int(8));
    x.prompt_tokens = s.Int(9);
    x.completion_tokens = s.Int(10);
    x.cost_usd = s.Real(11);
    x.latency_s = s.Real(12);
    x.error = s.Text(13);
    x.created_at = s.Text(14);
    out->push_back(std::move(x));
  }
}

}  // namespace forgek
