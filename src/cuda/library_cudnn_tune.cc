// Autotuning of cuDNN graph execution plans: heuristics (mode A, then fallback), finalize, time, keep the fastest.
#include <cuda_runtime_api.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "library_cudnn_graph.h"

namespace forgek::cudnn_graph {
namespace {

// Winning config tags by key, for this process: the worker prepares one instance per input copy,
// and finalizing (some engines compile at run time) and timing once is enough.
std::mutex g_winners_mu;
std::map<std::string, std::string> g_winners;

using Configs = std::vector<std::unique_ptr<Desc>>;

// Appends the engine configs the heuristics in `mode` offer for `graph`.
bool Heuristics(cudnnBackendDescriptor_t graph, cudnnBackendHeurMode_t mode, const std::string& what, Configs* out,
                std::string* err) {
  Desc heur;
  int64_t count = 0;
  if (!heur.Create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, what, err) ||
      !heur.SetDesc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph, what, err) ||
      !heur.Set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, what, err) || !heur.Finalize(what, err) ||
      !Ok(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                   nullptr),
          what + ": count results", err))
    return false;
  Configs configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    configs.push_back(std::make_unique<Desc>());
    if (!configs.back()->Create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, what, err)) return false;
    raw.push_back(configs.back()->get());
  }
  int64_t got = 0;
  if (count > 0 && !Ok(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, raw.data()),
                       what + ": read results", err))
    return false;
  for (int64_t i = 0; i < std::min(got, count); ++i) out->push_back(std::move(configs[size_t(i)]));
  return true;
}

// "eng<global index>_k<knob>=<value>...", as cudnn-frontend tags plans; empty if it cannot be read.
std::string Tag(cudnnBackendDescriptor_t config) {
  std::string ignored;
  Desc engine;
  cudnnBackendDescriptor_t raw_engine = nullptr;
  int64_t n = 0, index = -1;
  if (!engine.Create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine", &ignored)) return "";
  raw_engine = engine.get();
  if (cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                               &raw_engine) != CUDNN_STATUS_SUCCESS ||
      cudnnBackendGetAttribute(raw_engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &index) !=
          CUDNN_STATUS_SUCCESS)
    return "";
  std::string tag = "eng" + std::to_string(index);
  std::vector<Desc> knobs(CUDNN_KNOB_TYPE_COUNTS);
  std::vector<cudnnBackendDescriptor_t> raw;
  for (Desc& k : knobs) {
    if (!k.Create(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, "knob", &ignored)) return tag;
    raw.push_back(k.get());
  }
  if (cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                               int64_t(raw.size()), &n, raw.data()) != CUDNN_STATUS_SUCCESS)
    return tag;
  for (int64_t i = 0; i < std::min<int64_t>(n, int64_t(raw.size())); ++i) {
    cudnnBackendKnobType_t type = CUDNN_KNOB_TYPE_COUNTS;
    int64_t value = 0, m = 0;
    if (cudnnBackendGetAttribute(raw[size_t(i)], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &m,
                                 &type) == CUDNN_STATUS_SUCCESS &&
        cudnnBackendGetAttribute(raw[size_t(i)], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &m,
                                 &value) == CUDNN_STATUS_SUCCESS)
      tag += "_k" + std::to_string(int(type)) + "=" + std::to_string(value);
  }
  return tag;
}

// A finalized plan for `config` and its workspace size; nullptr and `err` when the engine rejects it.
std::unique_ptr<Desc> MakePlan(cudnnHandle_t handle, cudnnBackendDescriptor_t config, const std::string& what,
                               int64_t* workspace, std::string* err) {
  auto plan = std::make_unique<Desc>();
  int64_t n = 0;
  if (!plan->Create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, what, err) ||
      !plan->Set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, what, err) ||
      !plan->SetDesc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config, what, err) || !plan->Finalize(what, err) ||
      !Ok(cudnnBackendGetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                                   workspace),
          what + ": workspace size", err))
    return nullptr;
  return plan;
}

// Median of `runs` timed executions after one warm-up; false when the plan fails to run.
bool TimePlan(cudnnHandle_t handle, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t pack, int runs,
              double* us, std::string* err) {
  cudaStream_t stream = nullptr;
  if (!Ok(cudnnGetStream(handle, &stream), "cudnnGetStream", err)) return false;
  return MedianEventTimeUs(
      stream, 1, runs, [&] { return Ok(cudnnBackendExecute(handle, plan, pack), "cudnnBackendExecute", err); }, us,
      err);
}

struct Candidate {
  std::unique_ptr<Desc> plan;
  int64_t workspace = 0;
  std::string tag;
  double us = -1;
};

}  // namespace

bool TunedPlan::BindWorkspace(size_t bytes, const std::vector<int64_t>& uids, const std::vector<void*>& pointers,
                              const std::string& label, std::string* err) {
  const std::string what = label + ": variant pack";
  if (!workspace_.Reserve(bytes, err)) return false;
  void* ws = workspace_.get();
  return variant_pack_.Create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, what, err) &&
         variant_pack_.Set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, int64_t(uids.size()), uids.data(),
                           what, err) &&
         variant_pack_.Set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, int64_t(pointers.size()),
                           pointers.data(), what, err) &&
         variant_pack_.Set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws, what, err) &&
         variant_pack_.Finalize(what, err);
}

