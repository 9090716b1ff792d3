// Knowledge: seed data (mechanism catalogue, hardware specs), analysis of kernels into observations,
// distillation of observations and attempts into decisions, and retrieval for agents.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "forgek/core/candidate.h"
#include "forgek/core/decision.h"
#include "forgek/core/diagnostic.h"
#include "forgek/core/evaluation.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/peaks.h"
#include "forgek/core/profile.h"
#include "forgek/knowledge/store.h"
#include "forgek/verdict/verdict.h"

namespace forgek {

// ---- Seed knowledge (knowledge/mechanisms/*.json, knowledge/hardware/*.json) ----

// One hardware mechanism of the catalogue.
struct Mechanism {
  std::string id;                          // "wgmma"
  std::string name;                        // "Warpgroup MMA (wgmma.mma_async)"
  std::vector<std::string> archs;          // sm90, sm100
  std::string unit;                        // hardware unit: "tensor core", "TMA engine", ...
  std::string what;                        // what it does
  std::string helps, hurts;                // when
  std::vector<std::string> sass_opcodes;   // opcode prefixes that reveal it ("HGMMA", "UTMALDG")
  std::vector<std::string> metrics;        // metrics that show it working
  std::vector<std::string> launch_signs;   // launch-shape hints ("block multiple of 128", ...)
  std::vector<std::string> name_fields;    // kernel-name fields that reveal it ("coop", "ws", ...)
  std::string llm_words;                   // how to say it to an LLM
  std::string json;                        // the whole entry
};

// Datasheet specs of one GPU; peaks are overridden by calibration (devices table).
struct HardwareSpec {
  std::string name;                        // "NVIDIA H200"
  std::string arch;                        // sm90
  int sm_count = 0;
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
  int64_t smem_per_block_bytes = 0;        // max opt-in dynamic smem per block
  DevicePeaks peaks;                       // the "peaks" object of the datasheet
  bool calibrated = false;                 // peaks come from the store's calibrated device
};

struct KnowledgeBase {
  std::string dir;                         // the knowledge/ folder it was loaded from
  std::vector<Mechanism> mechanisms;
  std::vector<HardwareSpec> hardware;
  const Mechanism* FindMechanism(const std::string& id) const;
};

// Loads knowledge/mechanisms/*.json and knowledge/hardware/*.json from `dir`; every problem
// found goes to `diags` with its file and field.
bool LoadKnowledgeBase(const std::string& dir, KnowledgeBase* out, Diagnostics* diags);
// The shipped knowledge/ folder ($FORGEK_KNOWLEDGE, ./knowledge, beside the binary, the source tree).
std::string KnowledgeDir();

// The peaks to use for (arch, device name): the store's calibrated device when it has one, else
// the datasheet whose name matches `device` (case-insensitive substring), else the first
// datasheet of that arch (sm90 -> H100 unless the name says H200). False when none is known.
bool ResolveHardware(Store* store, const KnowledgeBase& kb, const std::string& arch, const std::string& device,
                     HardwareSpec* out, std::string* err);

// ---- Analysis ----

// Fields decoded from a library kernel's name (cuBLAS nvjet, sm90_xmma, CUTLASS 3.x).
struct KernelNameFields {
  bool decoded = false;
  std::string library;        // nvjet | xmma | cutlass
  std::string arch;           // "sm90"
  int tile_m = 0, tile_n = 0, tile_k = 0;   // CTA tile; tile_k is the k-step per stage
  int stages = 0;             // smem pipeline depth, 0 when the name does not say
  int cluster_m = 0, cluster_n = 0, cluster_k = 0;  // 0 when the name does not say
  std::string schedule;       // cooperative | pingpong | warpspecialized | ""
  bool warp_specialized = false;
  bool tma = false;           // the name says TMA loads/epilogue
  std::string dtype;          // "bf16", "h" (half), "f16_f16_f32", ...
  std::string layout;         // "NNT", "tnn", ...
  std::vector<std::pair<std::string, std::string>> fields;  // every decoded field -> its meaning
};
bool DecodeKernelName(const std::string& name, KernelNameFields* out);

// Instruction classes in disassembly (cuobjdump -sass / nvdisasm text): class -> count.
// Classes: HGMMA, UTMALDG, UTMASTG, UTMAPF, SYNCS, LDGSTS, LDSM, HMMA, LDG.128, STG.128, LDG, STG,
// LDS, STS, SHFL, BAR, MEMBAR, WARPSYNC, UTCMMA, LDTM, STTM, ATOM, RED, FFMA, ... (see sass_classifier.cc)
std::map<std::string, int> ClassifySass(const std::string& sass);
// Disassembles a cubin with the toolkit's cuobjdump/nvdisasm when present; false with err when not.
bool DisassembleCubin(const std::string& cubin, std::string* sass, std::string* err);
// Puts the SASS of `kernel` into each of its profiles when it is a cubin of ours and cuobjdump is
// there; library calls and a missing disassembler leave the profiles as they are.
void AttachSass(const KernelUnderTest& kernel, std::vector<KernelProfile>* profiles);

// Turns one profile into observations (launch shape, name fields, metrics, SASS classes,
// roofline). `hw` may be null (no roofline then). Observations carry operator/arch/subject/config.
// `flops_peak` names the peak the FLOPs are measured against ("bf16_tflops", "fp8_tflops", ...).
std::vector<Observation> AnalyzeKernel(const KernelProfile& profile, const std::string& operator_name,
                                       const std::string& arch, const HardwareSpec* hw, const KnowledgeBase& kb,
                                       const std::string& flops_peak = "bf16_tflops");

// The shape regime of a config: gemm-like categories (gemm, conv, attention, moe): "skinny"
// (min(M,N) <= 256), "small" (fewer FLOPs than a 2048^3 GEMM), "large"; other categories: "small"
// (< 32 MiB moved), "large". "any" when the config or its formulas are unknown.
std::string ShapeRegime(const OperatorSpec& op, const std::string& config);

// ---- Distillation ----

// Observations of a reference become mechanism hypotheses: (scope, evidence) pairs.
struct Hypothesis {
  DecisionScope scope;
  EvidenceRecord evidence;
};
std::vector<Hypothesis> HypothesesFromObservations(const std::vector<Observation>& obs, const std::string& category,
                                                   const std::string& regime, const std::string& device);

// THE entry point for a profiled kernel: analyses `profile` (its label is the subject, its config
// the config), stores the operator, profile, observations and hypotheses for (op, arch) in one
// transaction. `observations` (optional) receives what was observed.
bool AnalyzeAndRecord(Store& store, const OperatorSpec& op, const std::string& arch, const KernelProfile& profile,
                      std::vector<Observation>* observations, std::string* err);
// AnalyzeKernel with the peaks of (arch, device) (ResolveHardware; `store` may be null) and the
// operator's FLOPs peak; records nothing (a candidate's profile, shown to an agent).
std::vector<Observation> AnalyzeProfile(Store* store, const KnowledgeBase& kb, const OperatorSpec& op,
                                        const std::string& arch, const std::string& device,
                                        const KernelProfile& profile);
// The same with an explicit knowledge base and device name (for the roofline peaks).
bool AnalyzeAndRecord(Store& store, const KnowledgeBase& kb, const OperatorSpec& op, const std::string& arch,
                      const std::string& device, const KernelProfile& profile,
                      std::vector<Observation>* observations, std::string* err);

// ---- Controlled comparisons ----
// Evidence that a setting of a mechanism helps comes only from two timings that differ in nothing
// but the params that control it (the family's "controls"); see docs/KNOWLEDGE.md.

// A named setting of a control group under `params`: "stages=4", "bm=128,bn=256" (lower-case names,
// manifest order). Empty when a param of the group is missing.
std::string NamedSetting(const ControlSpec& control, const ParamAssignment& params);
// The control group in which `a` and `b` differ when they differ in at least one param and only in
// params of that one group; null otherwise (then the pair isolates nothing).
const ControlSpec* ControlledDifference(const CandidateManifest& family, const ParamAssignment& a,
                                        const ParamAssignment& b);

// One timed instance of a family: its params and per-config results against the run's incumbent.
struct TimedInstance {
  std::string attempt_id;     // "" for an ablation variant
  std::string candidate_hash;
  ParamAssignment params;
  std::vector<ConfigResult> configs;
};

// One config of a comparison: the two times (from one interleaved evaluation for an ablation, from
// two evaluations against the same incumbent for a search pair) and the speedup with its noise.
struct ComparedConfig {
  std::string config;
  double setting_us = 0, against_us = 0;
  double speedup = 0;  // > 1: the setting is faster (for a search pair: the ratio of the two speedups
                       // over the incumbent, so that drift between the evaluations cancels)
  double noise = 0;
};

// Setting `setting` of `mechanism` against `against`, over the configs of one shape regime.
struct SettingComparison {
  std::string kind;           // comparison (two search attempts) | ablation (interleaved in one worker)
  std::string mechanism;
  std::string setting, against;                    // "stages=4", "stages=2"
  ParamAssignment setting_params, against_params;  // the controlling params only
  std::string regime;
  double speedup = 0;         // time with `against` / time with `setting` (geomean over the configs)
  double noise = 0;           // propagated relative noise of that speedup
  std::vector<ComparedConfig> configs;
  std::vector<std::string> attempts;    // attempt ids (setting side first) where recorded
  std::map<std::string, double> metric_deltas;  // metric: setting minus against (when both were profiled)
  // The same comparison seen from the other side (speedup inverted).
  SettingComparison Reversed() const;
};

// Two search attempts of one family, each timed against the same incumbent: per regime, `a`'s
// setting against `b`'s (the incumbent cancels out of the ratio; noises add). Empty when the pair
// is not controlled or shares no timed config.
std::vector<SettingComparison> CompareSearchPair(const OperatorSpec& op, const CandidateManifest& family,
                                                 const TimedInstance& a, const TimedInstance& b);
// An ablation: `variant` evaluated with `base` as its incumbent, interleaved in one worker. Per
// regime, the base's setting against the variant's. Empty when not controlled or not timed.
std::vector<SettingComparison> CompareAblation(const OperatorSpec& op, const CandidateManifest& family,
                                               const ParamAssignment& base, const ParamAssignment& variant,
                                               const EvalResult& result);

// Where a comparison was measured.
struct ComparisonOrigin {
  const OperatorSpec* op = nullptr;
  std::string arch, device, run_id;
};
// Records a comparison as evidence on both settings' decisions (the faster side supports its
// setting, the slower side contradicts its own) in one transaction; `updated` receives both.
bool RecordComparison(Store& store, const ComparisonOrigin& origin, const SettingComparison& c,
                      std::vector<DecisionRecord>* updated, std::string* err);

// Each mechanism a candidate claims, checked against its SASS instruction classes: an observation
// "claim <mechanism> = verified|unverified" for those whose catalogue entry names sass_opcodes
// (others cannot be checked from SASS and get none). Subject "candidate:<hash>".
std::vector<Observation> CheckClaimedMechanisms(const std::vector<std::string>& claimed,
                                                const std::map<std::string, int>& sass_classes,
                                                const KnowledgeBase& kb, const std::string& operator_name,
                                                const std::string& arch, const std::string& subject);

// The derived state of a decision from its evidence (used by the store; exposed for tests).
void DeriveDecision(const std::vector<EvidenceRecord>& evidence, DecisionRecord* d);

// ---- Retrieval ----

// What a run asks for: its operator, category and arch, and the shape regimes of its configs.
struct RetrievalScope {
  std::string arch, category, operator_name;
  std::vector<std::string> regimes;   // empty: every regime
};
// Decisions that apply to `scope`, ranked: learned on the same operator, then on the same category,
// then on the same arch (the latter two marked transferred, with their basis); within each, validated
// before hypothesis before refuted, then by confidence. Regimes match the run's own and "any".
bool RetrieveDecisions(Store& store, const RetrievalScope& scope, int limit, std::vector<RetrievedDecision>* out,
                       std::string* err);
// One line per basis used, for a log: "4 from gemm_bf16 itself, 2 transferred from category gemm".
std::string DescribeRetrieval(const std::vector<RetrievedDecision>& decisions);
// Prompt text: what to prefer, what to avoid, with the catalogue's words for each mechanism.
std::string RenderDecisionsPrompt(const std::vector<RetrievedDecision>& decisions, const KnowledgeBase& kb);
// Observations rendered as short text lines (the incumbent summary of a proposal context).
std::string RenderObservations(const std::vector<Observation>& obs);

}  // namespace forgek
