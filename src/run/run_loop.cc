// The run loop: analyse the incumbent, then propose / compile / evaluate / learn until a budget
// ends, then seal the best candidate if it beats the incumbent on every config.
#include <spdlog/spdlog.h>

#include <chrono>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "forgek/run/run.h"
#include "run_state.h"

namespace forgek {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Why the run stops now, or none. A run whose --time went into analysing the incumbent still makes
// its first attempts: a run of no attempt would report nothing about the operator at all.
StopReason StopNow(const RunState& state, Clock::time_point start) {
  StopReason stop = state.BudgetSpent(Seconds(start));
  if (stop == StopReason::time && state.AttemptsMade() == 0) return StopReason::none;
  return stop;
}

// Evaluates a batch: with one evaluator in order; with several, each GPU takes the next compiled
// proposal as soon as it is free, and results are committed one at a time as they finish.
bool EvaluateBatch(const std::vector<Proposal>& proposals, std::vector<std::future<CompileResult>>& compiles,
                   RunState& state, RunServices& services, Clock::time_point start, std::string* err) {
  std::vector<Evaluator*> pool;
  if (services.evaluator) pool.push_back(services.evaluator);
  for (Evaluator* e : services.more_evaluators) pool.push_back(e);
  auto stop = [&] {
    return StopNow(state, start) != StopReason::none || (services.stop_requested && services.stop_requested());
  };
  if (pool.size() <= 1) {
    for (size_t i = 0; i < proposals.size(); ++i) {
      CompileResult compiled = compiles[i].get();
      if (stop()) break;
      if (!state.Attempt(proposals[i], compiled, err)) return false;
    }
    return true;
  }
  std::mutex mu;  // guards `state`, `next`, `failed` and `first_error`
  size_t next = 0;
  bool failed = false;
  std::string first_error;
  auto gpu_loop = [&](Evaluator* evaluator) {
    while (true) {
      size_t i;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (failed || next >= proposals.size() || stop()) return;
        i = next++;
      }
      // An exception must not escape a thread (that ends the process): it fails the batch.
      try {
        CompileResult compiled = compiles[i].get();
        RunState::Evaluated e = state.EvaluateProposal(proposals[i], compiled, evaluator);
        std::lock_guard<std::mutex> lock(mu);
        std::string commit_err;
        if (!failed && !state.Commit(e, &commit_err)) {
          failed = true;
          first_error = commit_err;
        }
      } catch (const std::exception& ex) {
        std::lock_guard<std::mutex> lock(mu);
        if (!failed) first_error = std::string("internal error: ") + ex.what();
        failed = true;
      }
    }
  };
  std::vector<std::thread> threads;
  for (Evaluator* e : pool) threads.emplace_back(gpu_loop, e);
  for (std::thread& t : threads) t.join();
  // Futures of proposals never taken (budget spent) are drained so no compile outlives the batch.
  for (size_t i = next; i < compiles.size(); ++i) compiles[i].wait();
  if (failed) *err = first_error;
  return !failed;
}

// The loop proper: proposals come in batches; each batch compiles on the pool while the GPU
// evaluates the batch's earlier members. False with *err when the run cannot go on.
bool Loop(const RunOptions& opts, RunServices& services, RunState& state, RunSummary* summary,
          Clock::time_point start, std::string* err) {
  while (true) {
    StopReason stop = StopNow(state, start);
    if (stop != StopReason::none) {
      summary->stop_reason = stop;
      return true;
    }
    ProposalContext ctx = state.Context();
    ctx.max_candidates = std::max(1, std::min(opts.batch, state.AttemptsLeft()));
    std::vector<Proposal> proposals;
    std::string agent_err;
    if (!services.agent->Propose(ctx, &proposals, &agent_err)) {
      // An agent cut short by the run's own end (its --time budget, Ctrl-C) did not fail.
      StopReason budget = state.BudgetSpent(Seconds(start));
      if (budget != StopReason::none) {
        spdlog::info("agent {} stopped by the run's end ({}): {}", services.agent->Name(), StopReasonName(budget),
                     agent_err);
        summary->stop_reason = budget;
        return true;
      }
      // The agent's own budget (--max-cost, --max-tokens) ends the run like --time: not a failure.
      StopReason agent_budget = services.agent->BudgetSpent();
      if (agent_budget != StopReason::none) {
        spdlog::info("agent {} stopped by its budget ({}): {}", services.agent->Name(), StopReasonName(agent_budget),
                     agent_err);
        summary->stop_reason = agent_budget;
        return true;
      }
      spdlog::error("agent {} stopped the run: {}", services.agent->Name(), agent_err);
      summary->stop_reason = StopReason::agent_failed;
      summary->stop_detail = agent_err;
      return true;
    }
    if (proposals.empty()) {
      // Nothing new to offer (a search space exhausted, a model that only repeats itself): the
      // run ends with what it found, which is not a failure.
      spdlog::info("agent {} has nothing new to offer: the run ends with what it found", services.agent->Name());
      summary->stop_reason = StopReason::exhausted;
      return true;
    }
    std::vector<std::future<CompileResult>> compiles;
    for (const Proposal& p : proposals)
      compiles.push_back(services.compiler->Submit(CandidateCompileRequest(p.candidate, p.params, opts.arch)));
    if (!EvaluateBatch(proposals, compiles, state, services, start, err)) return false;
  }
}

}  // namespace

bool RunOptimisation(const OperatorSpec& op, const RunOptions& opts, RunServices& services, RunSummary* summary,
                     std::string* err) {
  if (!services.agent || !services.compiler) {
    *err = "run: an agent and a compiler are required";
    return false;
  }
  if (!opts.compile_only && !services.evaluator) {
    *err = "run: no GPU evaluator (use --compile-only to run without a GPU)";
    return false;
  }
  RunState state(op, opts, services, summary);
  Clock::time_point start = Clock::now();
  if (services.budget_ends) {
    services.budget_ends(opts.time_s > 0 ? std::optional<Clock::time_point>(
                                               start + std::chrono::duration_cast<Clock::duration>(
                                                           std::chrono::duration<double>(opts.time_s)))
                                         : std::nullopt);
  }
  bool ok = false;
  try {
    if (state.Begin(err)) {
      const Clock::time_point search_start = Clock::now();
      ok = Loop(opts, services, state, summary, start, err);
      state.AddStage("search", Seconds(search_start));
    }
  } catch (const std::exception& e) {
    *err = std::string("internal error: ") + e.what();
  }
  summary->wall_s = Seconds(start);
  summary->candidates_per_minute = summary->wall_s > 0 ? summary->attempts / (summary->wall_s / 60.0) : 0;
  if (ok) {
    if (services.stop_requested && services.stop_requested()) summary->stop_reason = StopReason::interrupted;
    try {
      if (state.Finish(err)) return true;
    } catch (const std::exception& e) {
      *err = std::string("internal error: ") + e.what();
    }
  }
  // Whatever ended the run, its record says so: never left `running`.
  std::string reason = *err;
  if (summary->run_id.empty()) return false;
  std::string close_err;
  try {
    if (!state.Fail(reason, &close_err)) *err = reason + "; " + close_err;
  } catch (const std::exception& e) {
    *err = reason + "; the run could not be recorded as failed: " + e.what();
  }
  return false;
}

}  // namespace forgek
