// The knowledge store: one SQLite file holding everything forgek learns and does, across runs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "forgek/core/decision.h"
#include "forgek/core/evaluation.h"
#include "forgek/core/peaks.h"
#include "forgek/core/profile.h"

struct sqlite3;

namespace forgek {

// Every id is text: a content hash (candidates, profiles, observations, decisions, evidence,
// seals) or a random 128-bit hex id (runs, attempts, exchanges), so that stores written on
// different machines merge without renumbering. Times are ISO-8601 UTC ("2026-11-29T15:40:00Z");
// a record's id and created_at are filled by the store when left empty.

// A GPU with its peaks: datasheet values until `forgek doctor --calibrate` measures them.
struct DeviceRecord {
  std::string name;             // "NVIDIA H200" (key, with arch)
  std::string arch;             // sm90 | sm100
  int sm_count = 0;
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
  std::string driver;           // "580.159.04"
  DevicePeaks peaks;            // stored as peaks_json (ToJson of DevicePeaks)
  bool calibrated = false;      // peaks were measured on this device (else datasheet)
  std::string calibrated_at;
};

struct OperatorRecord {
  std::string name;             // key
  std::string category;         // gemm, norm, ...
  std::string description;
};

// One optimisation session of one operator on one arch.
struct RunRecord {
  std::string id;
  std::string operator_name;
  std::string arch;
  std::string device;           // device name
  std::string agent;            // builtin | llm | replay
  std::string incumbent;        // "reference" or a seal id
  std::string status = "running";  // running | finished | failed | interrupted
  std::string summary_json = "{}";  // free-form: budget, best speedup, seal made
  std::string created_at;
  std::string finished_at;
};

// A proposed kernel, deduplicated by content hash (forgek/hash.h CandidateHash).
struct CandidateRecord {
  std::string hash;
  std::string operator_name;
  std::string source;           // the whole .cu text, manifest included
  std::string params_json = "{}";  // the ParamAssignment it is compiled with
  std::string family;           // family file it instantiates, or ""
  std::vector<std::string> mechanisms;  // as claimed by its manifest
  std::string created_at;
};

// Per-config measurements of one attempt.
struct AttemptMeasurement {
  std::string config;
  bool correct = false;
  double rel_l2 = 0, max_abs = 0;
  double candidate_us = 0, incumbent_us = 0, rel_noise = 0;
  double speedup = 0, sol_pct = 0;
};

// One evaluated candidate inside a run.
struct AttemptRecord {
  std::string id;
  std::string run_id;
  int iteration = 0;
  std::string candidate_hash;
  Outcome outcome = Outcome::crash;
  std::string detail;           // the feedback text
  std::string rationale;        // why the agent proposed it
  double geomean_speedup = 0;
  double wall_s = 0;
  std::vector<AttemptMeasurement> measurements;
  std::string created_at;
};

// A timed attempt of any run of an operator, with its candidate's family and params: what later
// runs start from (run/prior_results.h).
struct TimedAttempt {
  std::string run_id;
  int iteration = 0;
  std::string candidate_hash;
  std::string outcome;          // faster | same | slower
  std::string family;
  std::string params_json = "{}";
  double geomean_speedup = 0;
  std::vector<AttemptMeasurement> measurements;
};

// A KernelProfile of some subject on one config, kept whole (JSON) for later analysis.
// The subject of a profile kept as a cache by the run (run/incumbent_analysis.cc): this machine's
// measurement of a kernel, found again by its key. It is never exported nor imported: a profile
// from elsewhere would stand in for a measurement this store never made.
inline constexpr char kProfileCachePrefix[] = "analysis-cache:";

struct ProfileRecord {
  std::string id;               // content hash of the other fields
  std::string operator_name;
  std::string arch;
  std::string subject;          // "reference", "candidate:<hash>", "seal:<id>", kProfileCachePrefix + key
  KernelProfile profile;
  std::string created_at;
};

// A measured fact about a kernel's hardware behaviour (see knowledge.h for how they are made).
struct Observation {
  std::string id;               // content hash of operator, arch, subject, config, kind, key, value
  std::string operator_name;
  std::string arch;
  std::string subject;          // "reference", "candidate:<hash>", "seal:<id>"
  std::string config;           // config name, or "" when it holds for every config
  std::string kind;             // launch | name | metric | sass | roofline
  std::string key;              // "tile", "stages", "cluster", "warpgroups", "bottleneck", "HGMMA", ...
  std::string value;            // "320x128", "memory", "yes", ...
  double number = 0;            // the numeric value where there is one
  std::string mechanism;        // mechanism id this fact points to ("wgmma"), or ""
  std::string evidence;         // where it comes from, for a person: "kernel name field 320x128"
  std::string created_at;
};

// One entry of the mechanism catalogue (knowledge/mechanisms/*.json), mirrored in the store.
struct MechanismRecord {
  std::string id;               // "wgmma", "tma", "cluster_multicast", ...
  std::string name;             // human name
  std::vector<std::string> archs;  // sm90, sm100
  std::string json;             // the whole catalogue entry
};

// Which decision a piece of evidence bears on: mechanism M for category C on arch A in regime R.
struct DecisionScope {
  std::string arch;
  std::string category;
  std::string regime;           // "large", "skinny", "small", ... (see knowledge.h ShapeRegime)
  std::string mechanism;
  std::string setting;          // a named setting of the params that control it ("stages=4"), or "" for the
                                // mechanism as a whole (hypotheses from expert kernels)
};

// One reason to believe (or doubt) a decision: an observation of an expert kernel, or a controlled
// comparison (two timings that differ only in the params that control the decision's mechanism).
struct EvidenceRecord {
  std::string id;               // content hash of decision id, kind, source
  std::string decision_id;      // filled by AddEvidence
  std::string kind;             // observation | comparison (two search attempts) | ablation (interleaved)
  std::string source;           // what was seen: "reference kernel nvjet_... on gemm_bf16/8192",
                                // "attempt <id> of run <id>"
  std::string operator_name;
  std::string config;           // "" when it aggregates several configs
  std::string candidate_hash;   // attempts only
  std::string settings_json = "{}";  // the mechanism's settings in that kernel
  bool supports = true;         // false: contradicts
  double speedup = 0;           // comparisons: time of the alternative / time with this setting (> 1: helps)
  double noise = 0;             // comparisons: relative noise of that speedup (verdict.h RatioNoise)
  std::string detail_json = "{}";  // comparisons: {"against": setting, "attempts": [...], "configs": [...]}
  std::string metric_deltas_json = "{}";  // metric -> this setting minus the alternative (profiled)
  std::string device;           // GPU it was measured on
  std::string created_at;
};

// A knowledge entry. Everything but the scope is derived from its evidence (see Store::AddEvidence).
struct DecisionRecord {
  std::string id;               // content hash of the scope
  DecisionScope scope;
  std::string settings_json = "{}";  // the setting as params ({"STAGES":4}); {} for a whole mechanism
  DecisionVerdict verdict = DecisionVerdict::hypothesis;
  double effect = 1.0;          // geomean speedup over its comparisons (1.0 when none)
  double effect_lo = 1.0, effect_hi = 1.0;  // effect x (1 -/+ its propagated noise)
  int comparisons = 0;          // controlled comparisons behind it
  std::vector<std::string> operators;  // operators its evidence comes from
  double confidence = 0;        // 0..1, grows with independent evidence, falls when contradicted
  int supporting = 0, contradicting = 0;  // evidence counts
  std::string text;             // one line for a person or a prompt
  std::string created_at, updated_at;
};

struct DecisionQuery {
  std::string arch, category, regime, mechanism;  // "" matches any; regime also matches "any"
  std::optional<DecisionVerdict> verdict;         // none: any
  int limit = 0;                                  // 0: no limit
};

struct ObservationQuery {
  std::string operator_name, arch, subject, kind, config;  // "" matches any
  int limit = 0;
};

// An immutable, validated kernel with its lineage.
struct SealRecord {
  std::string id;               // given by the sealer (content hash); must be unique
  std::string operator_name;
  std::string arch;
  std::string candidate_hash;
  std::string params_json = "{}";
  std::string parent;           // parent seal id, or "" when it beat the expert reference
  std::string run_id;
  std::string cubin_sha256;
  std::string toolchain, driver, device;
  std::map<std::string, double> config_us;  // per-config median time
  double geomean_speedup = 0;   // vs the incumbent it replaced
  std::string metadata_json = "{}";  // anything else the sealer keeps (profile summary, ...)
  std::string created_at;
};

// One line of the nightly history (`forgek regress`): a config of a seal re-checked against the
// expert reference, or the whole seal (config "") when it was skipped, could not be measured, or
// was checked beyond the suite.
struct SealCheckRecord {
  std::string check_id;  // one `forgek regress`
  std::string seal_id, operator_name, arch, device, driver, toolchain;
  std::string config;
  std::string result;    // same | faster | slower | wrong | unmeasured | skipped | error | beyond_suite_ok | beyond_suite_failed
  double now_us = 0, expert_us = 0, sealed_us = 0, speedup = 0, noise = 0;
  std::string message;
  std::string checked_at;
};

// One LLM request/response, for accounting and replay.
struct ExchangeRecord {
  std::string id;
  std::string run_id;
  int iteration = 0;
  int turn = 0;                 // 0: proposal, 1..: repair turns
  std::string provider;         // openai | anthropic | replay
  std::string model;
  std::string request_json;     // the request body (never the key)
  std::string response_json;    // the response body, or "" on failure
  int http_status = 0;
  int64_t prompt_tokens = 0, completion_tokens = 0;
  double cost_usd = 0;
  double latency_s = 0;
  std::string error;
  std::string created_at;
};

// How Open treats the file.
enum class StoreMode {
  create,     // create the file (and its folders) when missing; migrate an older schema
  existing,   // fail when the file is missing; migrate an older schema
  read_only,  // fail when missing; never write (an older schema is an error, not migrated)
};

// One open store file. A Store is used by one thread at a time (give each thread or process its
// own); any number of Stores, in any processes, may use one file at once.
class Store {
 public:
  Store();
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // The schema version this build writes; a store with a newer one is refused.
  static int CurrentSchemaVersion();

