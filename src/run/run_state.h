// The state of one run between its steps: incumbent, history, best candidate, records. Its methods
// live in one file per stage: run_start.cc (the incumbent, the reference's analysis, the run's
// record), run_attempt.cc (a proposal evaluated, recorded, kept), run_learn.cc (comparisons, the
// best's profile, ablations), run_seal.cc and run_dispatch.cc (confirm and seal one kernel or a
// dispatch), run_end.cc (the summary and the run closed); run_state.cc holds what they share.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "forgek/seal/dispatch.h"
#include "forgek/knowledge/knowledge.h"
#include "forgek/run/run.h"
#include "forgek/seal/seal.h"
#include "invented_families.h"
#include "prior_results.h"
#include "forgek/seal/incumbent.h"

namespace forgek {

class RunState {
 public:
  RunState(const OperatorSpec& op, const RunOptions& opts, RunServices& services, RunSummary* summary);

  // Picks and checks the incumbent, profiles and analyses it, opens (or resumes) the run record.
  bool Begin(std::string* err);
  // "" while the budget lasts, else why the run stops (iterations, time, patience, interrupted).
  StopReason BudgetSpent(double elapsed_s) const;
  int AttemptsLeft() const;
  int AttemptsMade() const { return attempts_this_run_; }
  // The agent's view: operator, hardware, incumbent analysis, fresh decisions, history.
  ProposalContext Context();
  // A compiled proposal with its evaluation (none when it did not compile or with --compile-only).
  struct Evaluated {
    Proposal proposal;
    CompileResult compiled;
    EvalResult result;
    bool evaluated = false;
    Evaluator* evaluator = nullptr;  // the GPU it was evaluated on (free again when it commits)
  };
  // Evaluates one compiled proposal against the incumbent on `evaluator`. Touches no state of
  // the run: several GPUs evaluate at once, each timing candidate and incumbent on itself.
  Evaluated EvaluateProposal(const Proposal& proposal, const CompileResult& compiled, Evaluator* evaluator) const;
  // Records an evaluated proposal, learns from it and updates the best. One at a time.
  bool Commit(const Evaluated& evaluated, std::string* err);
  // EvaluateProposal on the run's evaluator, then Commit.
  bool Attempt(const Proposal& proposal, const CompileResult& compiled, std::string* err);
  // Confirms and seals the best candidate when it qualifies; fills the summary; closes the run.
  bool Finish(std::string* err);
  // A named stage of the run took `seconds` (the summary lists them in order).
  void AddStage(const std::string& name, double seconds, const std::string& note = "");
  // Ends a run that cannot go on: the summary says what it did, the store records it `failed`
  // with `reason`. False (with why in *err) when the store refuses even that write.
  bool Fail(const std::string& reason, std::string* err);

 private:
  struct Best {
    Proposal proposal;
    KernelUnderTest kernel;
    EvalResult result;
    std::string hash;
    std::string cubin_sha256;
    int iteration = -1;
  };

  // The steps of Begin, in order (run_start.cc).
  void LoadSearchSpace();
  void LoadKnowledge();
  void CollectRegimes();
  bool PrepareIncumbent(std::string* err);
  void RecheckSealedIncumbent();
  void AnalyzeTheIncumbent();
  bool OpenRunRecord(std::string* err);
  void LoadEarlierResults();