bool TunedPlan::Tune(const std::string& label, const std::string& key, cudnnHandle_t handle,
                     cudnnBackendDescriptor_t graph, const std::vector<int64_t>& uids,
                     const std::vector<void*>& pointers, const TuneOptions& options, std::string* err) {
  // Heuristics mode A first, as PyTorch; the fallback list adds engines mode A leaves out. Either
  // may decline a graph, which is only an error when both do.
  Configs configs;
  std::string why_a, why_fallback;
  Heuristics(graph, CUDNN_HEUR_MODE_A, label + ": heuristics (mode A)", &configs, &why_a);
  const size_t from_a = configs.size();
  Heuristics(graph, CUDNN_HEUR_MODE_FALLBACK, label + ": heuristics (fallback)", &configs, &why_fallback);
  if (configs.empty()) {
    *err = label + ": the heuristics offer no engine config for this graph (mode A: " +
           (why_a.empty() ? "none" : why_a) + "; fallback: " + (why_fallback.empty() ? "none" : why_fallback) + ")";
    return false;
  }
  std::vector<std::string> tags;
  for (const auto& c : configs) tags.push_back(Tag(c->get()));

  std::string winner;
  {
    std::lock_guard<std::mutex> lock(g_winners_mu);
    auto it = g_winners.find(key);
    if (it != g_winners.end()) winner = it->second;
  }
  for (size_t i = 0; !winner.empty() && i < configs.size(); ++i) {
    if (tags[i] != winner) continue;
    int64_t ws = 0;
    std::string why;
    auto plan = MakePlan(handle, configs[i]->get(), label + ": plan " + tags[i], &ws, &why);
    if (!plan) break;  // tune afresh below
    plan_ = std::move(plan);
    choice_ = winner + " (timed earlier in this process)";
    return BindWorkspace(size_t(ws), uids, pointers, label, err);
  }

  // Finalize configs in heuristics order until max_timed succeed; the fallback list repeats some
  // of mode A's configs, which are tried once.
  std::vector<Candidate> candidates;
  std::vector<std::string> seen;
  std::string first_failure;
  int tried = 0;
  for (size_t i = 0; i < configs.size() && int(candidates.size()) < options.max_timed; ++i) {
    if (!tags[i].empty() && std::find(seen.begin(), seen.end(), tags[i]) != seen.end()) continue;
    seen.push_back(tags[i]);
    ++tried;
    Candidate c;
    c.tag = tags[i].empty() ? "config#" + std::to_string(i) : tags[i];
    std::string why;
    c.plan = MakePlan(handle, configs[i]->get(), label + ": plan " + c.tag, &c.workspace, &why);
    if (!c.plan) {
      if (first_failure.empty()) first_failure = why;
      continue;
    }
    if (size_t(c.workspace) > options.max_workspace) continue;
    candidates.push_back(std::move(c));
  }
  if (candidates.empty()) {
    *err = label + ": none of " + std::to_string(tried) + " engine configs finalized (" + std::to_string(from_a) +
           " from heuristics mode A, " + std::to_string(configs.size() - from_a) +
           " from the fallback list); first failure: " +
           (first_failure.empty() ? "workspace too large" : first_failure);
    return false;
  }
  int64_t max_ws = 0;
  for (const Candidate& c : candidates) max_ws = std::max(max_ws, c.workspace);
  if (!BindWorkspace(size_t(max_ws), uids, pointers, label, err)) return false;

  int best = -1;
  std::string first_run_failure, timings;
  for (size_t i = 0; i < candidates.size(); ++i) {
    Candidate& c = candidates[i];
    std::string why;
    if (!TimePlan(handle, c.plan->get(), variant_pack_.get(), options.timed_runs, &c.us, &why)) {
      if (first_run_failure.empty()) first_run_failure = c.tag + ": " + why;
      timings += " " + c.tag + "=failed";
      continue;
    }
    timings += fmt::format(" {}={:.1f}us", c.tag, c.us);
    if (best < 0 || c.us < candidates[size_t(best)].us) best = int(i);
  }
  if (best < 0) {
    *err = label + ": every finalized engine config failed to run; first: " + first_run_failure;
    return false;
  }
  Candidate& won = candidates[size_t(best)];
  plan_ = std::move(won.plan);
  choice_ = fmt::format("{} ({:.1f} us, fastest of {} timed)", won.tag, won.us, candidates.size());
  spdlog::info("{}: cuDNN {} chose {}; timed:{}", label, cudnnGetVersion(), choice_, timings);
  std::lock_guard<std::mutex> lock(g_winners_mu);
  g_winners[key] = won.tag;
  return true;
}

bool TunedPlan::Execute(cudnnHandle_t handle, std::string* err) const {
  if (!plan_) {
    if (err) *err = "cudnnBackendExecute: no plan (Prepare did not succeed)";
    return false;
  }
  return Ok(cudnnBackendExecute(handle, plan_->get(), variant_pack_.get()), "cudnnBackendExecute", err);
}

}  // namespace forgek::cudnn_graph