  // Opens (and creates/migrates per `mode`) the store at `path`. A corrupt or foreign file, or one
  // from a newer forgek, is an error naming the path; it is never replaced.
  bool Open(const std::string& path, std::string* err, StoreMode mode = StoreMode::create);
  void Close();
  bool IsOpen() const { return db_ != nullptr; }
  const std::string& path() const { return path_; }
  int SchemaVersion() const { return schema_version_; }

  // Runs `body` inside one transaction (nested calls become savepoints); rolls back when it
  // returns false. Every write method below is already one transaction on its own.
  template <typename F>
  bool Transaction(F&& body, std::string* err);

  // Devices: insert or replace by (name, arch).
  bool UpsertDevice(const DeviceRecord& d, std::string* err);
  // Looks up a device; *found=false when absent.
  bool FindDevice(const std::string& name, const std::string& arch, DeviceRecord* out, bool* found, std::string* err);
  bool ListDevices(std::vector<DeviceRecord>* out, std::string* err);

  // Operators: insert or replace by name.
  bool UpsertOperator(const OperatorRecord& op, std::string* err);
  bool ListOperators(std::vector<OperatorRecord>* out, std::string* err);

  // Runs: AddRun fills run->id and created_at; FinishRun sets status, summary and finished_at.
  bool AddRun(RunRecord* run, std::string* err);
  bool FinishRun(const std::string& run_id, const std::string& status, const std::string& summary_json,
                 std::string* err);
  bool GetRun(const std::string& run_id, RunRecord* out, bool* found, std::string* err);
  // Runs of an operator (and arch when not ""), newest first.
  bool ListRuns(const std::string& operator_name, const std::string& arch, std::vector<RunRecord>* out,
                std::string* err);