  bool RecordAttempt(const Proposal& p, const std::string& hash, const EvalResult* result, AttemptSummary* a,
                     std::string* attempt_id, std::string* err);
  // Controlled pairs: the attempt against every earlier timed attempt of its family that differs
  // from it only in the params of one control group.
  void Learn(const Proposal& p, const std::string& hash, const std::string& attempt_id, const EvalResult& result);
  void RecordLearned(const SettingComparison& c);
  // After the search: the best with one controlled param moved, timed interleaved against it;
  // `best_metrics` (the best's profile on `metrics_config`, may be empty) give each ablation its
  // metric deltas. Under --time an ablation runs only when it and the confirmation still fit
  // (`note` says where they were cut).
  void RunAblations(const std::map<std::string, double>& best_metrics, const std::string& metrics_config,
                    std::string* note);
  // The best profiled (observations of a candidate, never hypotheses) and its claimed mechanisms
  // checked against its SASS; `metrics` receives its first profiled config's metrics and
  // `metrics_config` that config (both empty when unprofiled). Under --time a config is profiled only
  // when its profile and the confirmation still fit (`note` says how many were).
  void AnalyzeBest(std::map<std::string, double>* metrics, std::string* metrics_config, std::string* note);
  void SummarizeLearned();
  bool SealBest(std::string* err);
  // An operator with a PyTorch yardstick (YardstickOf: a PyTorch golden, or operator.json's
  // "yardstick"): the kernel serving each config after the run (the new seal's, else the
  // incumbent's) timed with PyTorch eager and torch.compile beside it (the yardstick people
  // quote); into the summary's configs. A failure is said there, not fatal.
  void MeasureTorchYardstick();
  // False (with the reason in the summary) when this run may not seal: --no-seal, --config.
  bool SealingAllowed();
  // When no single kernel sealed: assembles the dispatch of the candidates measured (per config the
  // fastest beyond noise, else the incumbent), says per config why, confirms and seals it.
  bool SealDispatch(std::string* err);
  // The run's measured candidates, then, when the incumbent is a seal, the expert reference as one
  // more candidate (its Begin measurement against the seal, inverted): a dispatch may hand a config
  // back to the expert wherever it is the fastest.
  std::vector<DispatchCandidate> DispatchCandidates() const;
  // A sealed incumbent's own kernel as a dispatch's primary (iteration -1: not an attempt of this run).
  Best IncumbentAsBest() const;
  // The expert reference's index among DispatchCandidates(); -2 (no index) when it is not one.
  int ExpertCandidate() const;
  // The kernel a dispatch index runs on `config`: a measured candidate, the expert or the incumbent (-1).
  const KernelUnderTest* DispatchKernelFor(int candidate, const std::string& config) const;
  // Drops measured candidates that can no longer serve a dispatch (fastest nowhere, not the fallback).
  void PruneMeasured();
  std::string KernelText(int measured) const;  // "attempt 7 (tiled.cu TILE=8)", "incumbent (...)"
  std::string KernelText(const Best& m) const;
  std::vector<std::string> ConfigNames() const;  // the configs this run evaluates
  // Evaluates `req` with, per config, the candidate and incumbent the functions name: configs that
  // share both kernels go in one request, the parts are merged (a dispatch on either side).
  using KernelFor = std::function<const KernelUnderTest*(const std::string& config)>;
  EvalResult EvaluateByConfig(Evaluator* evaluator, EvalRequest req, const KernelFor& candidate_for,
                              const KernelFor& incumbent_for) const;
  // Records the seal of `primary` (a dispatch's kernels in `metadata`) confirmed by `confirmation`.
  // Seals `primary` on `confirmation`: `origin` brings what the sealing step knows (family,
  // mechanisms, rationale, a dispatch's table and rows), the run fills the rest.
  bool WriteSeal(const Best& primary, const EvalResult& confirmation, const SealVerdict& verdict, SealOrigin origin,
                 std::string* err);
  // Stores every cubin `seal` names (its own, its dispatch table's) from the kernels this run
  // measured, so that export and verify need no rebuild.
  bool KeepSealedCubins(const SealRecord& seal, std::string* err);
  // Confirms `winner` on fresh seeds with a fresh timing (into *confirmation) and seals it if the
  // rule holds; *sealed false with the reason in *why when it does not; false on a store error.
  bool ConfirmAndSeal(const Best& winner, EvalResult* confirmation, bool* sealed, std::string* why,
                      std::string* err);
  // Each kernel checked for correctness on shapes outside the suite (operator.json "ranges"), each
  // result a line of the summary: false with the first failure in *why.
  bool CheckOutsideSuite(const std::vector<std::pair<std::string, const KernelUnderTest*>>& kernels,
                         std::string* why);
  // Checks every kernel dispatch `d` can serve (docs/seal-format.md): the fallback on every config
  // against the expert and outside the suite (the expert takes its place where it fails, said in
  // d->fallback_reason), each other kernel outside the suite. False with the reason in *why when a
  // kernel of the table is wrong there; *fallback_reference: the expert serves other shapes.
  bool CheckServedKernels(Dispatch* d, bool* fallback_reference, std::string* why);
  // How many distinct kernels serve the configs of `d` (a library call counted once).
  int DistinctServingKernels(const Dispatch& d) const;
  // A dispatch's fallback measured on every config against the expert reference: it may serve
  // shapes outside the table only where it is correct everywhere and slower than the expert nowhere.
  bool FallbackHolds(const KernelUnderTest& kernel, std::string* why);
  // The dispatch's kernels as seal metadata; `fallback_reference`: the expert serves other shapes.
  nlohmann::json DispatchMetadata(const Dispatch& d, bool fallback_reference,
                                  std::map<std::string, int>* kernel_of_config) const;
  void KeepWinner(Best candidate);
  // The run's configs that proposal `p` serves (opts_.configs when all of them, or none).
  std::vector<std::string> SupportedConfigs(const Proposal& p) const;
  bool CoversEveryConfig(const EvalResult& r) const;
  // True when the dispatch the run's measurements assemble (per config the fastest) has a search
  // geomean above the best single winner's by at least --min-gain: it is confirmed first then.
  bool DispatchBeatsBestWinner() const;
  void FillConfigComparisons(const EvalResult& best);
  void Progress(const AttemptSummary& a);
  void FillSpendAndLineage();
  // Profiles `kernel` on `configs` (empty: the operator's every config) within `bound_s` (0: no
  // bound) and keeps what it cost (a profile cut by its bound: what it took, as a lower bound).
  bool ProfileKernel(Evaluator* evaluator, const KernelUnderTest& kernel, const std::vector<std::string>& configs,
                     double bound_s, std::vector<KernelProfile>* profiles, std::string* err);
  // The bound of a profile under --time: what is left once `reserve_s` (the work after it) is kept
  // back (at least a millisecond); 0 (unbounded) without --time.
  double ProfileBound(double reserve_s) const;
  // Profiles a new best on `evaluator` and renders what the analysis observes; "" when it cannot.
  std::string ProfileCandidate(Evaluator* evaluator, const KernelUnderTest& kernel, const std::string& hash);
  void ShowCompileFailure(const AttemptSummary& a, const CompileResult& compiled) const;
  void FillBest();
  bool CloseRun(const std::string& status, std::string* err);
  // A stage that goes on without its input: logged, and said in the summary (once per reason).
  void Degrade(const std::string& stage, const std::string& reason);
  // Seconds the end of the run is expected to take (confirming the best, profiling it, one
  // ablation), from this run's own measurements: --time holds them too.
  double EndWorkEstimate() const;
  double SecondsRun() const;
  // Seconds of --time left (infinity without --time).
  double SecondsLeft() const;
  // The mean wall time of one of this run's evaluations (what a confirmation or an ablation costs).
  double EvaluationEstimate() const;
  // Whether work expected to take `seconds` still fits in --time with the confirmation after it.
  bool FitsBeforeConfirmation(double seconds) const;