  // Candidates: stored once per hash; *inserted=false when it was already there.
  bool PutCandidate(const CandidateRecord& c, bool* inserted, std::string* err);
  bool GetCandidate(const std::string& hash, CandidateRecord* out, bool* found, std::string* err);

  // Attempts: fills attempt->id and created_at; the run and candidate must exist.
  bool AddAttempt(AttemptRecord* attempt, std::string* err);
  // Attempts of a run in iteration order.
  bool ListAttempts(const std::string& run_id, std::vector<AttemptRecord>* out, std::string* err);
  // Timed attempts (faster or slower) of family instances for an operator on an arch, over all
  // runs, best geomean speedup first, at most `limit`.
  bool ListTimedAttempts(const std::string& operator_name, const std::string& arch, int limit,
                         std::vector<TimedAttempt>* out, std::string* err);

  // Profiles: deduplicated by content; fills profile->id.
  bool AddProfile(ProfileRecord* profile, std::string* err);
  bool ListProfiles(const std::string& operator_name, const std::string& arch, const std::string& subject,
                    std::vector<ProfileRecord>* out, std::string* err);

  // Observations: deduplicated by content (ids filled in place); *added counts the new ones.
  bool AddObservations(std::vector<Observation>* obs, int* added, std::string* err);
  bool ListObservations(const ObservationQuery& q, std::vector<Observation>* out, std::string* err);

  // Mechanisms: insert or replace by id.
  bool UpsertMechanism(const MechanismRecord& m, std::string* err);
  bool ListMechanisms(std::vector<MechanismRecord>* out, std::string* err);

  // Adds evidence to the decision of `scope` (creating it), then re-derives the decision's
  // verdict, effect, confidence and settings from all of its evidence. Evidence already present
  // (same id) is not counted twice. `decision` (optional) receives the updated decision.
  bool AddEvidence(const DecisionScope& scope, EvidenceRecord ev, DecisionRecord* decision, std::string* err);
  // Decisions matching `q`, best first (validated before hypothesis before refuted, then by
  // confidence and effect).
  bool ListDecisions(const DecisionQuery& q, std::vector<DecisionRecord>* out, std::string* err);
  // One decision by id (or unique id prefix) with its evidence, newest first.
  bool GetDecision(const std::string& id_or_prefix, DecisionRecord* out, std::vector<EvidenceRecord>* evidence,
                   bool* found, std::string* err);

  // Seals are immutable: adding an id that exists is an error unless the record is identical.
  bool AddSeal(const SealRecord& seal, std::string* err);
  bool GetSeal(const std::string& id, SealRecord* out, bool* found, std::string* err);
  // The newest seal of (operator, arch); *found=false when there is none.
  bool LatestSeal(const std::string& operator_name, const std::string& arch, SealRecord* out, bool* found,
                  std::string* err);
  bool ListSeals(const std::string& operator_name, const std::string& arch, std::vector<SealRecord>* out,
                 std::string* err);
  // The seal and its ancestors, newest first.
  bool SealLineage(const std::string& id, std::vector<SealRecord>* out, std::string* err);

  // Sealed binaries by the SHA-256 of their bytes (which PutCubin checks); adding one that is there
  // is a no-op. `rebuilt`: compiled again after sealing (an older store's seal), not kept at sealing.
  bool PutCubin(const std::string& sha256, const std::string& bytes, const std::string& toolchain, bool rebuilt,
                std::string* err);
  bool GetCubin(const std::string& sha256, std::string* bytes, bool* found, bool* rebuilt, std::string* err);

  // The nightly history: rows added in one transaction (all or none); listed oldest first, by seal
  // id and/or operator ("" for any).
  bool AddSealChecks(const std::vector<SealCheckRecord>& rows, std::string* err);
  bool ListSealChecks(const std::string& seal_id, const std::string& operator_name,
                      std::vector<SealCheckRecord>* out, std::string* err);

  // LLM exchanges: fills ex->id and created_at.
  bool AddExchange(ExchangeRecord* ex, std::string* err);
  // Exchanges of a run in (iteration, turn, time) order.
  bool ListExchanges(const std::string& run_id, std::vector<ExchangeRecord>* out, std::string* err);

  // The underlying handle, for the store's own modules (export, migrations).
  sqlite3* handle() const { return db_; }
  // Begin/commit/rollback of the (possibly nested) transaction Transaction() uses.
  bool Begin(std::string* err);
  bool Commit(std::string* err);
  void Rollback();

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
  int schema_version_ = 0;
  int tx_depth_ = 0;
};

template <typename F>
bool Store::Transaction(F&& body, std::string* err) {
  if (!Begin(err)) return false;
  if (!body(err)) {
    Rollback();
    return false;
  }
  if (!Commit(err)) {
    Rollback();
    return false;
  }
  return true;
}

// The current time as ISO-8601 UTC, as the store writes it.
std::string NowIso8601();

}  // namespace forgek