  const OperatorSpec& op_;
  const RunOptions& opts_;
  RunServices& services_;
  RunSummary* summary_;
  KnowledgeBase kb_;
  bool have_kb_ = false;
  std::vector<Candidate> families_;
  Incumbent incumbent_, expert_;
  KernelUnderTest golden_;
  std::map<std::string, double> expert_us_;  // per config, when the incumbent is a seal
  EvalResult expert_vs_incumbent_;           // the expert timed against a sealed incumbent (Begin's check, inverted)
  std::vector<KernelProfile> incumbent_profiles_;
  // The best candidates of earlier runs (same operator and shape regimes), for warm starts.
  static constexpr size_t kPriorResults = 8;
  std::vector<PriorResult> prior_results_;
  std::string incumbent_summary_;
  std::vector<IncumbentServer> incumbent_dispatch_;  // a dispatch incumbent: what serves each config
  std::string device_, driver_;
  std::string run_id_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  double evaluation_s_ = 0;          // wall seconds of this run's evaluations
  int evaluations_ = 0;
  // The slowest profile of one config seen in this run (the incumbent's, even from the store, the
  // best's, an ablation's); 0 while none was measured.
  double profile_s_per_config_ = 0;
  std::vector<AttemptSummary> history_;
  double history_best_ = 0;  // the best geomean among the attempts a resumed run restored
  std::map<std::string, int> iteration_of_;  // candidate hash -> its first attempt in this run
  static constexpr size_t kInventedFamilies = 4;
  std::vector<std::string> regimes_;  // shape regimes of the configs this run serves
  bool retrieval_logged_ = false;
  std::map<std::string, std::vector<TimedInstance>> timed_;  // family -> timed attempts of this run
  std::map<std::string, DecisionRecord> learned_;           // decision id -> state after this run's evidence
  int attempts_this_run_ = 0;
  int since_best_ = 0;
  bool have_best_ = false;
  Best best_;
  // Every correct, timed candidate that is the fastest measured on some config (or the fallback):
  // the members a dispatch can be assembled from.
  std::vector<Best> measured_;
  // Per config, what this run's seal runs: one shared copy per kernel, so that configs served by
  // the same kernel are evaluated in one request.
  std::map<std::string, std::shared_ptr<const KernelUnderTest>> sealed_kernels_;
  std::vector<Best> winners_;  // the best `faster` candidates, best first, at most opts_.confirm
};

}  // namespace forgek
